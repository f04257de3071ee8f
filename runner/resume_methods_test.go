package runner

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestKilledSampleWiseRunMatchesUninterruptedRun is TestResumedRunMatches-
// UninterruptedRun for the three sample-wise methods: a G-Eval (with
// logprobs, and sampling n where the endpoint gives none), LLM-Eval or
// CloserLook run killed with calls in flight and resumed by another worker
// ends with the same report and CSV, byte for byte (the counters aside: the
// calls lost in the crash are paid twice), as the same run nobody
// interrupted. Every database gives the same bytes as the first one: the
// figures may not depend on where the scores were stored.
func TestKilledSampleWiseRunMatchesUninterruptedRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		method evaluator.Method
		ms     evaluator.MethodSettings
		fault  fault
	}{
		{"geval logprobs", evaluator.MethodGEval, evaluator.MethodSettings{Samples: 20, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}, nil},
		{"geval sampling", evaluator.MethodGEval, evaluator.MethodSettings{Samples: 20, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}, stripLogprobs},
		{"llmeval", evaluator.MethodLLMEval, evaluator.MethodSettings{Samples: 1, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}, nil},
		{"closerlook", evaluator.MethodCloserLook, evaluator.MethodSettings{Samples: 20, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var first []byte // the first database's report, for the others
			eachDB(t, func(t *testing.T, env *testEnv) {
				// answered calls go through before the judge holds the rest.
				const answered = 8
				var holding atomic.Bool
				var admitted atomic.Int32
				var fj *fakeJudge
				fj = newFakeJudge(t, simjudge.Options{Seed: 9, MissRate: 0.1}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					if holding.Load() && admitted.Add(1) > answered {
						fj.hang(r)
						return true
					}
					if tc.fault != nil {
						return tc.fault(w, r, c)
					}
					return false
				})
				t.Cleanup(fj.releaseHeld)
				newRun := func() models.Run {
					r := env.newRun(fj.URL(), 1, 2, 30)
					r.Method = string(tc.method)
					r.MethodSettings = tc.ms
					r.Settings.Seed = 11
					r.Settings.NoCache = true
					return r
				}

				a := env.startRunner(Config{LeaseTTL: leaseTTL})
				whole := env.waitFinished(env.launch(a, newRun()).ID, 90*time.Second)
				if !whole.Finished() || whole.BatchesDone != 30 {
					t.Fatalf("uninterrupted run %s with %d units done (%s)", whole.Status, whole.BatchesDone, whole.Error)
				}

				holding.Store(true)
				run := env.launch(a, newRun())
				env.waitRun(run.ID, 15*time.Second, "two calls held", func(r models.Run) bool {
					return fj.InFlight() == 2
				})
				kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := a.Kill(kctx); err != nil {
					t.Errorf("kill: %v", err)
				}
				if got := env.getRun(run.ID); got.Finished() || got.BatchesDone == 0 {
					t.Fatalf("at the kill the run is %s with %d units done: nothing to resume", got.Status, got.BatchesDone)
				}
				holding.Store(false)
				b := env.startRunner(Config{LeaseTTL: leaseTTL})
				resumed := env.waitFinished(run.ID, 90*time.Second, func() { b.Sweep(context.Background()) })
				if resumed.Status != whole.Status || resumed.MissingScores != whole.MissingScores {
					t.Errorf("resumed run %s with %d missing scores, uninterrupted %s with %d", resumed.Status, resumed.MissingScores, whole.Status, whole.MissingScores)
				}

				w, g := exportWithoutCounters(t, env, whole.ID), exportWithoutCounters(t, env, resumed.ID)
				if !bytes.Equal(w.json, g.json) {
					t.Errorf("the resumed run's report differs from the uninterrupted run's:\nresumed:       %.800s\nuninterrupted: %.800s", g.json, w.json)
				}
				if !bytes.Equal(w.csv, g.csv) {
					t.Errorf("the resumed run's CSV differs from the uninterrupted run's")
				}
				mu.Lock()
				defer mu.Unlock()
				if first == nil {
					first = w.json
				} else if !bytes.Equal(first, w.json) {
					t.Errorf("this database's report differs from the first database's:\nhere:  %.800s\nfirst: %.800s", w.json, first)
				}
			})
		})
	}
}

// TestCachedRerunOfEachMethodMatches is TestIdenticalRerunIsAnsweredFrom-
// TheCache for the three sample-wise methods: an identical re-run sends the
// judge nothing, counts every call as cached, and reports the same figures
// and CSV as the run that paid for the answers.
func TestCachedRerunOfEachMethodMatches(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		method evaluator.Method
		ms     evaluator.MethodSettings
		fault  fault
		// probes is how many requests the re-run may send. Regression:
		// G-Eval's one probe of whether the endpoint gives
		// log-probabilities was sent again (for whichever of the units
		// started at once asked first, or because the endpoint's refusal
		// was not kept): a re-run is now wholly answered from the cache.
		probes int
	}{
		{"geval logprobs", evaluator.MethodGEval, evaluator.MethodSettings{Samples: 20, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}, nil, 0},
		{"geval sampling", evaluator.MethodGEval, evaluator.MethodSettings{Samples: 20, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}, stripLogprobs, 0},
		{"geval logprobs refused", evaluator.MethodGEval, evaluator.MethodSettings{Samples: 20, UseLogprobs: true, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}, refuseLogprobs, 0},
		{"geval endpoint ignoring n", evaluator.MethodGEval, evaluator.MethodSettings{Samples: 5, UseLogprobs: false, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}, ignoreN, 0},
		{"llmeval", evaluator.MethodLLMEval, evaluator.MethodSettings{Samples: 1, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalHundred}, nil, 0},
		{"llmeval schema refused", evaluator.MethodLLMEval, evaluator.MethodSettings{Samples: 1, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalHundred}, refuseSchema, 0},
		{"closerlook", evaluator.MethodCloserLook, evaluator.MethodSettings{Samples: 20, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				fj := newFakeJudge(t, simjudge.Options{Seed: 5, MissRate: 0.1}, tc.fault)
				r := env.startRunner(Config{})
				finish := func() models.Run {
					run := env.newRun(fj.URL(), 1, 2, 30)
					run.Method = string(tc.method)
					run.MethodSettings = tc.ms
					run = env.waitFinished(env.launch(r, run).ID, 60*time.Second)
					if !run.Finished() || run.BatchesDone != 30 {
						t.Fatalf("run %d %s with %d units done: %s", run.ID, run.Status, run.BatchesDone, run.Error)
					}
					return run
				}
				first := finish()
				sent := fj.Total()
				second := finish()
				if got := fj.Total() - sent; got > tc.probes {
					t.Errorf("the judge saw %d more requests for the identical re-run, want at most %d", got, tc.probes)
				}
				if second.Calls != first.Calls || second.CachedCalls < second.Calls-tc.probes || (tc.probes == 0 && second.PromptTokens != 0) {
					t.Errorf("re-run: %d calls, %d cached, %d prompt tokens; want %d calls, all but %d cached", second.Calls, second.CachedCalls, second.PromptTokens, first.Calls, tc.probes)
				}
				if second.Status != first.Status || second.MissingScores != first.MissingScores {
					t.Errorf("re-run %s with %d missing, first %s with %d", second.Status, second.MissingScores, first.Status, first.MissingScores)
				}
				a, b := exportWithoutCounters(t, env, first.ID), exportWithoutCounters(t, env, second.ID)
				if !bytes.Equal(a.json, b.json) {
					t.Errorf("the re-run's report differs from the first run's:\nre-run: %.800s\nfirst:  %.800s", b.json, a.json)
				}
				if !bytes.Equal(a.csv, b.csv) {
					t.Errorf("the re-run's CSV differs from the first run's")
				}
			})
		})
	}
}

// TestRunTakenOverAfterALostLeaseMatchesUninterruptedRun: a BatchEval run
// whose worker loses its lease in the middle of round 1 (another worker
// takes it over, then dies: its lease lapses) is resumed by a worker
// sweeping for lapsed leases, and ends with the batches, scores and
// figures of the same run nobody interrupted.
func TestRunTakenOverAfterALostLeaseMatchesUninterruptedRun(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{Seed: 9, Latency: 50 * time.Millisecond}, nil)
		newRun := func() models.Run {
			r := env.newRun(fj.URL(), 3, 1, 30)
			r.Settings.Seed = 11
			r.Settings.NoCache = true
			r.Settings.Composition = evaluator.Heterogeneous
			return r
		}
		a := env.startRunner(Config{LeaseTTL: 2 * time.Second})
		whole := env.waitFinished(env.launch(a, newRun()).ID, 90*time.Second)
		if whole.Status != models.RunSucceeded {
			t.Fatalf("uninterrupted run %s (%s)", whole.Status, whole.Error)
		}

		run := env.launch(a, newRun())
		env.waitRun(run.ID, 15*time.Second, "two batches stored", func(r models.Run) bool { return r.BatchesDone >= 2 })
		if err := env.db.Gorm.Exec(`UPDATE runs SET lease_owner = 'successor', lease_until = ? WHERE id = ?`,
			time.Now().UTC().Add(time.Second), run.ID).Error; err != nil {
			t.Fatal(err)
		}
		if got := env.getRun(run.ID); got.Finished() {
			t.Fatalf("the run finished before its lease was taken: nothing was resumed")
		}
		b := env.startRunner(Config{LeaseTTL: 2 * time.Second})
		resumed := env.waitFinished(run.ID, 90*time.Second, func() { b.Sweep(context.Background()) })
		if resumed.Status != models.RunSucceeded {
			t.Fatalf("resumed run %s (%s)", resumed.Status, resumed.Error)
		}
		sameFiguresAsUninterrupted(t, env, whole.ID, resumed.ID, "after the takeover")
	})
}
