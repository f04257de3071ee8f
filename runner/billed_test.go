package runner

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestBilledEmptyAnswerIsCounted: a judge whose first answer to every
// batch is a 200 with usage but no choices (retried as malformed). The
// provider billed it, so the run's tokens and cost are the usage of every
// answer it returned, the unusable ones included (regression: their usage
// was dropped and the run read cheaper than its bill). Repair requests go
// through the same client, so their unusable answers are counted alike.
func TestBilledEmptyAnswerIsCounted(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var mu sync.Mutex
		var prompt, completion, empties int // every answer's usage, as the judge reported it
		var inner http.Handler
		fj := newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if c.N == 1 {
				mu.Lock()
				prompt, completion, empties = prompt+70, completion+3, empties+1
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"id":"x","object":"chat.completion","choices":[],"usage":{"prompt_tokens":70,"completion_tokens":3,"total_tokens":73}}`))
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
			mu.Lock()
			prompt, completion = prompt+body.Usage.PromptTokens, completion+body.Usage.CompletionTokens
			mu.Unlock()
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return true
		})
		inner = fj.inner
		r := env.startRunner(Config{})
		// One call at a time: the empty answers never come three in a row,
		// so the circuit breaker stays shut.
		run := env.launch(r, env.newRun(fj.URL(), 1, 1, 30))
		run = env.waitFinished(run.ID, 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s: %s", run.Status, run.Error)
		}
		mu.Lock()
		defer mu.Unlock()
		if empties == 0 {
			t.Fatal("the judge sent no empty answer")
		}
		if run.PromptTokens != prompt || run.CompletionTokens != completion {
			t.Errorf("run counts %d+%d tokens; the judge billed %d+%d (%d empty answers of 70+3)",
				run.PromptTokens, run.CompletionTokens, prompt, completion, empties)
		}
		// newRun's prices: $1 and $2 per million.
		want := (float64(prompt)*1 + float64(completion)*2) / 1e6
		if run.CostUSD == nil || math.Abs(*run.CostUSD-want) > 1e-9 {
			t.Errorf("run cost %v, want %g", orNilCost(run.CostUSD), want)
		}
	})
}

func orNilCost(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}
