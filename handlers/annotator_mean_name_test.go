package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestRealColumnNamedLikeTheAnnotatorMean: a dataset has annotator
// columns a1, a2, a3 and its own rating column named "mean of a1, a2, a3"
// (the file's precomputed mean, here rounded down, so it differs from
// the exact mean). Criterion A names the annotator columns and no human
// column, criterion B names that real column. The computed mean was
// stored under the real column's name, so B was compared with A's
// computed mean, not with its column, and the two read the same name. Now
// the computed mean is "mean of a1, a2, a3 (computed)", with the note
// saying how it is made; B reads its own column, under its own name, with
// no such note. Fails before: B's human ratings were the exact means.
func TestRealColumnNamedLikeTheAnnotatorMean(t *testing.T) {
	const real = "mean of a1, a2, a3"
	const computed = real + " (computed)"
	cols := []string{"a1", "a2", "a3"}
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const n = 8
		var rows []models.DatasetRow
		exact, floor := map[string]float64{}, map[string]float64{}
		for i := range n {
			id := fmt.Sprintf("s%d", i+1)
			a, b, c := float64(i%3), float64((i+1)%3), float64((i+2)%2)
			m := (a + b + c) / 3
			exact[id], floor[id] = m, math.Floor(m)
			fl := math.Floor(m)
			rows = append(rows, models.DatasetRow{Position: i + 1, ExternalID: id,
				Data:    map[string]string{"id": id, "reply": fmt.Sprintf("Reply number %d to the customer.", i+1)},
				Ratings: map[string]*float64{"a1": &a, "a2": &b, "a3": &c, real: &fl}})
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Own mean column", Format: "csv", IDColumn: "id",
			Columns: []string{"id", "reply"}, Fields: []evaluator.Field{{Column: "reply", Label: "Reply"}}, RatingColumns: append(append([]string{}, cols...), real)}
		must(t, env.db.CreateDataset(ctx, &ds, rows))
		d := env.demo()
		s := evaluator.DefaultSettings()
		s.Rounds, s.BatchSize = 1, 4
		run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, JudgeID: &d.judge.ID, Name: "own mean",
			Method: models.MethodBatchEval, Settings: s, JudgeSnapshot: d.judge.Snapshot(), Simulated: true,
			RubricSnapshot: evaluator.Rubric{Task: "Rate the replies.", Criteria: []evaluator.Criterion{
				{Name: "A", Description: "Is it good?", Lo: 0, Hi: 2, AnnotatorColumns: cols},
				{Name: "B", Description: "Is it good?", Lo: 0, Hi: 2, HumanColumn: real}}}}
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
					HumanColumn     *string `json:"human_column"`
					HumanColumnNote string  `json:"human_column_note"`
					Samples         []struct {
						ID    string   `json:"id"`
						Human *float64 `json:"human"`
					} `json:"samples"`
				} `json:"criteria"`
			} `json:"report"`
		}
		must(t, json.Unmarshal(rec.Body.Bytes(), &ex))
		if len(ex.Report.Criteria) != 2 {
			t.Fatalf("%d criteria exported", len(ex.Report.Criteria))
		}
		for ci, tc := range []struct {
			column string
			note   string // "" none
			want   map[string]float64
		}{
			{computed, "mean of its readable ratings in a1, a2, a3", exact},
			{real, "", floor},
		} {
			cr := ex.Report.Criteria[ci]
			if cr.HumanColumn == nil || *cr.HumanColumn != tc.column {
				t.Errorf("criterion %d: human_column %v, want %q", ci, exportedText(cr.HumanColumn), tc.column)
			}
			if (tc.note == "") != (cr.HumanColumnNote == "") || !strings.Contains(cr.HumanColumnNote, tc.note) {
				t.Errorf("criterion %d: human_column_note %q, want %q", ci, cr.HumanColumnNote, tc.note)
			}
			if len(cr.Samples) != n {
				t.Fatalf("criterion %d: %d samples", ci, len(cr.Samples))
			}
			for _, s := range cr.Samples {
				if s.Human == nil || math.Abs(*s.Human-tc.want[s.ID]) > 1e-9 {
					t.Errorf("criterion %d, sample %s: human %v, want %v", ci, s.ID, s.Human, tc.want[s.ID])
				}
			}
		}
	})
}
