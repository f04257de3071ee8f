package runner

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestAnswerAlreadyStoredIsStillCounted: an answer for a batch another
// execution answered first is not stored (the batch keeps its answer and
// scores), but it was paid for: its calls, tokens and cost are added to
// the run, once. Both ways a store meets that conflict: this execution
// still holds the run, or it lost the lease and the late write finds the
// batch answered (regression: the answer was dropped uncounted).
func TestAnswerAlreadyStoredIsStillCounted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		owner string // the lease owner the late answer is stored under
	}{
		{"this execution still holds the run", "new"},
		{"this execution lost the lease", "old"},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		r, err := New(Config{DB: env.db, Log: testLog()})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				run := env.newRun("http://127.0.0.1:1/v1", 1, 1, 30)
				if err := env.db.CreateRun(ctx, &run, nil); err != nil {
					t.Fatal(err)
				}
				ids := []int64{env.rows[0].ID, env.rows[1].ID}
				bs, err := env.db.CreateRoundBatches(ctx, run.ID, 0, 0, [][]int64{ids})
				if err != nil {
					t.Fatal(err)
				}
				if ok, err := env.db.ClaimRun(ctx, run.ID, "new", time.Now().Add(time.Minute)); err != nil || !ok {
					t.Fatalf("claim: %v %v", ok, err)
				}
				answer := func(v float64, calls, prompt, completion int) models.BatchResult {
					b := bs[0]
					b.Status, b.Calls, b.Attempts, b.PromptTokens, b.CompletionTokens = models.BatchDone, calls, calls, prompt, completion
					b.Response = "answer " + time.Now().String()
					res := models.BatchResult{Batch: b, Cost: Cost(run.JudgeSnapshot, prompt, completion)}
					for i, id := range ids {
						x := v + float64(i)
						res.Scores = append(res.Scores, models.RunScore{RunID: run.ID, BatchID: b.ID, RowID: id, Label: i + 1, Score: &x})
					}
					return res
				}
				// The other execution's answer, stored first.
				if err := r.store(models.WithLeaseOwner(ctx, "new"), run, answer(1, 1, 1000, 100), nil); err != nil {
					t.Fatal(err)
				}
				before := env.getRun(run.ID)
				if err := r.store(models.WithLeaseOwner(ctx, tc.owner), run, answer(4, 2, 3000, 300), nil); err != nil {
					t.Fatalf("store of an answer already stored: %v, want nil (not an error)", err)
				}
				after := env.getRun(run.ID)
				if after.Calls != before.Calls+2 || after.PromptTokens != before.PromptTokens+3000 || after.CompletionTokens != before.CompletionTokens+300 {
					t.Errorf("run counts %d calls, %d+%d tokens; want %d, %d+%d (the late answer counted once)",
						after.Calls, after.PromptTokens, after.CompletionTokens, before.Calls+2, before.PromptTokens+3000, before.CompletionTokens+300)
				}
				// newRun's prices: $1 and $2 per million.
				want := *before.CostUSD + (3000*1+300*2)/1e6
				if after.CostUSD == nil || math.Abs(*after.CostUSD-want) > 1e-12 {
					t.Errorf("run cost %v, want %g", orNilCost(after.CostUSD), want)
				}
				if after.BatchesDone != before.BatchesDone || after.MissingScores != before.MissingScores {
					t.Errorf("run counts %d done, %d missing; want %d, %d (the late answer is not the batch's)",
						after.BatchesDone, after.MissingScores, before.BatchesDone, before.MissingScores)
				}
				for _, s := range env.scoresByBatch(run.ID)[bs[0].ID] {
					if s.Score == nil || *s.Score >= 4 {
						t.Errorf("row %d's score is %v, want the first answer's", s.RowID, orNilCost(s.Score))
					}
				}
			})
		}
	})
}
