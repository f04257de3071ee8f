package handlers

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestCompareShowsEachRunsCost: the compare page and its API show what
// each run's calls cost: calls, tokens, the cost in the run page's words
// ("as if paid" for a run answered from the answer cache that kept what
// the answers first cost) and the cost per sample (regression: the
// comparison of two runs said nothing of cost).
func TestCompareShowsEachRunsCost(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		in, out := 1.0, 2.0
		// A paid for every call; B was answered wholly from the answer
		// cache, which kept what the answers cost when first paid for.
		paid, asIf := 0.036, 0.036 // 30,000 prompt and 3,000 completion tokens at $1 and $2 per million
		set := func(run models.Run, prompt, completion, cachedCalls, cachedPrompt, cachedCompletion int, cost *float64) {
			run.Simulated = false
			run.JudgeSnapshot.Simulated = false
			run.JudgeSnapshot.PriceInputPerMTok, run.JudgeSnapshot.PriceOutputPerMTok = &in, &out
			run.Calls, run.PromptTokens, run.CompletionTokens, run.CostUSD = 60, prompt, completion, cost
			run.CachedCalls, run.CachedPromptTokens, run.CachedCompletionTokens = cachedCalls, cachedPrompt, cachedCompletion
			if err := env.db.Gorm.WithContext(ctx).Model(&models.Run{ID: run.ID}).
				Select("simulated", "judge_snapshot", "calls", "prompt_tokens", "completion_tokens", "cost_usd",
					"cached_calls", "cached_prompt_tokens", "cached_completion_tokens").Updates(&run).Error; err != nil {
				t.Fatal(err)
			}
		}
		set(x.batchEval, 30000, 3000, 0, 0, 0, &paid)
		set(x.gEval, 0, 0, 60, 30000, 3000, nil)
		a, b := x.batchEval, x.gEval
		samples := env.demo().dataset.RowCount
		perSample := asIf / float64(samples)

		body := env.get(fmt.Sprintf("/compare?a=%d&b=%d", a.ID, b.ID)).Body.String()
		cases := []struct {
			side string
			want []string
		}{
			{"a", []string{"60 calls", "33,000 tokens paid", "cost $0.036", dollars(paid/float64(samples)) + " per sample"}},
			{"b", []string{"60 calls", "0 tokens paid", "cost cached (all 60 calls answered from the answer cache; $0.036 as if paid, at the prices of this run)",
				dollars(perSample) + " as if paid per sample"}},
		}
		for _, tc := range cases {
			i := strings.Index(body, `data-testid="compare-cost-`+tc.side+`"`)
			if i < 0 {
				t.Errorf("compare page shows no cost for run %s", strings.ToUpper(tc.side))
				continue
			}
			line := body[i:min(len(body), i+600)]
			line = line[:strings.Index(line, "</p>")]
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("run %s's cost %q lacks %q", strings.ToUpper(tc.side), line, w)
				}
			}
		}

		api := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@cost.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		cmp := decode[APIComparison](t, api.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d", a.ID, b.ID), tok), http.StatusOK)
		for _, c := range []struct {
			name string
			got  APICompareCost
			asIf bool
		}{{"a", cmp.CostA, false}, {"b", cmp.CostB, true}} {
			if c.got.CostPerSample == nil || math.Abs(float64(*c.got.CostPerSample)-perSample) > 1e-9 {
				t.Errorf("API %s_cost.cost_per_sample_usd = %v, want %g", c.name, c.got.CostPerSample, perSample)
			}
			if c.got.CachedAsPaid != c.asIf || c.got.CostText == "" {
				t.Errorf("API %s_cost = %+v, want cached_counted_as_paid %v and the run page's words", c.name, c.got, c.asIf)
			}
		}
		if cmp.A.CostUSD == nil || cmp.A.Calls != 60 {
			t.Errorf("API a: calls %d, cost %v; want 60 calls and $0.036", cmp.A.Calls, cmp.A.CostUSD)
		}
	})
}
