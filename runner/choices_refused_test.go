package runner

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestOneAnswerACallIsLearnedOncePerRun: a CloserLook run against an
// endpoint that refuses n above 1 as llama.cpp's server does sends that
// refused request once, not once per sample (regression: 16 samples of 3
// answers made 64 calls, one refused per sample), records what it learned
// for a resume, and counts every call the endpoint saw.
func TestOneAnswerACallIsLearnedOncePerRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		var mu sync.Mutex
		refused, single := 0, 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				N int `json:"n"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if req.N > 1 {
				refused++
				writeAPIError(w, http.StatusBadRequest, nil, "Only one completion choice is allowed")
				return
			}
			single++
			writeCompletion(w, "The response is fine.\nRating: 2")
		}))
		t.Cleanup(srv.Close)

		const answers = 3
		run := env.newRun(srv.URL+"/v1", 1, 4, 10)
		run.Method = string(evaluator.MethodCloserLook)
		run.MethodSettings = evaluator.MethodSettings{Samples: answers, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}
		run = env.launch(env.jobs, run)
		env.startRunner(Config{})
		run = env.waitFinished(run.ID, 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s), want succeeded", run.Status, run.Error)
		}
		rows := len(env.scores(run.ID))
		mu.Lock()
		defer mu.Unlock()
		if refused != 1 || single != rows*answers {
			t.Errorf("%d refused requests and %d of one answer for %d samples; want 1 and %d", refused, single, rows, rows*answers)
		}
		if run.Calls != refused+single {
			t.Errorf("the run counts %d calls, the endpoint saw %d", run.Calls, refused+single)
		}
		if got := run.MethodSettings.Learned["several_choices"]; got != "refused" {
			t.Errorf("the run records several_choices %q, want refused", got)
		}
	})
}
