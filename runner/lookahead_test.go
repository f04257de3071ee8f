package runner

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestUnitsAheadKeepTheConcurrency: a round's units start ahead of their
// turn (for their cache lookups), yet the judge never has more calls in
// flight than the run's concurrency, has that many when there is work
// for them, and is asked for each batch once.
func TestUnitsAheadKeepTheConcurrency(t *testing.T) {
	t.Parallel()
	for _, c := range []int{1, 2} {
		t.Run(fmt.Sprintf("C=%d", c), func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				var peak atomic.Int64
				var fj *fakeJudge
				fj = newFakeJudge(t, simjudge.Options{Seed: 3, Latency: 20 * time.Millisecond}, func(http.ResponseWriter, *http.Request, judgeCall) bool {
					n := int64(fj.InFlight())
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					return false
				})
				r := env.startRunner(Config{})
				run := env.waitFinished(env.launch(r, env.newRun(fj.URL(), 2, c, 30)).ID, 60*time.Second)
				if run.Status != models.RunSucceeded {
					t.Fatalf("run %s: %s", run.Status, run.Error)
				}
				if p := peak.Load(); p != int64(c) {
					t.Errorf("at most %d calls were in flight at once, want exactly the concurrency %d", p, c)
				}
				for _, k := range fj.Keys() {
					if n := fj.Count(k, false); n != 1 {
						t.Errorf("batch %s was requested %d times, want once", k, n)
					}
				}
				if fj.Total() != run.Calls || run.Calls != run.BatchesTotal {
					t.Errorf("judge saw %d requests, run counted %d calls for %d batches", fj.Total(), run.Calls, run.BatchesTotal)
				}
			})
		})
	}
}
