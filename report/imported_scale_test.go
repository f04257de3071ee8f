package report_test

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
)

// TestBothSourcesAverageOnTheRubricScale: with "imported column and
// browser ratings", an imported rating and a browser rating are averaged
// only once both are on the rubric's scale. Before, FED's Coherent
// ratings (0 to 2) were averaged as they were with browser ratings on the
// rubric's 1 to 3: a sample rated 1.8 (imported) and 3 (browser) got 2.4,
// a number on neither scale, and it fed the correlations. Now imported
// ratings outside the rubric's range are mapped from their lowest and
// highest values onto it first (the rule reports use for such ratings),
// and the report says so; imported ratings that are all one value cannot
// be mapped, so the combined rating is missing and the report says why.
// Without browser ratings the figures are exactly the imported column's.
func TestBothSourcesAverageOnTheRubricScale(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := models.Project{WorkspaceID: ws.ID, Name: "P"}
		if err := db.CreateProject(ctx, &p); err != nil {
			t.Fatal(err)
		}
		judge := []float64{3, 1, 3, 2, 1, 2}
		imported := []float64{1.8, 0, 2, 1, 0.5, 1.2} // FED's 0 to 2
		const flat = 7.0                              // a column all one value, outside 1 to 3
		ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "D", Columns: []string{"text", "coh", "flat"},
			Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"coh", "flat"}}
		var rows []models.DatasetRow
		for i := range judge {
			rows = append(rows, models.DatasetRow{Position: i + 1, ExternalID: "fed-00" + strconv.Itoa(i),
				Data: map[string]string{"text": "t"}, Ratings: map[string]*float64{"coh": fp(imported[i]), "flat": fp(flat)}})
		}
		if err := db.CreateDataset(ctx, &ds, rows); err != nil {
			t.Fatal(err)
		}
		rows, err = db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		j, err := db.EnsureSimulatedJudge(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		crits := []evaluator.Criterion{
			{Name: "Coherent", Lo: 1, Hi: 3, HumanColumn: "coh"},
			{Name: "Flat", Lo: 1, Hi: 3, HumanColumn: "flat"},
		}
		run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds.ID, JudgeID: &j.ID, Name: "r",
			Method: models.MethodBatchEval, Status: models.RunSucceeded, CreatedAt: time.Now(),
			Settings:       evaluator.Settings{Rounds: 1, BatchSize: len(rows)},
			RubricSnapshot: evaluator.Rubric{Task: "t", Criteria: crits}}
		if err := db.CreateRun(ctx, &run, nil); err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		b := models.RunBatch{RunID: run.ID, RowIDs: ids, Status: "done", Problems: []string{}, Details: map[string]any{}}
		if err := db.Gorm.Create(&b).Error; err != nil {
			t.Fatal(err)
		}
		for ci := range crits {
			for i, r := range rows {
				s := models.RunScore{RunID: run.ID, BatchID: b.ID, RowID: r.ID, CriterionIndex: ci, Label: i + 1, Score: fp(judge[i])}
				if err := db.Gorm.Create(&s).Error; err != nil {
					t.Fatal(err)
				}
			}
		}
		build := func() *report.Report {
			t.Helper()
			rep, err := report.Build(ctx, db, ws.ID, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			return rep
		}

		// Imported alone, and "both" before any browser rating: the
		// imported column's figures, exactly.
		base := build().Criteria[0]
		if _, err := db.SetRunHumanSource(ctx, ws.ID, run.ID, models.HumansBoth, "tester"); err != nil {
			t.Fatal(err)
		}
		noBrowser := build()
		if c := noBrowser.Criteria[0]; c.Pearson.Coef != base.Pearson.Coef || c.Spearman.Coef != base.Spearman.Coef || c.Kendall.Coef != base.Kendall.Coef ||
			c.Pearson.CILow != base.Pearson.CILow || c.Pearson.CIHigh != base.Pearson.CIHigh || c.Pearson.P != base.Pearson.P {
			t.Errorf("both, no browser rating: pearson %+v, want the imported column's %+v exactly", c.Pearson, base.Pearson)
		}
		if len(noBrowser.Humans.ScaleNotes) != 0 {
			t.Errorf("both, no browser rating: notes %q, want none", noBrowser.Humans.ScaleNotes)
		}

		// A reviewer rates the first sample 3 on both criteria (1 to 3).
		for _, c := range crits {
			if _, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: rows[0].ID,
				Criterion: c.Name, Reviewer: "rev", Score: fp(3), Lo: 1, Hi: 3}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.SetRunHumanSource(ctx, ws.ID, run.ID, models.HumansBoth, "tester"); err != nil {
			t.Fatal(err)
		}
		rep := build()
		// 0 to 2 mapped onto 1 to 3: each imported rating plus 1; the
		// first sample is the mean of 2.8 and the browser 3.
		want := make([]float64, len(imported))
		for i, v := range imported {
			want[i] = v + 1
		}
		want[0] = (2.8 + 3) / 2
		c := rep.Criteria[0]
		for i, s := range c.Samples {
			if s.Human == nil || math.Abs(*s.Human-want[i]) > 1e-9 {
				t.Errorf("Coherent, sample %s: human %v, want %v (on the rubric's 1 to 3)", s.ExternalID, ptrText(s.Human), want[i])
			}
		}
		if w := stats.Pearson(judge, want).Coef; math.Abs(c.Pearson.Coef-w) > 1e-12 {
			t.Errorf("Coherent: pearson %v, want %v over the ratings on one scale", c.Pearson.Coef, w)
		}
		text := rep.Provenance().HumanSourceText()
		for _, w := range []string{"Coherent: the imported ratings (0 to 2) lie outside the rubric's 1 to 3", "mapped linearly", "0 becomes 1, 2 becomes 3",
			"Flat: the imported ratings (all 7)", "combined human rating is missing"} {
			if !strings.Contains(text, w) {
				t.Errorf("human ratings used: %q lacks %q", text, w)
			}
		}
		// Flat: no mapping from one value, so nothing is averaged and the
		// combined rating is missing on every sample.
		f := rep.Criteria[1]
		for _, s := range f.Samples {
			if s.Human != nil {
				t.Errorf("Flat, sample %s: human %v, want missing (7 cannot be put on 1 to 3)", s.ExternalID, *s.Human)
			}
		}
		if !math.IsNaN(f.Pearson.Coef) {
			t.Errorf("Flat: pearson %v, want undefined", f.Pearson.Coef)
		}

		// The streamed CSV export reads the same human ratings and names
		// the mapping.
		var buf bytes.Buffer
		if err := report.StreamCSV(ctx, db, ws.ID, run.ID, &buf); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(buf.String())).ReadAll()
		if err != nil {
			t.Fatalf("csv: %v\n%s", err, buf.String())
		}
		col := -1
		for ri, rec := range recs {
			for k, h := range rec {
				if h == "Coherent human" {
					col = k
				}
			}
			if col >= 0 {
				for i, rec := range recs[ri+1 : ri+1+len(want)] {
					got, err := strconv.ParseFloat(rec[col], 64)
					if err != nil || math.Abs(got-want[i]) > 1e-4 {
						t.Errorf("CSV sample %d: Coherent human %q, want %v", i, rec[col], want[i])
					}
				}
				break
			}
		}
		if col < 0 {
			t.Fatalf("CSV has no Coherent human column:\n%s", buf.String())
		}
		if !strings.Contains(buf.String(), "0 becomes 1, 2 becomes 3") {
			t.Errorf("CSV export does not name the mapping:\n%s", buf.String())
		}
	})
}

func ptrText(v *float64) string {
	if v == nil {
		return "missing"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}
