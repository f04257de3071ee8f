package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestQueueSaysWhenTheOrderRanksNothing: an LLM-Eval run scores each
// sample once, so its queue in "most uncertain" order has no spread to
// rank by and says the samples come in dataset order; the same order on a
// BatchEval run (five rounds) and the disagreement order on the LLM-Eval
// run rank the samples and say nothing. The old queue fell back to dataset
// order silently.
func TestQueueSaysWhenTheOrderRanksNothing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		llm := env.waitRun(env.launch(d.methodForm("llmeval", map[string]string{"llmeval_scale": "0-5"})), 60*time.Second)
		batch := env.waitRun(env.launch(d.launchForm("5", "10")), 60*time.Second)
		for _, tc := range []struct {
			name     string
			runID    int64
			order    string
			wantNote bool
		}{
			{"llmeval uncertain", llm.ID, orderUncertain, true},
			{"llmeval disagreement", llm.ID, orderDisagreement, false},
			{"batcheval uncertain", batch.ID, orderUncertain, false},
		} {
			page := fmt.Sprintf("/datasets/%d/review?criterion=1&i=0&order=%s&run=%d&seed=1", d.dataset.ID, tc.order, tc.runID)
			rec := env.get(page)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: GET %s: %d", tc.name, page, rec.Code)
			}
			body := rec.Body.String()
			if got := strings.Contains(body, `data-testid="review-order-note"`); got != tc.wantNote {
				t.Errorf("%s: order note shown %v, want %v", tc.name, got, tc.wantNote)
			}
			if tc.wantNote && !strings.Contains(body, "the samples come in dataset order") {
				t.Errorf("%s: the note does not say the samples come in dataset order", tc.name)
			}
		}
	})
}
