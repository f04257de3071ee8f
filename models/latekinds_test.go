package models_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// lateJudges are the judges whose late counts word a cost: the built-in
// simulated judge (no price: its counters read "$0 (simulated judge)"), a
// judge without prices (unknown, never $0) and a priced one ($1 and $2 per
// million tokens: 100 prompt and 10 completion tokens cost $0.00012, as
// every page writes money).
var lateJudges = []struct {
	name      string
	simulated bool
	prices    *[2]float64
	cost      string // the words of the cost of 100 prompt and 10 completion tokens
}{
	{name: "simulated judge", simulated: true, prices: &[2]float64{0, 0}, cost: "tokens, $0 (simulated judge)."},
	{name: "judge without prices", cost: "tokens, cost unknown (the judge has no price)."},
	{name: "priced judge", prices: &[2]float64{1, 2}, cost: "tokens, $0.00012."},
}

// sixDecimals is an amount written to the micro-dollar ("$0.000000"),
// which no page writes.
var sixDecimals = regexp.MustCompile(`\$[0-9]+\.[0-9]{6}\b`)

// runOnJudge makes a BatchEval run named name with one batch of two
// samples on a judge of lateJudges[j], claimed by owner (claimedRun).
func runOnJudge(t *testing.T, db *models.DB, w *world, name string, j int, owner string) (models.Run, []models.RunBatch, []int64) {
	t.Helper()
	return claimedRunWith(t, db, w, name, owner, func(r *models.Run) {
		r.Simulated, r.JudgeSnapshot.Simulated = lateJudges[j].simulated, lateJudges[j].simulated
		r.JudgeSnapshot.PriceInputPerMTok, r.JudgeSnapshot.PriceOutputPerMTok = nil, nil
		if p := lateJudges[j].prices; p != nil {
			in, out := p[0], p[1]
			r.JudgeSnapshot.PriceInputPerMTok, r.JudgeSnapshot.PriceOutputPerMTok = &in, &out
		}
	})
}

// lateCounts are the run's late-count events.
func lateCounts(t *testing.T, db *models.DB, runID int64) []models.RunEvent {
	t.Helper()
	evs, err := db.RunEvents(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	var out []models.RunEvent
	for _, ev := range evs {
		if ev.Kind == models.RunEventLateCount {
			out = append(out, ev)
		}
	}
	return out
}

// TestLateCountCostReadsAsTheCounters: a late count's event words its
// cost as the run's counters do: "$0 (simulated judge)" for the built-in
// simulated judge, unknown for a judge without prices, and a priced
// judge's as every page writes money (regression: "$0.000000" for the
// simulated judge, and six decimals for every amount). Both ways a count
// lands on a cancelled run: the holder's answer stored, and paid calls
// counted without an answer.
func TestLateCountCostReadsAsTheCounters(t *testing.T) {
	counts := []struct {
		name  string
		count func(ctx context.Context, db *models.DB, r models.Run, b models.RunBatch, ids []int64, cost *float64) error
	}{
		{"answer stored", func(ctx context.Context, db *models.DB, r models.Run, b models.RunBatch, ids []int64, cost *float64) error {
			b.Status, b.Calls, b.Attempts, b.PromptTokens, b.CompletionTokens, b.Response = models.BatchDone, 1, 1, 100, 10, "answer"
			res := models.BatchResult{Batch: b, Cost: cost, Paid: []models.PaidCall{{ID: fmt.Sprint("stored-", r.ID), PromptTokens: 100, CompletionTokens: 10, Cost: cost}}}
			for i, id := range ids {
				x := float64(i + 1)
				res.Scores = append(res.Scores, models.RunScore{RunID: r.ID, BatchID: b.ID, RowID: id, Label: i + 1, Score: &x})
			}
			return db.SaveBatchResult(ctx, res)
		}},
		{"paid calls counted", func(ctx context.Context, db *models.DB, r models.Run, b models.RunBatch, _ []int64, cost *float64) error {
			return db.AddUnitSpend(ctx, r.ID, b.ID, models.SpendOf([]models.PaidCall{{ID: fmt.Sprint("paid-", r.ID), PromptTokens: 100, CompletionTokens: 10, Cost: cost}}))
		}},
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		for j, judge := range lateJudges {
			for _, c := range counts {
				t.Run(judge.name+", "+c.name, func(t *testing.T) {
					ctx := models.WithLeaseOwner(context.Background(), "holder/1")
					r, bs, ids := runOnJudge(t, db, w, judge.name+" "+c.name, j, "holder/1")
					if _, err := db.RequestCancel(ctx, w.ws.ID, r.ID); err != nil {
						t.Fatal(err)
					}
					if err := c.count(ctx, db, r, bs[0], ids, r.JudgeSnapshot.Cost(100, 10)); err != nil {
						t.Fatal(err)
					}
					evs := lateCounts(t, db, r.ID)
					if len(evs) != 1 {
						t.Fatalf("%d late-count events, want 1", len(evs))
					}
					if msg := evs[0].Message; !strings.Contains(msg, "1 call, 100 prompt and 10 completion "+judge.cost) || sixDecimals.MatchString(msg) {
						t.Errorf("late-count event %q, want its cost worded %q", msg, judge.cost)
					}
				})
			}
		}
	})
}

// TestCountsAfterTheEndHaveLateCount: every count a run can take after it
// ended besides an answer's, explained by a late_count event, one per
// count: the call writing G-Eval's evaluation steps (SaveRunMethodSettings,
// by the holder of a cancelled run, which keeps its lease), a call
// answered from the answer cache (AddCachedCall), a probe of the breaker
// (AddRunProbe) and failed attempts (AddRunRetries), on a cancelled run
// and on one that failed; on a run still going, none (regression: each
// changed an ended run's figures with nothing saying why). The cost, when
// the count has one, reads as the run's counters say it.
func TestCountsAfterTheEndHaveLateCount(t *testing.T) {
	kinds := []struct {
		name  string
		count func(ctx context.Context, db *models.DB, r models.Run) error
		// words the event says, and the cost's words follow (lateJudges)
		words    string
		withCost bool
	}{
		{name: "G-Eval steps call", words: "The call writing G-Eval's evaluation steps", withCost: true,
			count: func(ctx context.Context, db *models.DB, r models.Run) error {
				ms := r.MethodSettings
				ms.GEvalSteps = map[string]string{"coherence": "1. Read."}
				return db.SaveRunMethodSettings(ctx, r.ID, ms, 100, 10, r.JudgeSnapshot.Cost(100, 10))
			}},
		{name: "answer from the cache", words: "was answered from the answer cache",
			count: func(ctx context.Context, db *models.DB, r models.Run) error {
				return db.AddCachedCall(ctx, r.ID, 100, 10)
			}},
		{name: "probe", words: "A probe of the judge", withCost: true,
			count: func(ctx context.Context, db *models.DB, r models.Run) error {
				return db.AddRunProbe(ctx, r.ID, 100, 10)
			}},
		{name: "retry", words: "added to the run's retries: 1 failed attempt",
			count: func(ctx context.Context, db *models.DB, r models.Run) error {
				return db.AddRunRetries(ctx, r.ID, 1)
			}},
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		w := newWorld(t, db)
		for _, k := range kinds {
			for j, judge := range lateJudges {
				if !k.withCost && j > 0 {
					continue
				}
				for _, end := range []string{models.RunCancelled, models.RunFailed} {
					t.Run(k.name+", "+judge.name+", "+end, func(t *testing.T) {
						holder := models.WithLeaseOwner(context.Background(), "holder/1")
						r, _, _ := runOnJudge(t, db, w, k.name+" "+judge.name+" "+end, j, "holder/1")
						// While the run goes: counted, no event.
						if err := k.count(holder, db, r); err != nil {
							t.Fatal(err)
						}
						if evs := lateCounts(t, db, r.ID); len(evs) != 0 {
							t.Fatalf("late-count events %+v on a run still going, want none", evs)
						}
						ctx, how := holder, "still out when the run was cancelled"
						if end == models.RunCancelled {
							// A cancel keeps the lease: its holder counts.
							if _, err := db.RequestCancel(holder, w.ws.ID, r.ID); err != nil {
								t.Fatal(err)
							}
						} else {
							if err := db.FinishRun(holder, r.ID, end, "stopped"); err != nil {
								t.Fatal(err)
							}
							// Counted with no lease (the run has none once
							// it failed): the steps call's fence is then
							// not asked.
							ctx, how = context.Background(), "after the run ended"
						}
						before, err := db.GetRun(ctx, r.ID)
						if err != nil {
							t.Fatal(err)
						}
						for range 2 {
							if err := k.count(ctx, db, r); err != nil {
								t.Fatal(err)
							}
						}
						after, err := db.GetRun(ctx, r.ID)
						if err != nil {
							t.Fatal(err)
						}
						if after.Status != end {
							t.Fatalf("run %s, want %s", after.Status, end)
						}
						counted := after.Calls - before.Calls + after.CachedCalls - before.CachedCalls + after.ProbeCalls - before.ProbeCalls + after.Retries - before.Retries
						if counted != 2 {
							t.Fatalf("the two counts added %d to the run's counters, want 2", counted)
						}
						evs := lateCounts(t, db, r.ID)
						if len(evs) != 2 {
							t.Fatalf("%d late-count events, want 2 (one per count): %+v", len(evs), evs)
						}
						for _, ev := range evs {
							msg := ev.Message
							if !strings.Contains(msg, k.words) || !strings.Contains(msg, how) || !strings.Contains(msg, "downloaded before then do not include it") {
								t.Errorf("late-count event %q, want it to say %q, %q, and that reports downloaded before do not include it", msg, k.words, how)
							}
							if k.withCost && !strings.Contains(msg, "100 prompt and 10 completion "+judge.cost) {
								t.Errorf("late-count event %q, want its tokens and cost worded %q", msg, judge.cost)
							}
							if strings.Contains(msg, "(batch ") || sixDecimals.MatchString(msg) {
								t.Errorf("late-count event %q names a batch or a six-decimal cost", msg)
							}
							if end == models.RunCancelled && ev.Worker != "holder/1" {
								t.Errorf("late-count event by worker %q, want holder/1", ev.Worker)
							}
						}
					})
				}
			}
		}
	})
}
