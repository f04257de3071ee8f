package runner

import (
	"math"
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
func TestHedgedRunCostIsItsTokensAtItsPrices(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		const rounds = 4
		run := func(hedge bool) models.Run {
			fj := newFakeJudge(t, simjudge.Options{Seed: 4}, slowFirstOfSeed(20*time.Millisecond, 1500*time.Millisecond))
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
