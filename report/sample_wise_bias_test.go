package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestSampleWiseMethodsHaveNoBatchBias: batch bias measures how far the
// samples judged together sit from their final scores, so only a method
// that batches has it. A sample-wise baseline's report gave its
// one-sample units a bias of 0 on a criterion with units of its own, and
// none (null) on LLM-Eval's second criterion, whose one call a sample is
// stored under the first criterion: the JSON export wrote 0 and null for
// the same thing, where the pages leave it out. Every criterion of such a
// run now has none, in the report and in the export; BatchEval on the same
// layout keeps its 0. The export's position effect (position inside a
// batch) is absent for them too, as docs/export-schema.md says: it was
// written, every score at "position 1".
func TestSampleWiseMethodsHaveNoBatchBias(t *testing.T) {
	rows := []models.DatasetRow{}
	human := []float64{1, 2, 3, 4, 5}
	for i, h := range human {
		rows = append(rows, models.DatasetRow{ID: int64(10 + i), Position: i + 1, ExternalID: string(rune('a' + i)),
			Ratings: map[string]*float64{"h1": f(h), "h2": f(6 - h)}})
	}
	for _, tc := range []struct {
		method string
		// oneCall: one unit a sample judges every criterion, stored under
		// the first (LLM-Eval's way).
		oneCall bool
		hasBias bool
	}{
		{models.MethodGEval, false, false},
		{models.MethodCloserLook, false, false},
		{models.MethodLLMEval, true, false},
		{models.MethodBatchEval, false, true},
	} {
		t.Run(tc.method, func(t *testing.T) {
			run := models.Run{ID: 1, Method: tc.method, Settings: evaluator.Settings{Rounds: 1, BatchSize: 1},
				RubricSnapshot: evaluator.Rubric{Task: "t", Criteria: []evaluator.Criterion{
					{Name: "A", Lo: 1, Hi: 5, HumanColumn: "h1"}, {Name: "B", Lo: 1, Hi: 5, HumanColumn: "h2"}}}}
			var batches []models.RunBatch
			var scores []models.RunScore
			id := int64(0)
			for i, r := range rows {
				for ci := range 2 {
					if ci == 0 || !tc.oneCall {
						id++
						batches = append(batches, models.RunBatch{ID: id, CriterionIndex: ci, BatchIndex: i, RowIDs: []int64{r.ID}, Status: models.BatchDone})
					}
					scores = append(scores, models.RunScore{BatchID: id, CriterionIndex: ci, RowID: r.ID, Label: 1, Score: f(float64(1 + (i*(ci+2))%5))})
				}
			}
			rep := Compute(run, models.Dataset{ID: 1}, rows, batches, scores)
			var buf bytes.Buffer
			if err := rep.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Report struct {
					Criteria []struct {
						Name          string
						MeanBatchBias *float64 `json:"mean_batch_bias"`
						Positions     []any    `json:"position_effect"`
						Rounds        []struct {
							BatchBias *float64 `json:"batch_bias"`
						}
					}
				}
			}
			if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			ex := doc.Report
			if len(ex.Criteria) != len(rep.Criteria) {
				t.Fatalf("%d criteria exported, the report has %d", len(ex.Criteria), len(rep.Criteria))
			}
			for ci, c := range rep.Criteria {
				e := ex.Criteria[ci]
				if len(c.Rounds) != 1 || len(e.Rounds) != 1 {
					t.Fatalf("%s: %d rounds in the report, %d exported; want 1", c.Criterion.Name, len(c.Rounds), len(e.Rounds))
				}
				if tc.hasBias != (len(e.Positions) > 0) {
					t.Errorf("%s: %d positions exported; the schema: absent when not batched", c.Criterion.Name, len(e.Positions))
				}
				if !tc.hasBias {
					if !math.IsNaN(c.MeanBatchBias) || !math.IsNaN(c.Rounds[0].BatchBias) || e.MeanBatchBias != nil || e.Rounds[0].BatchBias != nil {
						t.Errorf("%s: batch bias %v (round %v), exported %v (round %v); a method that judges each sample alone has none",
							c.Criterion.Name, c.MeanBatchBias, c.Rounds[0].BatchBias, shownPtr(e.MeanBatchBias), shownPtr(e.Rounds[0].BatchBias))
					}
					continue
				}
				// One sample a batch, one round: each batch sits on its finals.
				if c.MeanBatchBias != 0 || c.Rounds[0].BatchBias != 0 || e.MeanBatchBias == nil || *e.MeanBatchBias != 0 {
					t.Errorf("%s: batch bias %v (round %v), exported %v; want 0", c.Criterion.Name, c.MeanBatchBias, c.Rounds[0].BatchBias, shownPtr(e.MeanBatchBias))
				}
			}
		})
	}
}

// shownPtr is an exported number for a message: "null" when absent.
func shownPtr(v *float64) string {
	if v == nil {
		return "null"
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}
