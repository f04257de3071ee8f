package runner

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
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

// TestRepairFollowsItsAnswer: at concurrency 1 a batch's repair request
// goes right after its own first answer (the unit keeps its turn until it
// ends). A review found that without the turns the repair queued behind
// the first requests of every other unit of the round, so:
//   - when the round stops (here the first repair meets a long rate limit
//     and the run pauses), each unit still waiting for its repair's slot
//     was refused and stored done with its missing scores: gaps no resume
//     fills, where those units must stay pending for the resume;
//   - the slot the rate-limited call freed went to the next waiter before
//     the failing unit had stored its answer and stopped the round, so a
//     request was sent after the endpoint said to wait 300 s.
func TestRepairFollowsItsAnswer(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		var mu sync.Mutex
		var order []string
		limited := false // the first repair has met the rate limit
		afterLimit := 0  // requests received after that
		fj := newFakeJudge(t, simjudge.Options{Seed: 7, MissRate: 0.5}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			mu.Lock()
			defer mu.Unlock()
			kind := c.Key
			if c.Repair {
				kind += "/repair"
			}
			order = append(order, kind)
			if limited {
				afterLimit++
				return false
			}
			if c.Repair {
				limited = true
				writeAPIError(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "300"}, "slow down")
				return true
			}
			return false
		})
		r := env.startRunner(Config{})
		run := env.launch(r, env.newRun(fj.URL(), 1, 1, 10)) // 3 batches, one call at a time
		state := ""
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if state = string(env.job(*run.JobID).State); state == "scheduled" {
				break
			}
		}
		if state != "scheduled" {
			t.Fatalf("job is %s, want scheduled (snoozed for the rate limit)", state)
		}
		mu.Lock()
		seen, after := append([]string(nil), order...), afterLimit
		mu.Unlock()
		repairs := 0
		for i, k := range seen {
			if first, ok := strings.CutSuffix(k, "/repair"); ok {
				repairs++
				if i == 0 || seen[i-1] != first {
					t.Errorf("requests at concurrency 1: %v; want each repair right after its batch's answer", seen)
					break
				}
			}
		}
		if repairs == 0 {
			t.Fatalf("requests %v: no repair was asked, the test shows nothing", seen)
		}
		if after > 0 {
			t.Errorf("%d requests sent after a 429 with Retry-After 300 at concurrency 1 (requests %v); want none", after, seen)
		}
		sent := map[string]bool{}
		for _, k := range seen {
			sent[k] = true
		}
		for _, b := range env.batches(run.ID) {
			if b.Status != models.BatchDone || !strings.Contains(strings.Join(b.Problems, " "), "repair request failed") {
				continue
			}
			if key := storedKey(run, b); !sent[key+"/repair"] {
				t.Errorf("batch %d stored done with its missing scores for good, its repair never sent (refused as the round stopped): %v", b.ID, b.Problems)
			}
		}
	})
}
