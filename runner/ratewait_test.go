package runner

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestShortRateLimitShowsWait: a Retry-After short enough for the calls to
// sleep through inside the run (up to 2 minutes) shows on the run as
// waiting for its judge, with why and until when, and the wait is cleared
// as soon as the calls go on. It used to show "running" with no reason.
func TestShortRateLimitShowsWait(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		retried := make(chan struct{})
		release := make(chan struct{})
		fj := newFakeJudge(t, simjudge.Options{Seed: 3}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			switch c.Total {
			case 1:
				writeAPIError(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "1"}, "slow down")
				return true
			case 2:
				// The retry after the wait: hold it while the test looks.
				close(retried)
				<-release
			}
			return false
		})
		r := env.startRunner(Config{})
		t.Cleanup(func() {
			select {
			case <-release:
			default:
				close(release)
			}
		})
		run := env.launch(r, env.newRun(fj.URL(), 1, 1, 30))
		waiting := env.waitRun(run.ID, 10*time.Second, "waiting for its judge", models.Run.WaitingForJudge)
		for _, want := range []string{"HTTP 429", "The run's calls wait 1s (as the judge asked), and go on by themselves at ", "slow down"} {
			if !strings.Contains(waiting.WaitingError, want) {
				t.Errorf("waiting error %q does not say %q", waiting.WaitingError, want)
			}
		}
		select {
		case <-retried:
		case <-time.After(10 * time.Second):
			t.Fatal("the rate-limited call was not retried")
		}
		if got := env.getRun(run.ID); got.WaitingForJudge() || got.Status != models.RunRunning {
			t.Errorf("calls go on, but the run is %s, waiting for its judge %v (%q)", got.Status, got.WaitingForJudge(), got.WaitingError)
		}
		close(release)
		if run = env.waitFinished(run.ID, 30*time.Second); run.Status != models.RunSucceeded {
			t.Fatalf("run ended %s: %s", run.Status, run.Error)
		}
		if run.Retries != 1 {
			t.Errorf("run counts %d retries, want 1 (the one 429)", run.Retries)
		}
	})
}

// TestRetriesCountedWhileRateLimited: every attempt the judge refused with
// a rate limit is counted in the run's retries as it happens, in the
// database, although no unit is stored (the run is put aside until the
// judge's time): attempts used to be counted only with a stored answer, so
// a judge answering 429 to everything left Retries at 0.
func TestRetriesCountedWhileRateLimited(t *testing.T) {
	tests := []struct {
		name   string
		header map[string]string
	}{
		// Longer than a call waits: each call's one attempt ends it.
		{"long Retry-After", map[string]string{"Retry-After": "300"}},
		// No time named: each call retries with backoff, then ends.
		{"no Retry-After", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				var refused atomic.Int64
				fj := newFakeJudge(t, simjudge.Options{}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					writeAPIError(w, http.StatusTooManyRequests, tc.header, "quota exceeded")
					refused.Add(1)
					return true
				})
				r := env.startRunner(Config{})
				run := env.launch(r, env.newRun(fj.URL(), 1, 3, 30))
				deadline := time.Now().Add(15 * time.Second)
				for env.job(*run.JobID).State != rivertype.JobStateScheduled {
					if time.Now().After(deadline) {
						t.Fatal("the rate-limited run was not put aside")
					}
					time.Sleep(20 * time.Millisecond)
				}
				got := env.getRun(run.ID)
				if got.BatchesDone != 0 || refused.Load() == 0 {
					t.Fatalf("%d batches stored, %d requests refused; want none stored, some refused", got.BatchesDone, refused.Load())
				}
				if int64(got.Retries) != refused.Load() {
					t.Errorf("run counts %d retries; the judge refused %d requests", got.Retries, refused.Load())
				}
			})
		})
	}
}
