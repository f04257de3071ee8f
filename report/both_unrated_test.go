package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
)

// TestBothWithoutBrowserRatingsReadsTheImportedColumn: under "imported and
// browser ratings", a criterion that no reviewer rated reads its imported
// column exactly as the imported source does (what the run page, the
// comparisons and the exports say it read), even when the dataset also
// holds the annotators' own ratings and the column is not their exact
// mean (a released mean rounded to two decimals, a median). Criterion Q,
// rated in the browser, is averaged with the imported ratings as
// documented.
func TestBothWithoutBrowserRatingsReadsTheImportedColumn(t *testing.T) {
	judge := []float64{1, 2, 3, 4, 5, 2}
	a1 := []float64{1, 3, 2, 5, 4, 1}
	a2 := []float64{2, 2, 3, 4, 5, 2}
	a3 := []float64{1, 2, 4, 4, 3, 3}
	round2 := func(v float64) float64 { return math.Round(v*100) / 100 }
	median := func(x, y, z float64) float64 { return max(min(x, y), min(max(x, y), z)) }
	mean := func(i int) float64 { return (a1[i] + a2[i] + a3[i]) / 3 }
	cases := []struct {
		name string
		// column is the imported human column of criterion R at row i.
		column func(i int) float64
		// keys are the annotators' keys: explicit columns, or found as
		// "<column>@<annotator>" (a file with one row per annotator).
		explicit bool
	}{
		{"median column, annotator columns", func(i int) float64 { return median(a1[i], a2[i], a3[i]) }, true},
		{"mean rounded to 2 decimals, annotator columns", func(i int) float64 { return round2(mean(i)) }, true},
		{"mean rounded to 2 decimals, per-annotator keys", func(i int) float64 { return round2(mean(i)) }, false},
		{"exact mean, per-annotator keys", mean, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
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
				annKey := func(k int) string {
					if tc.explicit {
						return fmt.Sprintf("r%d", k)
					}
					return fmt.Sprintf("rm@a%d", k)
				}
				ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "D", Columns: []string{"text", "q", "rm"},
					Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"q", "rm"}}
				if tc.explicit {
					ds.Columns = append(ds.Columns, "r1", "r2", "r3")
					ds.RatingColumns = append(ds.RatingColumns, "r1", "r2", "r3")
				}
				var rows []models.DatasetRow
				for i := range judge {
					rows = append(rows, models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprintf("s%d", i),
						Data: map[string]string{"text": "t"}, Ratings: map[string]*float64{
							"q": fp(float64(1 + i%3)), "rm": fp(tc.column(i)),
							annKey(1): fp(a1[i]), annKey(2): fp(a2[i]), annKey(3): fp(a3[i])}})
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
				r := evaluator.Criterion{Name: "R", Lo: 1, Hi: 5, HumanColumn: "rm"}
				if tc.explicit {
					r.AnnotatorColumns = []string{"r1", "r2", "r3"}
				}
				run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds.ID, JudgeID: &j.ID, Name: "r",
					Method: models.MethodBatchEval, Status: models.RunSucceeded, CreatedAt: time.Now(),
					Settings: evaluator.Settings{Rounds: 1, BatchSize: len(rows)},
					RubricSnapshot: evaluator.Rubric{Task: "t", Criteria: []evaluator.Criterion{
						{Name: "Q", Lo: 1, Hi: 3, HumanColumn: "q"}, r}}}
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
				for ci := range 2 {
					for i, r := range rows {
						s := models.RunScore{RunID: run.ID, BatchID: b.ID, RowID: r.ID, CriterionIndex: ci, Label: i + 1, Score: fp(judge[i])}
						if err := db.Gorm.Create(&s).Error; err != nil {
							t.Fatal(err)
						}
					}
				}
				for i, r := range rows {
					if _, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: r.ID,
						Criterion: "Q", Reviewer: "ann", Score: fp(float64(3 - i%3)), Lo: 1, Hi: 3}); err != nil {
						t.Fatal(err)
					}
				}

				type reading struct {
					pearson, spearman, kendall float64
					rated                      int
					ceiling                    string
					human                      []string // the CSV's "R human" column
					jsonHuman                  []float64
				}
				read := func() reading {
					t.Helper()
					rep, err := report.Build(ctx, db, ws.ID, run.ID)
					if err != nil {
						t.Fatal(err)
					}
					c := rep.Criteria[1]
					out := reading{pearson: c.Pearson.Coef, spearman: c.Spearman.Coef, kendall: c.Kendall.Coef, rated: c.Pearson.N}
					if c.Ceiling != nil {
						out.ceiling = fmt.Sprintf("%d %v %v", c.Ceiling.Annotators, c.Ceiling.Alpha, c.Ceiling.LeaveOneOut)
					}
					// The stored summary the run page reads, and the JSON
					// export streamed from it.
					sum, err := report.LoadSummary(ctx, db, ws.ID, run.ID, report.Options{})
					if err != nil {
						t.Fatal(err)
					}
					if sc := sum.Criteria[1]; sc.Pearson.Coef != c.Pearson.Coef || sc.Spearman.Coef != c.Spearman.Coef {
						t.Errorf("the stored summary reads pearson %v spearman %v, the report %v %v", sc.Pearson.Coef, sc.Spearman.Coef, c.Pearson.Coef, c.Spearman.Coef)
					}
					var js bytes.Buffer
					if err := report.StreamJSON(ctx, db, sum, &js); err != nil {
						t.Fatal(err)
					}
					var doc struct {
						Report struct {
							Criteria []struct {
								Samples []struct {
									Human *float64 `json:"human"`
								} `json:"samples"`
							} `json:"criteria"`
						} `json:"report"`
					}
					if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
						t.Fatal(err)
					}
					for _, s := range doc.Report.Criteria[1].Samples {
						out.jsonHuman = append(out.jsonHuman, *s.Human)
					}
					var buf bytes.Buffer
					if err := report.StreamCSV(ctx, db, ws.ID, run.ID, &buf); err != nil {
						t.Fatal(err)
					}
					recs, err := csv.NewReader(&buf).ReadAll()
					if err != nil {
						t.Fatal(err)
					}
					col := -1
					for k, h := range recs[0] {
						if h == "R human" {
							col = k
						}
					}
					if col < 0 {
						t.Fatalf("no \"R human\" column in %q", recs[0])
					}
					for _, rec := range recs[1:] {
						out.human = append(out.human, rec[col])
					}
					if got := rep.CriterionShort(1); got != "the imported column" {
						t.Errorf("criterion R reads %q, want the imported column", got)
					}
					return out
				}
				imported := read()
				if _, err := db.SetRunHumanSource(ctx, ws.ID, run.ID, models.HumansBoth, "tester"); err != nil {
					t.Fatal(err)
				}
				both := read()
				if fmt.Sprint(both) != fmt.Sprint(imported) {
					t.Errorf("criterion R without browser ratings under both:\n %+v\nunder imported:\n %+v", both, imported)
				}
				// Criterion Q, rated in the browser, does change: the
				// imported column and ann are averaged.
				rep, err := report.Build(ctx, db, ws.ID, run.ID)
				if err != nil {
					t.Fatal(err)
				}
				if rep.CriterionShort(0) != "the imported and browser ratings (1 browser rating)" && rep.Criteria[0].Ceiling == nil {
					t.Errorf("criterion Q reads %q with no ceiling; want imported and ann averaged", rep.CriterionShort(0))
				}
			})
		})
	}
}
