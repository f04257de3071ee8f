package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestHumanScaleAgreesAcrossErrors: the position table, the ensemble
// decomposition and the samples' differences put human ratings on the
// judge's scale the same way, and say which. Ratings within the
// criterion's 1 to 3 are taken as given (before, the position table and
// the differences stretched their lowest and highest values onto 1 to 3,
// so one extreme rating moved every error); ratings outside it are mapped
// from their lowest and highest values, for the decomposition too
// (before, it subtracted them raw). Expected figures worked out by hand
// from fixture's scores (a: 1.0, 1.4 at position 1; b: 1.5 at 2; c: 2.5
// at 1, then 2.9 at 2; d: none):
//
//	as given, a..d = 1.5, 2, 2.5, 3: position 1 errors -0.5, -0.1, 0;
//	position 2 -0.5, +0.4; per sample (ensemble, round error, variance)
//	a (0.09, 0.13, 0.04), b (0.25, 0.25, 0), c (0.04, 0.08, 0.04)
//	mapped, 0 1 3 4 -> 1, 1.5, 2.5, 3: position 1 errors 0, +0.4, 0;
//	position 2 0, +0.4; a (0.04, 0.08, 0.04), b (0, 0, 0), c as above
//
// A criterion judged on a scale of the method's own (LLM-Eval's 0 to 5)
// records the rubric's range, which is the humans' scale: their ratings
// are mapped exactly from it, whatever the observed extremes. On the
// rubric's 1 to 3 -> 0 to 5, h -> 2.5*(h-1): 1.4, 1.6, 2, 3 -> 1, 1.5,
// 2.5, 5, so a..c get the errors of the mapped case above (d has no
// score). The old code took 1.4..3 as given (inside 0 to 5): differences
// 0.2, 0.1, 0.7. Ratings outside the rubric's range are not on it: they
// are mapped from their lowest and highest values, 0.5..3.5 onto 0..5,
// h -> (h-0.5)*5/3: 0.5, 1, 3, 3.5 -> 0, 5/6, 25/6, 5. Position 1 errors
// +1, -5/3, +1.4 (mean |e| 12.2/9, signed 2.2/9); position 2 +2/3, -7.6/6
// (11.6/12, -0.3); a (1.44, 1.48, 0.04), b (4/9, 4/9, 0), c (484/225,
// 157.76/72, 0.04); differences 1.2, 2/3, 8.8/6. The old code took them
// as given (inside 0 to 5).
func TestHumanScaleAgreesAcrossErrors(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		lo, hi                float64 // the judge's scale; 0, 0 the fixture's 1 to 3
		rubric                *evaluator.Scale
		humans                [4]float64
		note                  string
		pos1Abs, pos1Signed   float64
		pos2Abs, pos2Signed   float64
		ensemble, round, vari float64
		diffs                 [3]float64 // |final - human| of a, b, c
		scale                 HumanScale // the span mapped from, as a chart draws it
	}{
		{"within the judge's range: as given", 0, 0, nil, [4]float64{1.5, 2, 2.5, 3}, "compare the human ratings as given",
			0.6 / 3, -0.6 / 3, 0.9 / 2, -0.1 / 2, 0.38 / 3, 0.46 / 3, 0.08 / 3, [3]float64{0.3, 0.5, 0.2}, HumanScale{}},
		{"outside it: mapped from the lowest and highest", 0, 0, nil, [4]float64{0, 1, 3, 4}, "mapped linearly from their lowest and highest values onto it (0 becomes 1, 4 becomes 3)",
			0.4 / 3, 0.4 / 3, 0.4 / 2, 0.4 / 2, 0.08 / 3, 0.16 / 3, 0.08 / 3, [3]float64{0.2, 0, 0.2}, HumanScale{true, 0, 4, "the ratings' 0 to 4"}},
		{"judged on 0 to 5: the rubric's 1 to 3 mapped onto it", 0, 5, &evaluator.Scale{Lo: 1, Hi: 3}, [4]float64{1.4, 1.6, 2, 3},
			"human ratings on the rubric's 1 to 3 mapped linearly onto the judge's 0 to 5 (1 becomes 0, 3 becomes 5)",
			0.4 / 3, 0.4 / 3, 0.4 / 2, 0.4 / 2, 0.08 / 3, 0.16 / 3, 0.08 / 3, [3]float64{0.2, 0, 0.2}, HumanScale{true, 1, 3, "the rubric's 1 to 3"}},
		{"judged on 0 to 5, ratings outside the rubric's 1 to 3: mapped from the lowest and highest", 0, 5, &evaluator.Scale{Lo: 1, Hi: 3}, [4]float64{0.5, 1, 3, 3.5},
			"lie outside the rubric's 1 to 3, so for the errors they are mapped linearly from their lowest and highest values onto the judge's 0 to 5 (0.5 becomes 0, 3.5 becomes 5)",
			12.2 / 9, 2.2 / 9, 11.6 / 12, -0.3, (1.44 + 4.0/9 + 484.0/225) / 3, (1.48 + 4.0/9 + 157.76/72) / 3, 0.08 / 3, [3]float64{1.2, 2.0 / 3, 8.8 / 6}, HumanScale{true, 0.5, 3.5, "the ratings' 0.5 to 3.5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, ds, rows, batches, scores := fixture()
			if tc.hi != 0 {
				c := &run.RubricSnapshot.Criteria[0]
				c.Lo, c.Hi, c.RubricScale = tc.lo, tc.hi, tc.rubric
			}
			for i := range rows {
				rows[i].Ratings["h"] = f(tc.humans[i])
			}
			r := Compute(run, ds, rows, batches, scores)
			c := r.Criteria[0]
			near := func(what string, got, want float64) {
				t.Helper()
				if math.Abs(got-want) > 1e-12 {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			if len(c.Positions) != 2 {
				t.Fatalf("positions %+v, want 2", c.Positions)
			}
			near("position 1 mean |error|", c.Positions[0].MeanAbsErr, tc.pos1Abs)
			near("position 1 mean signed error", c.Positions[0].MeanSignedErr, tc.pos1Signed)
			near("position 2 mean |error|", c.Positions[1].MeanAbsErr, tc.pos2Abs)
			near("position 2 mean signed error", c.Positions[1].MeanSignedErr, tc.pos2Signed)
			near("ensemble error", c.Decomposition.EnsembleErr, tc.ensemble)
			near("mean round error", c.Decomposition.MeanRoundErr, tc.round)
			near("mean variance", c.Decomposition.MeanVariance, tc.vari)
			for i, want := range tc.diffs {
				if d := c.Samples[i].AbsDiff; d == nil {
					t.Errorf("sample %d: no difference", i)
				} else {
					near("difference of "+c.Samples[i].ExternalID, *d, want)
				}
			}
			if !strings.Contains(c.HumanScaleNote, tc.note) {
				t.Errorf("human scale note %q lacks %q", c.HumanScaleNote, tc.note)
			}
			if c.HumanScale != tc.scale {
				t.Errorf("human scale %+v, want %+v (the note: %s)", c.HumanScale, tc.scale, c.HumanScaleNote)
			}
			if !strings.Contains(c.DecompositionNote, c.HumanScaleNote) {
				t.Errorf("decomposition note %q does not say how the ratings were put on the scale (%q)", c.DecompositionNote, c.HumanScaleNote)
			}
			_, doc := exportJSON(t, r)
			crit := doc.(map[string]any)["report"].(map[string]any)["criteria"].([]any)[0].(map[string]any)
			if got := crit["human_scale_note"]; got != c.HumanScaleNote {
				t.Errorf("JSON human_scale_note = %v, want %q", got, c.HumanScaleNote)
			}
		})
	}
}

// TestOldLLMEvalRunMapsFromItsRubricVersion: an LLM-Eval run stored before
// it recorded the rubric's range (no RubricScale; its snapshot says 0 to 5)
// maps the human ratings from the range of the rubric version it records,
// 1 to 3, onto 0 to 5 (h -> 2.5*(h-1)), and says so; the stored summary
// says the same. Humans 1.4, 1.6, 2, 3 -> 1, 1.5, 2.5, 5; judge 2, 1,
// 2.5, 4: differences 1, 0.5, 0, 1. The old code took the ratings as given
// (inside 0 to 5): 0.6, 0.6, 0.5, 1.
func TestOldLLMEvalRunMapsFromItsRubricVersion(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		must(t, err)
		p := models.Project{WorkspaceID: ws.ID, Name: "P"}
		must(t, db.CreateProject(ctx, &p))
		rub := models.Rubric{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "R", Task: "t",
			Criteria: []evaluator.Criterion{{Name: "Q", Description: "quality", Lo: 1, Hi: 3, HumanColumn: "h"}}}
		must(t, db.SaveRubric(ctx, &rub))
		humans := []float64{1.4, 1.6, 2, 3}
		judge := []float64{2, 1, 2.5, 4}
		ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "D", Columns: []string{"text", "h"},
			Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"h"}}
		var rows []models.DatasetRow
		for i, h := range humans {
			rows = append(rows, models.DatasetRow{Position: i + 1, ExternalID: string(rune('a' + i)),
				Data: map[string]string{"text": "t"}, Ratings: map[string]*float64{"h": f(h)}})
		}
		must(t, db.CreateDataset(ctx, &ds, rows))
		rows, err = db.ListDatasetRows(ctx, ds.ID, 0, 0)
		must(t, err)
		now := time.Now().UTC()
		ver := rub.Version
		run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds.ID, Name: "old llm-eval", Method: models.MethodLLMEval,
			Status: models.RunSucceeded, CreatedAt: now, FinishedAt: &now, RubricID: &rub.ID, RubricVersion: &ver,
			Settings:       evaluator.Settings{Rounds: 1, BatchSize: 1},
			RubricSnapshot: evaluator.Rubric{Task: "t", Criteria: []evaluator.Criterion{{Name: "Q", Lo: 0, Hi: 5, HumanColumn: "h"}}}}
		must(t, db.CreateRun(ctx, &run, nil))
		for i, r := range rows {
			b := models.RunBatch{RunID: run.ID, BatchIndex: i, RowIDs: []int64{r.ID}, Status: models.BatchDone, Problems: []string{}, Details: map[string]any{}}
			must(t, db.Gorm.Create(&b).Error)
			must(t, db.Gorm.Create(&models.RunScore{RunID: run.ID, BatchID: b.ID, RowID: r.ID, Label: 1, Score: f(judge[i])}).Error)
		}
		const note = "human ratings on the rubric's 1 to 3 mapped linearly onto the judge's 0 to 5 (1 becomes 0, 3 becomes 5)"
		want := []float64{1, 0.5, 0, 1}
		rep, err := Build(ctx, db, ws.ID, run.ID)
		must(t, err)
		c := rep.Criteria[0]
		if !strings.Contains(c.HumanScaleNote, note) {
			t.Errorf("note %q lacks %q", c.HumanScaleNote, note)
		}
		for i, s := range c.Samples {
			switch {
			case s.AbsDiff == nil:
				t.Errorf("sample %s: no difference, want %v", s.ExternalID, want[i])
			case math.Abs(*s.AbsDiff-want[i]) > 1e-12:
				t.Errorf("sample %s: difference %v, want %v", s.ExternalID, *s.AbsDiff, want[i])
			}
		}
		sum, err := LoadSummary(ctx, db, ws.ID, run.ID, Options{})
		must(t, err)
		if got := sum.Criteria[0].HumanScaleNote; got != c.HumanScaleNote {
			t.Errorf("stored summary's note %q, the report's %q", got, c.HumanScaleNote)
		}
		// The run as stored is unchanged.
		stored, err := db.FindRun(ctx, ws.ID, run.ID)
		must(t, err)
		if stored.RubricSnapshot.Criteria[0].RubricScale != nil {
			t.Errorf("the stored run was changed: %+v", stored.RubricSnapshot.Criteria[0])
		}
	})
}
