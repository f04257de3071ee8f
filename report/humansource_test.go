package report_test

import (
	"math"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
)

func fp(v float64) *float64 { return &v }

// TestReportHumanSource: a report uses the imported ratings until a person
// asks it to recompute with the browser ratings; then its correlation and
// human ceiling follow the browser ratings made up to that moment, and a
// rating made afterwards changes nothing until the next recompute.
func TestReportHumanSource(t *testing.T) {
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
		judge := []float64{1, 2, 3, 4, 5}
		imported := []float64{3, 1, 4, 1, 5} // weakly related to the judge
		ann := []float64{1, 2, 3, 5, 4}      // close to the judge
		bob := []float64{2, 2, 3, 4, 5}
		ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "D", Columns: []string{"text", "h"},
			Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"h"}}
		var rows []models.DatasetRow
		for i := range judge {
			rows = append(rows, models.DatasetRow{Position: i + 1, ExternalID: string(rune('a' + i)),
				Data: map[string]string{"text": "t"}, Ratings: map[string]*float64{"h": fp(imported[i])}})
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
		crit := evaluator.Criterion{Name: "Q", Lo: 1, Hi: 5, HumanColumn: "h"}
		run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds.ID, JudgeID: &j.ID, Name: "r",
			Method: models.MethodBatchEval, Status: models.RunSucceeded, CreatedAt: time.Now(),
			Settings:       evaluator.Settings{Rounds: 1, BatchSize: len(rows)},
			RubricSnapshot: evaluator.Rubric{Task: "t", Criteria: []evaluator.Criterion{crit}}}
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
		for i, r := range rows {
			s := models.RunScore{RunID: run.ID, BatchID: b.ID, RowID: r.ID, Label: i + 1, Score: fp(judge[i])}
			if err := db.Gorm.Create(&s).Error; err != nil {
				t.Fatal(err)
			}
		}
		rate := func(reviewer string, vals []float64) {
			t.Helper()
			for i, r := range rows {
				if _, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: r.ID,
					Criterion: "Q", Reviewer: reviewer, Score: fp(vals[i]), Lo: 1, Hi: 5}); err != nil {
					t.Fatal(err)
				}
			}
		}
		rate("ann", ann)
		rate("bob", bob)

		build := func() report.CriterionReport {
			t.Helper()
			rep, err := report.Build(ctx, db, ws.ID, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			return rep.Criteria[0]
		}
		mean2 := make([]float64, len(ann))
		mean3 := make([]float64, len(ann))
		for i := range ann {
			mean2[i] = (ann[i] + bob[i]) / 2
			mean3[i] = (imported[i] + ann[i] + bob[i]) / 3
		}
		matrix := func(cols ...[]float64) [][]float64 {
			m := make([][]float64, len(cols[0]))
			for i := range m {
				for _, c := range cols {
					m[i] = append(m[i], c[i])
				}
			}
			return m
		}

		// Imported: as before browser ratings existed.
		rep, err := report.Build(ctx, db, ws.ID, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Humans.Source != models.HumansImported || rep.Provenance().HumanSourceText() != "imported column" {
			t.Errorf("default source: %+v %q", rep.Humans, rep.Provenance().HumanSourceText())
		}
		c := rep.Criteria[0]
		if want := stats.Pearson(judge, imported).Coef; math.Abs(c.Pearson.Coef-want) > 1e-12 || c.Ceiling != nil {
			t.Fatalf("imported: pearson %v ceiling %+v; want %v and no ceiling (browser ratings unused)", c.Pearson.Coef, c.Ceiling, want)
		}

		cases := []struct {
			source    models.HumanSource
			human     []float64
			ceiling   [][]float64
			annotated int
		}{
			{models.HumansBrowser, mean2, matrix(ann, bob), 2},
			{models.HumansBoth, mean3, matrix(imported, ann, bob), 3},
		}
		for _, tc := range cases {
			if _, err := db.SetRunHumanSource(ctx, ws.ID, run.ID, tc.source, "tester"); err != nil {
				t.Fatal(err)
			}
			c := build()
			if want := stats.Pearson(judge, tc.human).Coef; math.Abs(c.Pearson.Coef-want) > 1e-12 {
				t.Errorf("%s: pearson %v, want %v", tc.source, c.Pearson.Coef, want)
			}
			wantLOO, _ := stats.LeaveOneOutCorrelation(stats.MethodPearson, tc.ceiling)
			if c.Ceiling == nil || c.Ceiling.Annotators != tc.annotated || math.Abs(c.Ceiling.LeaveOneOut-wantLOO) > 1e-12 ||
				math.Abs(c.Ceiling.Alpha-stats.KrippendorffAlphaInterval(tc.ceiling)) > 1e-12 {
				t.Errorf("%s: ceiling %+v, want %d annotators, leave-one-out %v", tc.source, c.Ceiling, tc.annotated, wantLOO)
			}
		}

		// Never silently: a new rating leaves the report as it was until
		// the next recompute.
		before := build()
		rate("cy", []float64{5, 4, 3, 2, 1})
		after := build()
		if after.Pearson.Coef != before.Pearson.Coef || after.Ceiling.Annotators != before.Ceiling.Annotators {
			t.Errorf("a rating after the recompute changed the report: pearson %v -> %v, annotators %d -> %d",
				before.Pearson.Coef, after.Pearson.Coef, before.Ceiling.Annotators, after.Ceiling.Annotators)
		}
		if _, err := db.SetRunHumanSource(ctx, ws.ID, run.ID, models.HumansBoth, "tester"); err != nil {
			t.Fatal(err)
		}
		cy := []float64{5, 4, 3, 2, 1}
		mean4 := make([]float64, len(ann))
		for i := range ann {
			mean4[i] = (imported[i] + ann[i] + bob[i] + cy[i]) / 4
		}
		if got, want := build().Pearson.Coef, stats.Pearson(judge, mean4).Coef; math.Abs(got-want) > 1e-12 {
			t.Errorf("after recompute: pearson %v, want %v with cy's ratings", got, want)
		}
	})
}
