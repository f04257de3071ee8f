package runner

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// faultCase is one way the judge misbehaves, injected before the simulated
// judge answers, on a run of one round of three batches.
type faultCase struct {
	name string
	// timeoutSeconds is the judge's per-attempt timeout (default 30).
	timeoutSeconds int
	// fault builds the fault; tg picks on the first batch the judge sees.
	fault func(tg *target, answers testAnswers) fault
	// check asserts on the finished run; tb is the target batch (zero
	// when it was never stored).
	check func(t *testing.T, env *testEnv, fj *fakeJudge, run models.Run, tb models.RunBatch, tg string)
}

// testAnswers are the golden judge answers in testdata.
type testAnswers struct{ noScores, repairNoScores string }

func TestJudgeFaults(t *testing.T) {
	t.Parallel()
	tests := []faultCase{
		{
			name: "429 with Retry-After, then OK",
			fault: func(tg *target, _ testAnswers) fault {
				return func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					if tg.is(c) && !c.Repair && c.N == 1 {
						writeAPIError(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "1"}, "slow down")
						return true
					}
					return false
				}
			},
			check: func(t *testing.T, env *testEnv, fj *fakeJudge, run models.Run, tb models.RunBatch, tg string) {
				wantSucceeded(t, run)
				if tb.Attempts != 2 || tb.Calls != 1 || tb.Status != models.BatchDone {
					t.Errorf("target batch: attempts %d, calls %d, status %s; want 2, 1, done", tb.Attempts, tb.Calls, tb.Status)
				}
				times := fj.Times(tg, false)
				if len(times) != 2 {
					t.Fatalf("target batch requested %d times, want 2", len(times))
				}
				// Retry-After: 1 means a second; allow for clock granularity only.
				if gap := times[1].Sub(times[0]); gap < 990*time.Millisecond {
					t.Errorf("retried %s after the 429, want at least the 1s Retry-After", gap)
				}
				wantOthersClean(t, env, run, tg)
			},
		},
		{
			name: "500 twice, then OK",
			fault: func(tg *target, _ testAnswers) fault {
				return func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					if tg.is(c) && !c.Repair && c.N <= 2 {
						writeAPIError(w, http.StatusInternalServerError, nil, "boom")
						return true
					}
					return false
				}
			},
			check: func(t *testing.T, env *testEnv, fj *fakeJudge, run models.Run, tb models.RunBatch, tg string) {
				wantSucceeded(t, run)
				if tb.Attempts != 3 || tb.Calls != 1 || tb.Status != models.BatchDone {
					t.Errorf("target batch: attempts %d, calls %d, status %s; want 3, 1, done", tb.Attempts, tb.Calls, tb.Status)
				}
				if got := fj.Total(); got != 5 || run.Calls != 3 {
					t.Errorf("judge saw %d requests and the run counts %d calls; want 5 HTTP requests for 3 calls", got, run.Calls)
				}
				wantOthersClean(t, env, run, tg)
			},
		},
		{
			name:           "attempt times out, then OK",
			timeoutSeconds: 1,
			fault: func(tg *target, _ testAnswers) fault {
				return func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					if tg.is(c) && !c.Repair && c.N == 1 {
						select { // past the 1s per-attempt timeout
						case <-time.After(1500 * time.Millisecond):
						case <-r.Context().Done():
						}
						return false // answer late (nobody is listening any more)
					}
					return false
				}
			},
			check: func(t *testing.T, env *testEnv, fj *fakeJudge, run models.Run, tb models.RunBatch, tg string) {
				wantSucceeded(t, run)
				if tb.Attempts != 2 || tb.Status != models.BatchDone {
					t.Errorf("target batch: attempts %d, status %s; want 2, done", tb.Attempts, tb.Status)
				}
				if n := fj.Count(tg, false); n != 2 {
					t.Errorf("target batch requested %d times, want 2", n)
				}
				wantAllScored(t, env, run, tb)
				wantOthersClean(t, env, run, tg)
			},
		},
		{
			name: "answer without scores, repair without scores",
			fault: func(tg *target, a testAnswers) fault {
				return func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					switch {
					case !tg.is(c):
						return false
					case c.Repair:
						writeCompletion(w, a.repairNoScores)
					default:
						writeCompletion(w, a.noScores)
					}
					return true
				}
			},
			check: func(t *testing.T, env *testEnv, fj *fakeJudge, run models.Run, tb models.RunBatch, tg string) {
				// Regression: a run with missing scores said "succeeded".
				if run.Status != models.RunFinishedWithGaps || !strings.Contains(run.Error, "10 of 30 scores are missing") {
					t.Errorf("run %s (%q), want finished with gaps saying 10 of 30 scores are missing", run.Status, run.Error)
				}
				if tb.Status != models.BatchDone || tb.Calls != 2 || tb.Attempts != 2 {
					t.Errorf("target batch: status %s, calls %d, attempts %d; want done, 2, 2", tb.Status, tb.Calls, tb.Attempts)
				}
				if tb.RepairRequest == "" || !strings.Contains(tb.RepairResponse, "prefer not") {
					t.Errorf("target batch: repair request %q, response %q; want both stored", tb.RepairRequest, tb.RepairResponse)
				}
				if !containsAny(tb.Problems, "no scores found") {
					t.Errorf("target batch problems %q do not say no scores were found", tb.Problems)
				}
				ss := env.scoresByBatch(run.ID)[tb.ID]
				if len(ss) != 10 {
					t.Fatalf("target batch has %d score rows, want 10 (missing ones stored as NULL)", len(ss))
				}
				for _, s := range ss {
					if s.Score != nil {
						t.Errorf("row %d: score %g, want missing (nil), never a made-up number", s.RowID, *s.Score)
					}
				}
				if run.MissingScores != 10 || run.BatchesFailed != 0 || run.Calls != 4 {
					t.Errorf("run: missing %d, failed batches %d, calls %d; want 10, 0, 4", run.MissingScores, run.BatchesFailed, run.Calls)
				}
				wantOthersClean(t, env, run, tg)
			},
		},
		{
			name: "answer without scores, repair retried after a 500 recovers them",
			fault: func(tg *target, a testAnswers) fault {
				return func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					switch {
					case !tg.is(c):
						return false
					case !c.Repair:
						writeCompletion(w, a.noScores)
						return true
					case c.N == 1:
						writeAPIError(w, http.StatusInternalServerError, nil, "boom")
						return true
					}
					return false // the simulated judge answers the repair in full
				}
			},
			check: func(t *testing.T, env *testEnv, fj *fakeJudge, run models.Run, tb models.RunBatch, tg string) {
				wantSucceeded(t, run)
				// One attempt for the batch request, two for its repair.
				if tb.Status != models.BatchDone || tb.Calls != 2 || tb.Attempts != 3 {
					t.Errorf("target batch: status %s, calls %d, attempts %d; want done, 2, 3", tb.Status, tb.Calls, tb.Attempts)
				}
				wantAllScored(t, env, run, tb)
				for label := 1; label <= 10; label++ {
					if want := fmt.Sprintf("Sample%d: score recovered by the repair request", label); !containsAny(tb.Problems, want) {
						t.Errorf("target batch problems lack %q", want)
					}
				}
				if run.MissingScores != 0 {
					t.Errorf("run counts %d missing scores, want 0", run.MissingScores)
				}
				wantOthersClean(t, env, run, tg)
			},
		},
		{
			// Every batch refused for good (a 500 on every request is an
			// outage now: the run waits for the judge, see
			// TestJudgeOutagePausesTheRun).
			name: "422 on every request",
			fault: func(_ *target, _ testAnswers) fault {
				return func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					writeAPIError(w, http.StatusUnprocessableEntity, nil, "unsupported parameter")
					return true
				}
			},
			check: func(t *testing.T, env *testEnv, fj *fakeJudge, run models.Run, _ models.RunBatch, _ string) {
				if run.Status != models.RunFailed || !strings.Contains(run.Error, "every batch of round 1") || !strings.Contains(run.Error, "even when tried again") {
					t.Errorf("run %s with error %q; want failed because every batch of round 1 failed, even when tried again", run.Status, run.Error)
				}
				if run.BatchesDone != 3 || run.BatchesFailed != 3 || run.MissingScores != 30 {
					t.Errorf("batches done %d, failed %d, missing scores %d; want 3, 3, 30", run.BatchesDone, run.BatchesFailed, run.MissingScores)
				}
				for _, b := range env.batches(run.ID) {
					// 1 attempt (a 422 is not retried), then 1 more when tried
					// again at the end of the round.
					if b.Status != models.BatchFailed || b.Attempts != 2 || b.Calls != 2 || !strings.Contains(b.Error, "HTTP 422") || b.ErrorKind != "bad_request" ||
						!containsAny(b.Problems, "failed again when tried at the end of the round") {
						t.Errorf("batch %d: status %s, attempts %d, calls %d, error %q (kind %q), problems %q; want failed after 2 calls of 1 attempt with HTTP 422 (bad_request)",
							b.BatchIndex, b.Status, b.Attempts, b.Calls, b.Error, b.ErrorKind, b.Problems)
					}
				}
				for _, s := range env.scores(run.ID) {
					if s.Score != nil {
						t.Errorf("row %d of a failed batch has score %g, want missing", s.RowID, *s.Score)
					}
				}
				if got := fj.Total(); got != 6 {
					t.Errorf("judge saw %d requests, want 6 (3 batches x 2 calls x 1 attempt)", got)
				}
				if !run.Resumable() {
					t.Errorf("a failed run with gaps should be resumable")
				}
				wantJobState(t, env, run, rivertype.JobStateCancelled)
			},
		},
		{
			name: "401 bad key",
			fault: func(_ *target, _ testAnswers) fault {
				return func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					writeAPIError(w, http.StatusUnauthorized, nil, "Incorrect API key provided")
					return true
				}
			},
			check: func(t *testing.T, env *testEnv, fj *fakeJudge, run models.Run, _ models.RunBatch, _ string) {
				if run.Status != models.RunFailed || !strings.Contains(run.Error, "refused the API key (HTTP 401)") {
					t.Errorf("run %s with error %q; want failed with the auth message", run.Status, run.Error)
				}
				// One attempt per call, and no more calls than could be in
				// flight when the first 401 came back.
				for _, k := range fj.Keys() {
					if n := fj.Count(k, false); n != 1 {
						t.Errorf("a batch was requested %d times after a 401, want 1", n)
					}
				}
				if got := fj.Total(); got < 1 || got > 3 {
					t.Errorf("judge saw %d requests, want 1 to 3 (the concurrency)", got)
				}
				wantJobState(t, env, run, rivertype.JobStateCancelled)
			},
		},
		{
			name: "404 wrong model",
			fault: func(_ *target, _ testAnswers) fault {
				return func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					writeAPIError(w, http.StatusNotFound, nil, "The model `fake-judge` does not exist")
					return true
				}
			},
			check: func(t *testing.T, env *testEnv, fj *fakeJudge, run models.Run, _ models.RunBatch, _ string) {
				if run.Status != models.RunFailed || !strings.Contains(run.Error, "404") {
					t.Errorf("run %s with error %q; want failed with the not-found message", run.Status, run.Error)
				}
				if got := fj.Total(); got < 1 || got > 3 {
					t.Errorf("judge saw %d requests, want 1 to 3 (the concurrency)", got)
				}
			},
		},
	}
	answers := testAnswers{noScores: readTestdata(t, "answer_no_scores.txt"), repairNoScores: readTestdata(t, "repair_no_scores.txt")}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachDB(t, func(t *testing.T, env *testEnv) {
				tg := &target{}
				fj := newFakeJudge(t, simjudge.Options{Seed: 5}, tt.fault(tg, answers))
				r := env.startRunner(Config{})
				timeout := tt.timeoutSeconds
				if timeout == 0 {
					timeout = 30
				}
				run := env.launch(r, env.newRun(fj.URL(), 1, 3, timeout))
				run = env.waitFinished(run.ID, 20*time.Second)
				var tb models.RunBatch
				if key := tg.get(); key != "" {
					tb = batchesByKey(run, env.batches(run.ID))[key]
				}
				tt.check(t, env, fj, run, tb, tg.get())
			})
		})
	}
}

// TestRateLimitSnoozesJob: a Retry-After longer than the client waits for
// pauses the whole run by snoozing its job, without failing any batch.
func TestRateLimitSnoozesJob(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			// 300s is above the judge client's 120s ceiling for waiting in-call.
			writeAPIError(w, http.StatusTooManyRequests, map[string]string{"Retry-After": "300"}, "quota exceeded")
			return true
		})
		r := env.startRunner(Config{})
		run := env.launch(r, env.newRun(fj.URL(), 1, 3, 30))
		var job *rivertype.JobRow
		deadline := time.Now().Add(15 * time.Second)
		for {
			job = env.job(*run.JobID)
			if job.State == rivertype.JobStateScheduled {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job is %s after 15s, want scheduled (snoozed)", job.State)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if wait := time.Until(job.ScheduledAt); wait < 250*time.Second || wait > 301*time.Second {
			t.Errorf("job snoozed for %s, want the 300s the judge asked for", wait)
		}
		got := env.getRun(run.ID)
		if got.Status != models.RunRunning || got.LeaseOwner != "" || got.Error != "" {
			t.Errorf("run %s, lease owner %q, error %q; want running, released, no error", got.Status, got.LeaseOwner, got.Error)
		}
		if got.BatchesDone != 0 || got.BatchesFailed != 0 {
			t.Errorf("batches done %d, failed %d; want 0 and 0: a rate limit is nobody's answer", got.BatchesDone, got.BatchesFailed)
		}
		// While snoozed, the run says it waits for its judge, why, and
		// until when (the page's status and the API read this).
		if !got.WaitingForJudge() {
			t.Errorf("run not shown as waiting for its judge while snoozed for its rate limit")
		}
		for _, want := range []string{"HTTP 429", "quota exceeded", "The run waits 5m0s (as the judge asked), sending nothing, and goes on by itself at "} {
			if !strings.Contains(got.WaitingError, want) {
				t.Errorf("waiting error %q does not say %q", got.WaitingError, want)
			}
		}
		// One message: not the judge client's advice to someone calling by
		// hand ("longer than the 2m0s we wait for: try again later")
		// followed by the run's own plan.
		for _, odd := range []string{"try again later", "we wait for", "gave up after"} {
			if strings.Contains(got.WaitingError, odd) {
				t.Errorf("waiting error %q says %q, which the run's plan contradicts", got.WaitingError, odd)
			}
		}
		// The time it names is when the job comes due (to the second:
		// the two are taken a moment apart).
		due := job.ScheduledAt.UTC()
		if !strings.Contains(got.WaitingError, due.Format("15:04:05")) && !strings.Contains(got.WaitingError, due.Add(-time.Second).Format("15:04:05")) {
			t.Errorf("waiting error %q does not say when the run goes on (%s)", got.WaitingError, due.Format(time.TimeOnly))
		}
		for _, k := range fj.Keys() {
			if n := fj.Count(k, false); n != 1 {
				t.Errorf("a batch was requested %d times, want 1: a long Retry-After is not retried in-call", n)
			}
		}
	})
}

func wantSucceeded(t *testing.T, run models.Run) {
	t.Helper()
	if run.Status != models.RunSucceeded || run.Error != "" {
		t.Fatalf("run %s (error %q), want succeeded", run.Status, run.Error)
	}
	if run.BatchesDone != run.BatchesTotal || run.BatchesTotal != 3 {
		t.Errorf("batches done/total = %d/%d, want 3/3", run.BatchesDone, run.BatchesTotal)
	}
}

// wantAllScored checks every sample of batch b has a score.
func wantAllScored(t *testing.T, env *testEnv, run models.Run, b models.RunBatch) {
	t.Helper()
	ss := env.scoresByBatch(run.ID)[b.ID]
	if len(ss) != len(b.RowIDs) {
		t.Errorf("batch %d has %d scores, want %d", b.BatchIndex, len(ss), len(b.RowIDs))
	}
	for _, s := range ss {
		if s.Score == nil {
			t.Errorf("batch %d row %d: score missing", b.BatchIndex, s.RowID)
		}
	}
}

// wantOthersClean checks the batches other than the target were answered
// at the first attempt with every score.
func wantOthersClean(t *testing.T, env *testEnv, run models.Run, targetKey string) {
	t.Helper()
	for key, b := range batchesByKey(run, env.batches(run.ID)) {
		if key == targetKey {
			continue
		}
		if b.Status != models.BatchDone || b.Attempts != 1 || b.Calls != 1 || len(b.Problems) != 0 {
			t.Errorf("untouched batch %d: status %s, attempts %d, calls %d, problems %q; want done, 1, 1, none",
				b.BatchIndex, b.Status, b.Attempts, b.Calls, b.Problems)
		}
		wantAllScored(t, env, run, b)
	}
}

// wantJobState waits briefly for the run's job to reach state.
func wantJobState(t *testing.T, env *testEnv, run models.Run, state rivertype.JobState) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		j := env.job(*run.JobID)
		if j.State == state {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("job is %s, want %s", j.State, state)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRepair: the simulated judge leaves 30% of the scores out; each
// batch with gaps gets exactly one repair request and the recovered
// scores are stored.
func TestRepair(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{Seed: 11, MissRate: 0.3}, nil)
		r := env.startRunner(Config{})
		run := env.launch(r, env.newRun(fj.URL(), 2, 3, 30))
		run = env.waitFinished(run.ID, 20*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s (error %q), want succeeded", run.Status, run.Error)
		}
		crit := env.rubric.Criteria[0]
		repaired, calls := 0, 0
		for _, b := range env.batches(run.ID) {
			calls += b.Calls
			missing := evaluator.ParseBatchAnswer(b.Response, len(b.RowIDs), crit).Missing()
			key := storedKey(run, b)
			if len(missing) == 0 {
				if b.Calls != 1 || b.RepairRequest != "" || fj.Count(key, true) != 0 {
					t.Errorf("batch %d round %d had every score but made %d calls (repair %q)", b.BatchIndex, b.Round, b.Calls, b.RepairRequest)
				}
				continue
			}
			repaired++
			if b.Calls != 2 || b.Attempts != 2 || fj.Count(key, true) != 1 {
				t.Errorf("batch %d round %d missing %v: calls %d, attempts %d, repair requests %d; want 2, 2, 1",
					b.BatchIndex, b.Round, missing, b.Calls, b.Attempts, fj.Count(key, true))
			}
			for _, label := range missing {
				if want := fmt.Sprintf("Sample%d: score recovered by the repair request", label); !containsAny(b.Problems, want) {
					t.Errorf("batch %d round %d problems %q lack %q", b.BatchIndex, b.Round, b.Problems, want)
				}
			}
			wantAllScored(t, env, run, b)
		}
		if repaired == 0 {
			t.Error("no batch needed a repair at MissRate 0.3; the test proves nothing")
		}
		if run.MissingScores != 0 {
			t.Errorf("run counts %d missing scores, want 0 after repair", run.MissingScores)
		}
		if got := fj.Total(); run.Calls != got || calls != got || got != 6+repaired {
			t.Errorf("run counts %d calls, batches %d, judge saw %d; want %d", run.Calls, calls, got, 6+repaired)
		}
		if n := len(env.scores(run.ID)); n != 60 {
			t.Errorf("%d scores stored, want 60", n)
		}
	})
}
