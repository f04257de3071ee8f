package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// ratedDatasetOf is a dataset of one sample per human rating "q" (ids
// s000, s001...).
func (env *testEnv) ratedDatasetOf(name string, human []float64) ratedData {
	env.t.Helper()
	ctx := context.Background()
	rows := make([]models.DatasetRow, len(human))
	for i := range rows {
		rows[i] = models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprintf("s%03d", i),
			Data:    map[string]string{"id": fmt.Sprintf("s%03d", i), "text": fmt.Sprintf("sample %d", i)},
			Ratings: map[string]*float64{"q": &human[i]}}
	}
	ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: name, Format: "csv", IDColumn: "id",
		Columns: []string{"id", "text"}, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"q"}}
	if err := env.db.CreateDataset(ctx, &ds, rows); err != nil {
		env.t.Fatal(err)
	}
	stored, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
	if err != nil {
		env.t.Fatal(err)
	}
	ids := make([]int64, len(stored))
	for i, r := range stored {
		ids[i] = r.ID
	}
	return ratedData{ds: ds, rowIDs: ids, human: human}
}

// storedRounds stores a succeeded run whose sample i scored rounds[r][i]
// in round r (dataset order), as the runner would have left it.
func (env *testEnv) storedRounds(d ratedData, name string, rounds [][]float64) models.Run {
	env.t.Helper()
	ctx := context.Background()
	s := evaluator.DefaultSettings()
	s.Rounds = len(rounds)
	run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: d.ds.ID, Name: name, Method: models.MethodBatchEval,
		Settings: s, Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the samples.",
			Criteria: []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}}}
	if err := env.db.CreateRun(ctx, &run, nil); err != nil {
		env.t.Fatal(err)
	}
	for r, scores := range rounds {
		bs, err := env.db.CreateRoundBatches(ctx, run.ID, 0, r, [][]int64{d.rowIDs})
		if err != nil {
			env.t.Fatal(err)
		}
		b := bs[0]
		b.Status = models.BatchDone
		out := make([]models.RunScore, len(scores))
		for i := range scores {
			out[i] = models.RunScore{RunID: run.ID, BatchID: b.ID, Round: r, RowID: d.rowIDs[i], Label: i + 1, Score: &scores[i]}
		}
		if err := env.db.SaveBatchResult(ctx, models.BatchResult{Batch: b, Scores: out}); err != nil {
			env.t.Fatal(err)
		}
	}
	if err := env.db.FinishRun(ctx, run.ID, models.RunSucceeded, ""); err != nil {
		env.t.Fatal(err)
	}
	run, err := env.db.GetRun(ctx, run.ID)
	if err != nil {
		env.t.Fatal(err)
	}
	return run
}

// TestCompareSamplesReadAsTheResults: the compare API's a, b and human of
// a sample are written as GET /api/v1/runs/{id}/results writes that
// sample's final and human, character for character. Means of two rounds
// such as (1.01 + 2.63) / 2 are 1.8199999999999998 as floats and ratings
// such as 0.1 + 0.2 are 0.30000000000000004: the results say 1.82 and
// 0.3, and the compare API wrote the floats (fails on the old code).
func TestCompareSamplesReadAsTheResults(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		// Ratings with floating-point noise, as a mean of annotators has.
		d := env.ratedDatasetOf("Noisy means", []float64{0.1 + 0.2, 2.1 + 2.2, 1.1 * 3, 4, 2, 1, 5, 3.5, 2.5})
		a := env.storedRounds(d, "A", [][]float64{
			{1.01, 1.9, 3.3, 4.4, 2.2, 1.1, 4.7, 3.15, 2.05},
			{2.63, 2.0, 3.4, 4.6, 2.1, 1.3, 4.9, 3.85, 2.95}})
		b := env.storedRounds(d, "B", [][]float64{
			{2.2, 1.01, 3.7, 4.1, 1.7, 1.2, 4.4, 3.3, 2.3},
			{2.1, 2.63, 3.1, 4.6, 2.6, 1.1, 4.6, 3.4, 2.6}})
		getJSON := func(path string, v any) {
			t.Helper()
			rec := env.get(path)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d %.300s", path, rec.Code, rec.Body)
			}
			must(t, json.Unmarshal(rec.Body.Bytes(), v))
		}
		type sample struct{ final, human string }
		results := func(run models.Run) map[string]sample {
			var doc struct {
				Report struct {
					Criteria []struct {
						Samples []struct {
							ID    string          `json:"id"`
							Final json.RawMessage `json:"final"`
							Human json.RawMessage `json:"human"`
						} `json:"samples"`
					} `json:"criteria"`
				} `json:"report"`
			}
			getJSON(fmt.Sprintf("/api/v1/runs/%d/results", run.ID), &doc)
			if len(doc.Report.Criteria) != 1 {
				t.Fatalf("run %d: %d criteria in its results", run.ID, len(doc.Report.Criteria))
			}
			out := map[string]sample{}
			for _, s := range doc.Report.Criteria[0].Samples {
				out[s.ID] = sample{string(s.Final), string(s.Human)}
			}
			return out
		}
		ra, rb := results(a), results(b)
		var cmp struct {
			Rows []struct {
				SampleID string          `json:"sample_id"`
				Human    json.RawMessage `json:"human"`
				A        json.RawMessage `json:"a"`
				B        json.RawMessage `json:"b"`
			} `json:"rows"`
		}
		getJSON(fmt.Sprintf("/api/v1/compare?a=%d&b=%d&criterion=0", a.ID, b.ID), &cmp)
		if len(cmp.Rows) != len(d.rowIDs) {
			t.Fatalf("compare gives %d rows, want %d", len(cmp.Rows), len(d.rowIDs))
		}
		// The case the test is about is there: s000 and B's s001 are
		// the mean of 1.01 and 2.63, the first ratings carry noise.
		if ra["s000"].final != "1.82" || rb["s001"].final != "1.82" || ra["s000"].human != "0.3" || ra["s001"].human != "4.3" {
			t.Fatalf("the results read %+v and %+v; the test expects 1.82 and ratings 0.3, 4.3", ra["s000"], rb["s001"])
		}
		for _, r := range cmp.Rows {
			wa, wb := ra[r.SampleID], rb[r.SampleID]
			if string(r.A) != wa.final || string(r.B) != wb.final || string(r.Human) != wa.human {
				t.Errorf("sample %s: compare reads a %s, b %s, human %s; the runs' results read %s, %s, human %s",
					r.SampleID, r.A, r.B, r.Human, wa.final, wb.final, wa.human)
			}
		}
	})
}
