package models_test

import (
	"context"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRunSpendAddsCostOnlyWhenKnown pins the one statement that adds calls
// paid for outside an answer to their run (AddUnitSpend here; a refused
// answer's count goes through it too): calls and tokens always add up,
// while a cost that is not known leaves the run's cost as it is, NULL
// until a priced call is counted (unknown is never $0), and a known cost
// starts it or adds to it.
func TestRunSpendAddsCostOnlyWhenKnown(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		r := w.newRun(t, "spend")
		rows, err := db.ListDatasetRows(ctx, w.dataset.ID, 0, 1)
		if err != nil || len(rows) < 1 {
			t.Fatalf("rows: %v", err)
		}
		bs, err := db.CreateRoundBatches(ctx, r.ID, 0, 0, [][]int64{{rows[0].ID}})
		if err != nil {
			t.Fatal(err)
		}
		cost := func(v float64) *float64 { return &v }
		steps := []struct {
			name   string
			call   models.PaidCall
			cost   *float64 // the spend's cost
			calls  int      // the run's calls after it
			tokens int      // the run's prompt tokens after it
			want   *float64 // the run's cost after it
		}{
			{"unpriced call on a run without a cost", models.PaidCall{ID: "a", PromptTokens: 10, CompletionTokens: 1}, nil, 1, 10, nil},
			{"first priced call", models.PaidCall{ID: "b", PromptTokens: 20, CompletionTokens: 2}, cost(0.5), 2, 30, cost(0.5)},
			{"unpriced call on a run with a cost", models.PaidCall{ID: "c", PromptTokens: 40, CompletionTokens: 4}, nil, 3, 70, cost(0.5)},
			{"second priced call", models.PaidCall{ID: "d", PromptTokens: 80, CompletionTokens: 8}, cost(0.25), 4, 150, cost(0.75)},
		}
		completion := 0
		for _, s := range steps {
			s.call.Cost = s.cost
			completion += s.call.CompletionTokens
			spend := models.UnitSpend{Calls: 1, PromptTokens: s.call.PromptTokens, CompletionTokens: s.call.CompletionTokens,
				Cost: s.cost, Paid: []models.PaidCall{s.call}}
			if err := db.AddUnitSpend(ctx, r.ID, bs[0].ID, spend); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			got, err := db.GetRun(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Calls != s.calls || got.PromptTokens != s.tokens || got.CompletionTokens != completion {
				t.Errorf("%s: run counts %d calls, %d+%d tokens; want %d, %d+%d", s.name,
					got.Calls, got.PromptTokens, got.CompletionTokens, s.calls, s.tokens, completion)
			}
			switch {
			case s.want == nil && got.CostUSD != nil:
				t.Errorf("%s: run cost %g, want unknown (NULL)", s.name, *got.CostUSD)
			case s.want != nil && (got.CostUSD == nil || *got.CostUSD < *s.want-1e-9 || *got.CostUSD > *s.want+1e-9):
				t.Errorf("%s: run cost %v, want %g", s.name, got.CostUSD, *s.want)
			}
		}
	})
}
