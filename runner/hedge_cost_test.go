package runner

import (
	"math"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestHedgedRunCostIsItsTokensAtItsPrices: a priced run that re-sends its
// slow calls counts each re-send as a paid call. Whatever path a call took
// (answered, re-sent and won, re-sent and lost), the run's cost must be its
// counted tokens at its prices, so that the cost a page shows and the
// tokens beside it agree; and the plain run of the same inputs, which
// re-sends nothing, makes fewer calls and tokens and costs less.
//
// The run's one slow call is its first request after four rounds (twelve
// answers, more than the Hedger needs to time a call), and in the hedged
// run it is held until the runner gives up on it (its copy answered): a
// machine so loaded that its ordinary answers take as long as the slow
// one's old fixed delay (1.5 s) still re-sends it (the test failed once in
// a fresh-clone CI at load 13, nothing re-sent).
func TestHedgedRunCostIsItsTokensAtItsPrices(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const rounds = 5
		run := func(hedge bool) models.Run {
			// The plain run has no copy to wait for: its slow call answers
			// after 1.5 s. The hedged run's waits for its copy, at most 25 s
			// (the call's timeout is 30): a copy never sent fails the test.
			hold := 1500 * time.Millisecond
			if hedge {
				hold = 25 * time.Second
			}
			fj := newFakeJudge(t, simjudge.Options{Seed: 4}, heldAfter(hedgeCostLatency, 4*3, hold))
			r := env.startRunner(Config{})
			spec := env.newRun(fj.URL(), rounds, 3, 30)
			spec.Settings.Seed = 77
			spec.Settings.NoCache = true
			spec.Settings.HedgeSlowCalls = hedge
			got := env.waitFinished(env.launch(r, spec).ID, 2*time.Minute)
			if got.Status != models.RunSucceeded {
				t.Fatalf("run ended %s: %s", got.Status, got.Error)
			}
			return got
		}
		plain, hedged := run(false), run(true)
		for _, r := range []models.Run{plain, hedged} {
			want := r.JudgeSnapshot.Cost(r.PromptTokens, r.CompletionTokens)
			if r.CostUSD == nil || want == nil || math.Abs(*r.CostUSD-*want) > 1e-12*math.Max(1, *want) {
				t.Errorf("run %d (hedged %v): cost %v for %d prompt and %d completion tokens, which cost %v at its prices",
					r.ID, r.Settings.HedgeSlowCalls, r.CostUSD, r.PromptTokens, r.CompletionTokens, want)
			}
			if r.CachedCalls != 0 {
				t.Errorf("run %d: %d calls from the answer cache, with the cache off", r.ID, r.CachedCalls)
			}
		}
		if hedged.Calls <= plain.Calls || hedged.PromptTokens <= plain.PromptTokens || *hedged.CostUSD <= *plain.CostUSD {
			t.Errorf("the hedged run (%d calls, %d prompt tokens, $%v) paid no more than the plain one (%d, %d, $%v)",
				hedged.Calls, hedged.PromptTokens, *hedged.CostUSD, plain.Calls, plain.PromptTokens, *plain.CostUSD)
		}
	})
}

// hedgeCostLatency is how long the fake judge takes to answer an ordinary
// call in the hedge tests (a variable, so that a loaded machine's slow
// answers can be imitated by setting it higher: at 800 ms the tests'
// former 1.5 s slow calls were re-sent no more).
var hedgeCostLatency = 20 * time.Millisecond

// heldAfter is a fault that delays every request by latency, except the
// first request that arrives after the first `after` ones: that one is
// held until the runner gives it up (its context ends: a copy of it
// answered first) or for hold, whichever comes first. Its copy (the same
// batch again) is an ordinary request.
func heldAfter(latency time.Duration, after int, hold time.Duration) fault {
	var taken atomic.Bool
	return func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
		wait := latency
		if c.Total > after && !c.Repair && !c.Probe && taken.CompareAndSwap(false, true) {
			wait = hold
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
		}
		return false
	}
}
