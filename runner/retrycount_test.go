package runner

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/simjudge"
)

// TestFailedFirstTryCountedWhenRetryStops: a unit whose first try fails
// after the judge billed it (three 200s with usage and no choices) waits
// for the end-of-round retry. When the run stops before that retry is
// stored (the retry meets a long rate limit, another unit's retry halts
// the round, or the first pass itself meets the stop), what the first try
// cost is still on the run: its tokens and cost equal what the judge
// billed (regression: the first try's tokens were dropped with the
// pending retry).
func TestFailedFirstTryCountedWhenRetryStops(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// failing is how many batches (the first ones the judge sees)
		// fail their first try; the others are answered until
		// stopAfter of them have been, then every call meets a
		// rate limit of 300s.
		failing, stopAfter int
	}{
		{"the retry meets a long rate limit", 1, 2},
		{"another unit's retry halts the round", 2, 1},
		{"the first pass stops before the retry", 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachDB(t, func(t *testing.T, env *testEnv) {
				var mu sync.Mutex
				failing := map[string]bool{}
				var prompt, completion, answered int
				var inner http.Handler
				fj := newFakeJudge(t, simjudge.Options{Seed: 5}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					mu.Lock()
					defer mu.Unlock()
					if !c.Repair && len(failing) < tc.failing && !failing[c.Key] {
						failing[c.Key] = true
					}
					if failing[c.Key] && !c.Repair && c.N <= fastTuning.MaxAttempts {
						prompt, completion = prompt+70, completion+3
						w.Header().Set("Content-Type", "application/json")
						_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[],"usage":{"prompt_tokens":70,"completion_tokens":3,"total_tokens":73}}`))
						return true
					}
					if answered >= tc.stopAfter {
						writeAPIError(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "300"}, "quota exceeded")
						return true
					}
					rec := httptest.NewRecorder()
					inner.ServeHTTP(rec, r)
					var body struct {
						Usage struct {
							PromptTokens     int `json:"prompt_tokens"`
							CompletionTokens int `json:"completion_tokens"`
						} `json:"usage"`
					}
					if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
						t.Errorf("simulated answer: %v", err)
					}
					prompt, completion = prompt+body.Usage.PromptTokens, completion+body.Usage.CompletionTokens
					if !c.Repair {
						answered++
					}
					for k, v := range rec.Header() {
						w.Header()[k] = v
					}
					w.WriteHeader(rec.Code)
					_, _ = w.Write(rec.Body.Bytes())
					return true
				})
				inner = fj.inner
				// No breaker: the unusable answers are the point here.
				r := env.startRunner(Config{Breaker: BreakerConfig{Threshold: -1}})
				run := env.launch(r, env.newRun(fj.URL(), 1, 1, 30))
				wantJobState(t, env, run, rivertype.JobStateScheduled)
				got := env.getRun(run.ID)
				mu.Lock()
				defer mu.Unlock()
				if len(failing) != tc.failing {
					t.Fatalf("%d batches failed their first try, want %d", len(failing), tc.failing)
				}
				if got.PromptTokens != prompt || got.CompletionTokens != completion {
					t.Errorf("run counts %d+%d tokens; the judge billed %d+%d", got.PromptTokens, got.CompletionTokens, prompt, completion)
				}
				// newRun's prices: $1 and $2 per million.
				want := (float64(prompt)*1 + float64(completion)*2) / 1e6
				if got.CostUSD == nil || math.Abs(*got.CostUSD-want) > 1e-9 {
					t.Errorf("run cost %v, want %g", orNilCost(got.CostUSD), want)
				}
			})
		})
	}
}

// TestRetriedAddsUpEveryCount: the outcome stored for a retried unit
// counts both tries: calls, answered calls, attempts and tokens.
func TestRetriedAddsUpEveryCount(t *testing.T) {
	first := methods.Outcome{Failed: true, Err: errors.New("boom"), Calls: 20, Answered: 5, Attempts: 22,
		PromptTokens: 500, CompletionTokens: 50, Latency: time.Second}
	cases := []struct {
		name  string
		again methods.Outcome
		want  methods.Outcome
	}{
		{"the retry succeeds",
			methods.Outcome{Calls: 20, Answered: 20, Attempts: 20, PromptTokens: 2000, CompletionTokens: 200, Latency: time.Second},
			methods.Outcome{Calls: 40, Answered: 25, Attempts: 42, PromptTokens: 2500, CompletionTokens: 250, Latency: 2 * time.Second}},
		{"the retry fails too",
			methods.Outcome{Failed: true, Err: errors.New("again"), Calls: 20, Answered: 3, Attempts: 21, PromptTokens: 300, CompletionTokens: 30},
			methods.Outcome{Calls: 40, Answered: 8, Attempts: 43, PromptTokens: 800, CompletionTokens: 80, Latency: time.Second}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := retried(first, tc.again)
			if got.Calls != tc.want.Calls || got.Answered != tc.want.Answered || got.Attempts != tc.want.Attempts ||
				got.PromptTokens != tc.want.PromptTokens || got.CompletionTokens != tc.want.CompletionTokens || got.Latency != tc.want.Latency {
				t.Errorf("retried: calls %d, answered %d, attempts %d, tokens %d+%d, latency %s; want %d, %d, %d, %d+%d, %s",
					got.Calls, got.Answered, got.Attempts, got.PromptTokens, got.CompletionTokens, got.Latency,
					tc.want.Calls, tc.want.Answered, tc.want.Attempts, tc.want.PromptTokens, tc.want.CompletionTokens, tc.want.Latency)
			}
		})
	}
}
