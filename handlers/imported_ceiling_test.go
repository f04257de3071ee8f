package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestImportedAnnotatorCeilingRecomputed: the human ceiling read from a
// dataset's own annotator columns (the criterion's annotator_columns), not
// from browser reviews. On the first 40 FED dialogues, three annotators'
// Coherent ratings on 0 to 2 are made from the FED mean (rounded, nudged up
// or down by the dialogue's place, some left empty), and the JSON export's
// human_ceiling is recomputed from them by the definitions
// TestReviewerAgreementRecomputed writes out: the annotators and items
// (rated by two or more), Krippendorff's interval alpha from its pair sums,
// and the mean leave-one-out Pearson r.
func TestImportedAnnotatorCeilingRecomputed(t *testing.T) {
	const n = 40
	fed := readFED(t, n)
	cols := []string{"Coherent_a", "Coherent_b", "Coherent_c"}
	nan := math.NaN()
	ratings := make([][]float64, n)
	for i, r := range fed {
		h := r.Scores["Coherent"]
		a := math.Round(h)
		b := math.Min(2, math.Round(h+0.3*float64(i%3-1)))
		c := math.Max(0, math.Round(h-0.4))
		switch {
		case i%7 == 2:
			b = nan
		case i%9 == 4:
			a, c = nan, nan // one annotator only: not pairable
		case i%11 == 6:
			a, b, c = nan, nan, nan
		}
		ratings[i] = []float64{a, b, c}
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rows := make([]models.DatasetRow, n)
		for i, r := range fed {
			mean := r.Scores["Coherent"]
			rt := map[string]*float64{"Coherent": &mean}
			for k, col := range cols {
				if v := ratings[i][k]; !math.IsNaN(v) {
					rt[col] = &v
				} else {
					rt[col] = nil
				}
			}
			rows[i] = models.DatasetRow{Position: i + 1, ExternalID: r.ID, Data: map[string]string{"id": r.ID, "context": r.Context}, Ratings: rt}
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED annotators", Format: "jsonl", IDColumn: "id",
			Columns: []string{"id", "context"}, Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}},
			RatingColumns: append([]string{"Coherent"}, cols...)}
		must(t, env.db.CreateDataset(ctx, &ds, rows))
		d := env.demo()
		s := evaluator.DefaultSettings()
		s.Rounds, s.BatchSize = 2, 10
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, JudgeID: &d.judge.ID, Name: "FED ceiling",
			Method: models.MethodBatchEval, Settings: s, JudgeSnapshot: d.judge.Snapshot(), Simulated: true,
			RubricSnapshot: evaluator.Rubric{Task: "Rate the dialogues.", Criteria: []evaluator.Criterion{{Name: "Coherent", Description: "Is it coherent?",
				Lo: 0, Hi: 2, HumanColumn: "Coherent", AnnotatorColumns: cols}}}}
		must(t, env.runner.Launch(ctx, &run))
		run = env.waitRun(run.ID, 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s)", run.Status, run.Error)
		}
		rec := env.get(fmt.Sprintf("/runs/%d/export.json", run.ID))
		if rec.Code != http.StatusOK {
			t.Fatalf("export: %d", rec.Code)
		}
		var ex struct {
			Report struct {
				Criteria []struct {
					HumanCeiling *struct {
						Annotators  int      `json:"annotators"`
						Items       int      `json:"items"`
						Alpha       *float64 `json:"krippendorff_alpha"`
						LeaveOneOut *float64 `json:"leave_one_out_pearson"`
					} `json:"human_ceiling"`
				}
			} `json:"report"`
		}
		must(t, json.Unmarshal(rec.Body.Bytes(), &ex))
		hc := ex.Report.Criteria[0].HumanCeiling
		if hc == nil {
			t.Fatal("no human ceiling exported, with three annotator columns")
		}
		items := 0
		for _, rs := range ratings {
			if pairable(rs) >= 2 {
				items++
			}
		}
		alpha, loo := alphaByPairs(ratings), leaveOneOut(ratings)
		t.Logf("ceiling: %d annotators, %d items, alpha %v (recomputed %v), leave-one-out %v (recomputed %v)", hc.Annotators, hc.Items,
			exportedOrNil(hc.Alpha), alpha, exportedOrNil(hc.LeaveOneOut), loo)
		if hc.Annotators != 3 || hc.Items != items {
			t.Errorf("ceiling: %d annotators over %d items; want 3 over %d", hc.Annotators, hc.Items, items)
		}
		for _, f := range []struct {
			what string
			got  *float64
			want float64
		}{{"Krippendorff's alpha", hc.Alpha, alpha}, {"leave-one-out Pearson", hc.LeaveOneOut, loo}} {
			if f.got == nil || math.Abs(*f.got-f.want) > 1e-9 {
				t.Errorf("%s: exported %v, recomputed %v", f.what, exportedOrNil(f.got), f.want)
			}
		}
	})
}
