package runner

import (
	"context"
	"fmt"
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
				if ok, err := env.db.ClaimRun(ctx, run.ID, "new", time.Minute); err != nil || !ok {
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

// TestRefusedAnswerCountedOnce: an answer refused because its batch has an
// answer already is counted by the store that refuses it, in the same
// transaction, whichever store that is (a crash right after the refusal
// used to lose the count, made in a transaction of its own by the
// runner); and a paid answer counts once, also when the answer cache
// replayed it as paid to the unit's next execution, which stored it first
// or was refused after it (it used to count twice). Calls are told apart
// by the identity each was given when the judge answered it, not by
// their content: a seeded judge answers the same request alike, and two
// such paid calls count twice (one of them used to go uncounted, taken
// for a replay); an answer stored before identities were kept is still
// compared by content.
func TestRefusedAnswerCountedOnce(t *testing.T) {
	t.Parallel()
	type store func(ctx context.Context, env *testEnv, r *Runner, run models.Run, res, other models.BatchResult) error
	fenced := func(owner string) store {
		return func(ctx context.Context, env *testEnv, r *Runner, run models.Run, res, _ models.BatchResult) error {
			return r.store(models.WithLeaseOwner(ctx, owner), run, res, nil)
		}
	}
	cases := []struct {
		name      string
		replayed  bool // the stored answer and the refused one are the same paid call
		alike     bool // the stored answer has the refused one's content, from calls of its own
		partly    bool // the stored answer replayed the refused one's first call and made a second of its own
		legacy    bool // the stored answer was stored before identities were kept
		group     bool // the other batch's answer is stored with it
		refuse    store
		wantCount bool // the refused answer adds its calls, tokens and cost
	}{
		{name: "late answer (SaveLateBatchResult)", wantCount: true,
			refuse: func(ctx context.Context, env *testEnv, _ *Runner, _ models.Run, res, _ models.BatchResult) error {
				return env.db.SaveLateBatchResult(ctx, res)
			}},
		{name: "lease holder's answer (SaveBatchResult)", wantCount: true,
			refuse: func(ctx context.Context, env *testEnv, _ *Runner, _ models.Run, res, _ models.BatchResult) error {
				return env.db.SaveBatchResult(models.WithLeaseOwner(ctx, "new"), res)
			}},
		{name: "in a group (SaveBatchResults)", group: true, wantCount: true,
			refuse: func(ctx context.Context, env *testEnv, _ *Runner, _ models.Run, res, other models.BatchResult) error {
				errs := env.db.SaveBatchResults(ctx, []models.BatchSave{{Result: res, Owner: "new"}, {Result: other, Owner: "new"}})
				if errs[1] != nil {
					return fmt.Errorf("the group's other answer: %w", errs[1])
				}
				return errs[0]
			}},
		{name: "the replay was stored, the late original is refused", replayed: true, refuse: fenced("old")},
		{name: "the original was stored, its replay is refused", replayed: true, refuse: fenced("new")},
		{name: "a seeded judge answered two paid calls alike, both count", alike: true, refuse: fenced("old"), wantCount: true},
		{name: "a seeded judge answered alike, the lease holder's is refused", alike: true, refuse: fenced("new"), wantCount: true},
		{name: "the stored answer replayed one of the refused answer's calls", partly: true, refuse: fenced("old")},
		{name: "stored before identities were kept, the replay matched by content", replayed: true, legacy: true, refuse: fenced("old")},
		{name: "stored before identities were kept, another answer counts", legacy: true, refuse: fenced("old"), wantCount: true},
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
				ids := [][]int64{{env.rows[0].ID, env.rows[1].ID}, {env.rows[2].ID, env.rows[3].ID}}
				bs, err := env.db.CreateRoundBatches(ctx, run.ID, 0, 0, ids)
				if err != nil {
					t.Fatal(err)
				}
				if ok, err := env.db.ClaimRun(ctx, run.ID, "new", time.Minute); err != nil || !ok {
					t.Fatalf("claim: %v %v", ok, err)
				}
				answer := func(b models.RunBatch, text string, calls, prompt, completion int, latency int64, paid ...models.PaidCall) models.BatchResult {
					b.Status, b.Calls, b.Attempts, b.PromptTokens, b.CompletionTokens, b.LatencyMS = models.BatchDone, calls, calls, prompt, completion, latency
					b.Response = text
					res := models.BatchResult{Batch: b, Cost: Cost(run.JudgeSnapshot, prompt, completion), Paid: paid}
					for i, id := range b.RowIDs {
						x := 1 + float64(i)
						res.Scores = append(res.Scores, models.RunScore{RunID: run.ID, BatchID: b.ID, RowID: id, Label: i + 1, Score: &x})
					}
					return res
				}
				call := func(id string, prompt, completion int) models.PaidCall {
					return models.PaidCall{ID: id, PromptTokens: prompt, CompletionTokens: completion, Cost: Cost(run.JudgeSnapshot, prompt, completion)}
				}
				// The refused answer: two paid calls (an answer and its
				// repair), as the answer cache named them.
				p1, p2 := call("paid-1", 2000, 200), call("paid-2", 1000, 100)
				paid := answer(bs[0], "the paid answer", 2, 3000, 300, 900, p1, p2)
				first := answer(bs[0], "another execution's answer", 1, 1000, 100, 700, call("other-1", 1000, 100))
				switch {
				case tc.replayed:
					// The cache gives the paid answer back as it was paid
					// for, without latency, with its calls' identities.
					first = answer(bs[0], paid.Batch.Response, 2, 3000, 300, 0, p1, p2)
				case tc.alike:
					// The same answer from two calls of its own.
					first = answer(bs[0], paid.Batch.Response, 2, 3000, 300, 800, call("again-1", 2000, 200), call("again-2", 1000, 100))
				case tc.partly:
					// The first call replayed, the repair made again.
					first = answer(bs[0], "a replayed answer, repaired again", 2, 3500, 350, 300, p1, call("again-2", 1500, 150))
				}
				if tc.legacy {
					// Stored by a worker that kept no identities.
					first.Paid = nil
				}
				if err := env.db.SaveBatchResult(models.WithLeaseOwner(ctx, "new"), first); err != nil {
					t.Fatal(err)
				}
				if tc.legacy {
					if err := env.db.Gorm.Exec("UPDATE run_batches SET paid_calls = NULL WHERE id = ?", bs[0].ID).Error; err != nil {
						t.Fatal(err)
					}
				}
				before := env.getRun(run.ID)
				other := answer(bs[1], "the other batch's answer", 1, 10, 1, 5)
				err = tc.refuse(ctx, env, r, run, paid, other)
				if err != nil && models.ErrorCode(err) != models.EConflict {
					t.Fatalf("refused store: %v", err)
				}
				after := env.getRun(run.ID)
				if tc.group {
					before.Calls, before.PromptTokens, before.CompletionTokens = before.Calls+1, before.PromptTokens+10, before.CompletionTokens+1
					c := *before.CostUSD + (10*1+1*2)/1e6
					before.CostUSD = &c
				}
				wantCalls, wantPrompt, wantCompletion, wantCost := before.Calls, before.PromptTokens, before.CompletionTokens, *before.CostUSD
				if tc.wantCount {
					wantCalls, wantPrompt, wantCompletion = wantCalls+2, wantPrompt+3000, wantCompletion+300
					wantCost += (3000*1 + 300*2) / 1e6 // newRun's prices: $1 and $2 per million
				}
				if tc.partly {
					// Only the call the stored answer did not count.
					wantCalls, wantPrompt, wantCompletion = wantCalls+1, wantPrompt+1000, wantCompletion+100
					wantCost += (1000*1 + 100*2) / 1e6
				}
				if after.Calls != wantCalls || after.PromptTokens != wantPrompt || after.CompletionTokens != wantCompletion {
					t.Errorf("run counts %d calls, %d+%d tokens; want %d, %d+%d", after.Calls, after.PromptTokens, after.CompletionTokens, wantCalls, wantPrompt, wantCompletion)
				}
				if after.CostUSD == nil || math.Abs(*after.CostUSD-wantCost) > 1e-12 {
					t.Errorf("run cost %v, want %g", orNilCost(after.CostUSD), wantCost)
				}
				if b := env.batches(run.ID)[0]; b.Response != first.Batch.Response {
					t.Errorf("batch answer %q, want the first one stored, %q", b.Response, first.Batch.Response)
				}
			})
		}
	})
}
