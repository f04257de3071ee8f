package runner

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestSignalDoesNotCancelJobs: the context given to Start is the signal
// context of `serve`, `worker` and `run`. Its end must not reach River's
// jobs (it used to: running jobs were cancelled, the calls in flight
// abandoned, and each stop counted as a failed attempt with River's
// backoff of 2 s, 15 s, 87 s, 243 s... before the next start resumed).
func TestSignalDoesNotCancelJobs(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		// Why 400ms: calls are reliably in flight when the signal comes.
		fj := newFakeJudge(t, simjudge.Options{Seed: 9, Latency: 400 * time.Millisecond}, nil)
		a, err := New(Config{DB: env.db, Log: testLog(), Work: true, PollInterval: 20 * time.Millisecond, JudgeTuning: fastTuning, LeaseTTL: leaseTTL})
		if err != nil {
			t.Fatal(err)
		}
		signal, sent := context.WithCancel(context.Background())
		if err := a.Start(signal); err != nil {
			t.Fatal(err)
		}
		run := env.launch(a, env.newRun(fj.URL(), 2, 2, 30))
		env.waitRun(run.ID, 15*time.Second, "judging with two calls in flight", func(models.Run) bool { return fj.InFlight() == 2 })
		sent() // SIGTERM
		// The process then stops gracefully, as serve/worker/run do.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Stop(ctx); err != nil {
			t.Fatalf("stop: %v", err)
		}
		got := env.getRun(run.ID)
		if answered := fj.Answered(); answered < 2 || got.BatchesDone != answered {
			t.Errorf("judge answered %d requests, %d batches stored: the calls in flight at the signal were lost", answered, got.BatchesDone)
		}
		if got.LeaseOwner != "" {
			t.Errorf("lease still held by %q after the stop", got.LeaseOwner)
		}
		j := env.job(*run.JobID)
		if len(j.Errors) != 0 || (j.State != rivertype.JobStateAvailable && j.State != rivertype.JobStateScheduled) {
			t.Errorf("job %s with %d recorded errors (%v); want snoozed with none (no attempt counted)", j.State, len(j.Errors), j.Errors)
		}
		if wait := time.Until(j.ScheduledAt); wait > 2*time.Second {
			t.Errorf("job scheduled %s from now; the next start must resume at once", wait.Round(time.Millisecond))
		}
		before := fj.Total()
		started := time.Now()
		env.startRunner(Config{LeaseTTL: leaseTTL})
		run = env.waitFinished(run.ID, 30*time.Second)
		if run.Status != models.RunSucceeded || run.MissingScores != 0 {
			t.Fatalf("resumed run %s with %d missing (error %q)", run.Status, run.MissingScores, run.Error)
		}
		for _, k := range fj.Keys() {
			if n := fj.Count(k, false); n != 1 {
				t.Errorf("a batch was requested %d times, want 1", n)
			}
		}
		if fj.Total() > before {
			var first time.Time
			for _, k := range fj.Keys() {
				for _, at := range fj.Times(k, false) {
					if at.After(started) && (first.IsZero() || at.Before(first)) {
						first = at
					}
				}
			}
			if d := first.Sub(started); d > 3*time.Second {
				t.Errorf("the next worker's first call came %s after its start, want within 3s", d.Round(time.Millisecond))
			}
		}
	})
}

// TestJudgeOutagePausesTheRun: a judge that stops answering (503 on every
// request, probes included) no longer fails batch after batch for good
// (a 20 s outage used to leave 45-80 scores missing in a "succeeded" run):
// the run waits for the judge, says so with the last error, probes, and
// finishes with nothing missing once the judge is back. Its probes are
// counted on the run apart from the batches' figures: they are paid
// calls when answered, and used to be counted nowhere.
func TestJudgeOutagePausesTheRun(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var down atomic.Bool
		var probes atomic.Int64
		fj := newFakeJudge(t, simjudge.Options{Seed: 9, Latency: 50 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if c.Probe {
				probes.Add(1)
			}
			if down.Load() {
				writeAPIError(w, http.StatusServiceUnavailable, nil, "upstream down")
				return true
			}
			return false
		})
		r := env.startRunner(Config{LeaseTTL: leaseTTL, Breaker: BreakerConfig{Threshold: 3, ProbeInterval: 100 * time.Millisecond},
			JudgeTuning: JudgeTuning{MaxAttempts: 5, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}})
		run := env.launch(r, env.newRun(fj.URL(), 3, 3, 30))
		env.waitRun(run.ID, 15*time.Second, "one batch stored", func(r models.Run) bool { return r.BatchesDone >= 1 })
		down.Store(true)
		waiting := env.waitRun(run.ID, 15*time.Second, "waiting for judge", models.Run.WaitingForJudge)
		if !strings.Contains(waiting.WaitingError, "503") {
			t.Errorf("waiting error %q, want the judge's HTTP 503", waiting.WaitingError)
		}
		// The outage lasts a while: the run must neither fail batches nor
		// flood the judge (probes only, one at a time). Why 500ms: a run
		// that sent batches into the outage would fail them and flood the
		// judge within tens of milliseconds (5 attempts, 1-5ms apart, a
		// 503 answered at once); 500ms is five probe intervals.
		atStart := fj.Total()
		time.Sleep(500 * time.Millisecond)
		during := fj.Total() - atStart
		if got := env.getRun(run.ID); got.BatchesFailed != 0 || got.Finished() || !got.WaitingForJudge() {
			t.Errorf("during the outage: %s, %d failed batches, waiting %v", got.Status, got.BatchesFailed, got.WaitingForJudge())
		}
		// 500ms of 100ms probes: about 5, never a flood of batch requests.
		if during > 10 {
			t.Errorf("judge saw %d requests in 500ms of outage; want only probes (about 5)", during)
		}
		down.Store(false)
		run = env.waitFinished(run.ID, 30*time.Second)
		if run.Status != models.RunSucceeded || run.MissingScores != 0 || run.BatchesFailed != 0 || run.WaitingSince != nil {
			t.Errorf("after the outage: %s, %d missing, %d failed, waiting since %v (error %q); want succeeded with nothing missing",
				run.Status, run.MissingScores, run.BatchesFailed, run.WaitingSince, run.Error)
		}
		if run.Retries == 0 {
			t.Error("the retries during the outage were not counted on the run")
		}
		// Every probe sent is counted, the one answered with its tokens,
		// and the run's calls and tokens stay the batches' own.
		if n := probes.Load(); n == 0 || int64(run.ProbeCalls) != n {
			t.Errorf("the run counts %d probe calls, the judge saw %d (want them equal, and some)", run.ProbeCalls, n)
		}
		if run.ProbePromptTokens == 0 || run.ProbeCompletionTokens == 0 {
			t.Errorf("probe tokens %d+%d, want those of the answered probe", run.ProbePromptTokens, run.ProbeCompletionTokens)
		}
		if c := run.ProbeCostUSD(); c == nil || *c <= 0 {
			t.Errorf("probe cost unknown or nothing (%v), want it priced at the run's prices", c != nil)
		}
		var calls, prompt, completion int
		for _, b := range env.batches(run.ID) {
			calls, prompt, completion = calls+b.Calls, prompt+b.PromptTokens, completion+b.CompletionTokens
		}
		if run.Calls != calls || run.PromptTokens != prompt || run.CompletionTokens != completion {
			t.Errorf("run counts %d calls, %d+%d tokens; its batches %d calls, %d+%d tokens: the probes must not change the batches' figures",
				run.Calls, run.PromptTokens, run.CompletionTokens, calls, prompt, completion)
		}
		if n := counterSum(t, r, "batcheval_judge_breaker_opened_total"); n < 1 {
			t.Errorf("breaker opened %g times by the metrics, want at least 1", n)
		}
	})
}

// TestHangingJudgeKeepsTheRunWaiting: a judge that accepts connections and
// never answers times the probe out too. The probe's own deadline used to
// end it as "cancelled", which the breaker read as an answer: every probe
// timeout closed it ("judge answers again: run goes on"), the run stopped
// showing "waiting for judge" and sent a wave of batch calls, each held
// until its timeout (billed), every probe interval plus one timeout.
func TestHangingJudgeKeepsTheRunWaiting(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var back atomic.Bool        // the judge answers again
		var batchCalls atomic.Int64 // batch requests while the judge hangs
		var fj *fakeJudge
		fj = newFakeJudge(t, simjudge.Options{Seed: 9, Latency: 20 * time.Millisecond}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			// The first request is answered; from the second on the
			// judge hangs until it is back.
			if back.Load() || c.Total == 1 {
				return false
			}
			if !c.Probe {
				batchCalls.Add(1)
			}
			return fj.hang(r)
		})
		// Timeouts are whole seconds: 1 s is the shortest a judge takes.
		r := env.startRunner(Config{LeaseTTL: leaseTTL, Breaker: BreakerConfig{Threshold: 3, ProbeInterval: 100 * time.Millisecond},
			JudgeTuning: JudgeTuning{MaxAttempts: 5, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}})
		t.Cleanup(fj.releaseHeld)
		run := env.launch(r, env.newRun(fj.URL(), 3, 3, 1))
		env.waitRun(run.ID, 15*time.Second, "waiting for judge", models.Run.WaitingForJudge)
		// Calls let through just before the breaker opened may still be on
		// their way (their lease check reads the database first).
		time.Sleep(300 * time.Millisecond)
		// Three probe timeouts (1 s each, 100 ms apart) while it hangs: the
		// run keeps waiting and only probes go out.
		atStart := batchCalls.Load()
		for end := time.Now().Add(3200 * time.Millisecond); time.Now().Before(end); time.Sleep(25 * time.Millisecond) {
			if got := env.getRun(run.ID); !got.WaitingForJudge() {
				t.Fatalf("the judge still hangs, but the run stopped waiting for it (status %s, %d of %d batches)", got.Status, got.BatchesDone, got.BatchesTotal)
			}
		}
		if n := batchCalls.Load() - atStart; n != 0 {
			t.Errorf("%d batch calls sent to the hanging judge while the run waited for it; want probes only", n)
		}
		back.Store(true)
		run = env.waitFinished(run.ID, 30*time.Second)
		if run.Status != models.RunSucceeded || run.MissingScores != 0 || run.BatchesFailed != 0 || run.WaitingSince != nil {
			t.Errorf("after the judge came back: %s, %d missing, %d failed, waiting since %v (error %q); want succeeded with nothing missing",
				run.Status, run.MissingScores, run.BatchesFailed, run.WaitingSince, run.Error)
		}
	})
}

// TestFenceStopsCallsAfterLeaseLoss: a worker whose lease is taken while it
// works (it was frozen, or partitioned from the database, and another
// worker took the run over) sends no further call, before its own renewal
// loop even notices; it stores nothing but answers to calls already out.
func TestFenceStopsCallsAfterLeaseLoss(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{Seed: 9, Latency: 150 * time.Millisecond}, nil)
		// A long lease: its renewal (every 10s) must not be what stops the
		// worker here; the check before each call must.
		r := env.startRunner(Config{LeaseTTL: 30 * time.Second})
		run := env.launch(r, env.newRun(fj.URL(), 3, 1, 30))
		env.waitRun(run.ID, 15*time.Second, "two batches stored", func(r models.Run) bool { return r.BatchesDone >= 2 })
		if err := env.db.Gorm.Exec(`UPDATE runs SET lease_owner = 'successor', lease_until = ? WHERE id = ?`, time.Now().UTC().Add(time.Minute), run.ID).Error; err != nil {
			t.Fatal(err)
		}
		taken := env.getRun(run.ID)
		// A call whose check passed just before the takeover may still
		// arrive a moment after it: it was already being sent.
		time.Sleep(50 * time.Millisecond)
		sentAtTakeover := fj.Total()
		// Without the check the worker would send a call every 150ms:
		// three or more in 500ms.
		time.Sleep(500 * time.Millisecond)
		got := env.getRun(run.ID)
		if extra := fj.Total() - sentAtTakeover; extra > 0 {
			t.Errorf("%d calls sent after the lease was taken, want 0", extra)
		}
		// Only answers to calls already out at the takeover may be stored
		// after it (late answers, see TestLateAnswerAfterLeaseLossIsKept).
		if got.BatchesDone > sentAtTakeover {
			t.Errorf("%d batches stored after the lease was taken (from %d) with only %d calls sent", got.BatchesDone-taken.BatchesDone, taken.BatchesDone, sentAtTakeover)
		}
		if got.LeaseOwner != "successor" || got.Status != models.RunRunning {
			t.Errorf("run %s owned by %q: the old worker overwrote its successor", got.Status, got.LeaseOwner)
		}
	})
}

// TestResumeSendsOnlyTheGaps: a run that ended with a failed batch (after
// its end-of-round retry) is resumed; only that batch is sent again, the
// others keep their answers.
func TestResumeSendsOnlyTheGaps(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		tg := &target{}
		// Refused until the resume; after it, held until the test has
		// tried a second resume: a resumed run that went through its
		// calls before that (a busy machine) could be resumed again.
		var resumed atomic.Bool
		release := make(chan struct{})
		fj := newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if !tg.is(c) {
				return false
			}
			if !resumed.Load() {
				writeAPIError(w, http.StatusUnprocessableEntity, nil, "refused")
				return true
			}
			<-release
			return false
		})
		r := env.startRunner(Config{LeaseTTL: leaseTTL})
		run := env.launch(r, env.newRun(fj.URL(), 1, 1, 30))
		run = env.waitFinished(run.ID, 20*time.Second)
		if run.BatchesFailed != 1 || run.MissingScores != 10 || !run.Resumable() {
			t.Fatalf("first pass: %s, %d failed, %d missing, resumable %v; want one failed batch", run.Status, run.BatchesFailed, run.MissingScores, run.Resumable())
		}
		resumed.Store(true)
		if _, err := r.Resume(context.Background(), env.ws.ID, run.ID, models.Requeue{}); err != nil {
			close(release)
			t.Fatalf("resume: %v", err)
		}
		if _, err := r.Resume(context.Background(), env.ws.ID, run.ID, models.Requeue{}); models.ErrorCode(err) != models.EConflict {
			t.Errorf("second resume while queued or running: %v, want a conflict", err)
		}
		close(release)
		run = env.waitFinished(run.ID, 20*time.Second)
		if run.Status != models.RunSucceeded || run.BatchesFailed != 0 || run.MissingScores != 0 || run.BatchesDone != 3 || run.Resumes != 1 {
			t.Errorf("after resume: %s, %d/%d done, %d failed, %d missing, %d resumes", run.Status, run.BatchesDone, run.BatchesTotal, run.BatchesFailed, run.MissingScores, run.Resumes)
		}
		for _, k := range fj.Keys() {
			want := 1
			if k == tg.get() {
				// Refused, tried again at the end of its round (refused
				// again), then answered after the resume.
				want = 1 + failedUnitRetries + 1
			}
			if n := fj.Count(k, false); n != want {
				t.Errorf("batch requested %d times, want %d", n, want)
			}
		}
		if n := len(env.scores(run.ID)); n != 30 {
			t.Errorf("%d scores stored, want 30 (one per row)", n)
		}
		if _, err := r.Resume(context.Background(), env.ws.ID, run.ID, models.Requeue{}); models.ErrorCode(err) != models.EConflict {
			t.Errorf("resume of a complete run: %v, want a conflict", err)
		}
	})
}

// TestMetricsScrape scrapes /metrics after a run and parses it.
func TestMetricsScrape(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		tg := &target{}
		fj := newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if tg.is(c) && c.N == 1 {
				writeAPIError(w, http.StatusTooManyRequests, nil, "slow down")
				return true
			}
			return false
		})
		// A stored judge whose name is text its workspace wrote: the
		// metrics, read by operators across workspaces, carry its id only.
		const judgeName = "Fake <judge> of Acme"
		j := models.Judge{WorkspaceID: env.ws.ID, Name: judgeName, BaseURL: fj.URL(), Model: "fake-judge", MaxConcurrency: 8}
		if err := env.db.SaveJudge(context.Background(), &j); err != nil {
			t.Fatal(err)
		}
		judgeID := strconv.FormatInt(j.ID, 10)
		r := env.startRunner(Config{LeaseTTL: leaseTTL})
		newRun := env.newRun(fj.URL(), 1, 2, 30)
		newRun.JudgeID, newRun.JudgeSnapshot.Name = &j.ID, judgeName
		run := env.launch(r, newRun)
		run = env.waitFinished(run.ID, 20*time.Second)
		wantSucceeded(t, run)

		families := scrape(t, r)
		for name, f := range families {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if strings.Contains(l.GetValue(), "Fake") {
						t.Errorf("%s{%s=%q}: a judge's name in the metrics", name, l.GetName(), l.GetValue())
					}
				}
			}
		}
		sum := func(name string, match map[string]string) float64 {
			var total float64
			for _, m := range families[name].GetMetric() {
				if labelsMatch(m, match) {
					total += m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
				}
			}
			return total
		}
		tests := []struct {
			name  string
			match map[string]string
			want  float64
		}{
			{"batcheval_judge_requests_total", nil, float64(fj.Total())},
			{"batcheval_judge_requests_total", map[string]string{"outcome": "ok", "judge_id": judgeID}, float64(fj.Total() - 1)},
			{"batcheval_judge_errors_total", map[string]string{"kind": "rate_limited", "judge_id": judgeID}, 1},
			{"batcheval_judge_retries_total", map[string]string{"judge_id": judgeID}, 1},
			{"batcheval_judge_request_duration_seconds", nil, float64(fj.Total())},
			{"batcheval_judge_tokens_total", map[string]string{"type": "prompt"}, float64(run.PromptTokens)},
			{"batcheval_judge_tokens_total", map[string]string{"type": "completion"}, float64(run.CompletionTokens)},
			{"batcheval_runs", map[string]string{"status": "succeeded"}, 1},
			{"batcheval_runs", map[string]string{"status": "running"}, 0},
			{"batcheval_queue_jobs", map[string]string{"state": "available"}, 0},
		}
		for _, tt := range tests {
			if _, ok := families[tt.name]; !ok {
				t.Errorf("%s missing from /metrics", tt.name)
				continue
			}
			if got := sum(tt.name, tt.match); got != tt.want {
				t.Errorf("%s%v = %g, want %g", tt.name, tt.match, got, tt.want)
			}
		}
		if run.Retries != 1 {
			t.Errorf("run counts %d retries, want 1", run.Retries)
		}
	})
}

// scrape serves r's metrics over HTTP and parses the text format.
func scrape(t *testing.T, r *Runner) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(r.Metrics().Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

func labelsMatch(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func counterSum(t *testing.T, r *Runner, name string) float64 {
	t.Helper()
	var total float64
	for _, m := range scrape(t, r)[name].GetMetric() {
		total += m.GetCounter().GetValue()
	}
	return total
}

// TestLateAnswerAfterLeaseLossIsKept: a worker loses the run while one of
// its calls is with the judge. The answer that comes back is paid for: it
// is stored (the batch had none yet) instead of dropped, and when the run
// is claimed again that batch is not sent a second time.
func TestLateAnswerAfterLeaseLossIsKept(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var held atomic.Bool
		heldKey := make(chan string, 1)
		var fj *fakeJudge
		fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			// The run's first request is held until the test lets it go.
			if c.Total == 1 && held.CompareAndSwap(false, true) {
				heldKey <- c.Key
				return fj.hang(r)
			}
			return false
		})
		r := env.startRunner(Config{LeaseTTL: 2 * time.Second})
		t.Cleanup(fj.releaseHeld)
		run := env.launch(r, env.newRun(fj.URL(), 1, 1, 30))
		var key string
		select {
		case key = <-heldKey:
		case <-time.After(15 * time.Second):
			t.Fatal("the run sent no call")
		}
		// Another worker takes the run over while the call is out; its
		// lease lapses soon after, as if it had died, so the run resumes.
		if err := env.db.Gorm.Exec(`UPDATE runs SET lease_owner = 'successor', lease_until = ? WHERE id = ?`,
			time.Now().UTC().Add(1500*time.Millisecond), run.ID).Error; err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		fj.releaseHeld()
		late := env.waitRun(run.ID, 10*time.Second, "the late answer stored", func(r models.Run) bool { return r.BatchesDone >= 1 })
		if late.LeaseOwner != "successor" && !late.Finished() {
			t.Errorf("run owned by %q after the late write: the old worker took its lease back", late.LeaseOwner)
		}
		if n := counterSum(t, r, "batcheval_judge_late_answers_total"); n != 1 {
			t.Errorf("%g late answers counted, want 1", n)
		}
		got := env.waitFinished(run.ID, 30*time.Second)
		if got.Status != models.RunSucceeded || got.MissingScores != 0 {
			t.Errorf("run %s with %d missing, want succeeded complete", got.Status, got.MissingScores)
		}
		if n := fj.Count(key, false); n != 1 {
			t.Errorf("the batch answered late was requested %d times, want 1 (its answer was dropped and paid again)", n)
		}
		for _, k := range fj.Keys() {
			if n := fj.Count(k, false); n != 1 {
				t.Errorf("batch %s requested %d times, want 1", k, n)
			}
		}
		if got.Calls != fj.Total() {
			t.Errorf("run counts %d calls, the judge saw %d", got.Calls, fj.Total())
		}
	})
}

// TestLapsedLeaseIsNotRenewed: a lease whose renewal lands only after it
// lapsed (the worker was frozen, or its renewal waited on a lock longer
// than the lease) is lost: the worker stops, as its fence would, instead
// of renewing it and carrying on with calls another worker may have been
// about to take over.
func TestLapsedLeaseIsNotRenewed(t *testing.T) {
	t.Parallel()
	const ttl = 600 * time.Millisecond
	cases := []struct {
		name     string
		hold     time.Duration // how long another transaction holds the run row
		wantLost bool
	}{
		{name: "renewals on time", hold: 0, wantLost: false},
		{name: "a renewal stuck past the lease", hold: 2 * ttl, wantLost: true},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		r, err := New(Config{DB: env.db, Log: testLog(), LeaseTTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				run := env.launch(r, env.newRun("http://127.0.0.1:1/v1", 1, 1, 30))
				claimed := time.Now()
				if ok, err := env.db.ClaimRun(ctx, run.ID, "holder", ttl); err != nil || !ok {
					t.Fatalf("claim: %v %v", ok, err)
				}
				work, stop := context.WithCancelCause(ctx)
				defer stop(nil)
				done := make(chan struct{})
				go func() { defer close(done); r.keepLease(work, stop, work.Done(), run.ID, "holder", claimed) }()
				if tc.hold > 0 {
					// Another writer holds the run's row (SQLite: the write
					// lock) while a renewal is due.
					tx := env.db.Gorm.Begin()
					if err := tx.Exec(`UPDATE runs SET name = name WHERE id = ?`, run.ID).Error; err != nil {
						t.Fatal(err)
					}
					time.Sleep(tc.hold)
					if err := tx.Commit().Error; err != nil {
						t.Fatal(err)
					}
				}
				select {
				case <-done:
				case <-time.After(3 * ttl):
				}
				lost := errors.Is(context.Cause(work), errLeaseLost)
				if lost != tc.wantLost {
					t.Errorf("lease lost: %v (cause %v), want %v", lost, context.Cause(work), tc.wantLost)
				}
				stop(nil)
				<-done
			})
		}
	})
}

// TestSweepLeavesItsOwnLiveExecutionAlone: a run whose lease renewal could
// not be written for a whole lease (a full disk, a locked SQLite file) while
// its execution in this very process still holds answers to store. The
// sweep of the same process used to take the run for orphaned and start a
// second execution, which sent the batches whose answers the first one was
// still trying to store: on a disk full for 20 s, 8 of 100 batches were paid
// twice. The process knows its own execution is alive; it is left to notice
// its lapsed lease itself, store what it holds and hand the run back.
func TestSweepLeavesItsOwnLiveExecutionAlone(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var fj *fakeJudge
		fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			return fj.hang(r) // the execution stays under way
		})
		// A long lease: its renewal (every third of it) does not come during the test.
		r := env.startRunner(Config{LeaseTTL: 30 * time.Second})
		t.Cleanup(fj.releaseHeld)
		run := env.launch(r, env.newRun(fj.URL(), 1, 1, 30))
		held := env.waitRun(run.ID, 15*time.Second, "a call out", func(models.Run) bool { return fj.Total() >= 1 })
		if held.LeaseOwner == "" {
			t.Fatal("the run is not leased while its call is out")
		}
		// The database's lease lapsed: as when the renewals could not be written.
		if err := env.db.Gorm.Exec(`UPDATE runs SET lease_until = ? WHERE id = ?`, time.Now().UTC().Add(-time.Minute), run.ID).Error; err != nil {
			t.Fatal(err)
		}
		r.Sweep(context.Background())
		for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if got := env.getRun(run.ID); got.LeaseOwner != held.LeaseOwner {
				t.Fatalf("the sweep handed the run of a live execution (%s) to another (%q) while the first still had a call out", held.LeaseOwner, got.LeaseOwner)
			}
		}
	})
}

// TestSweepRequeuesToTheRightQueue: a run whose lease lapsed is requeued
// to the shared queue when another process held it (that process died:
// the shared workers resume it), but kept in this runner's own queue when
// the lapsed lease was this live process's, whose execution has just
// ended without River having recorded its job's end yet (a full disk or a
// database outage longer than the lease). Before, that job too went to
// the shared queue, and `batcheval run`, which works a private queue,
// waited for ever for a worker to resume its run.
func TestSweepRequeuesToTheRightQueue(t *testing.T) {
	t.Parallel()
	const private = "cli_lapsed"
	cases := []struct {
		name      string
		own       bool
		wantQueue string
	}{
		{"this process's ended execution", true, private},
		{"another process's", false, "default"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				var fj *fakeJudge
				fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					return fj.hang(r) // the execution stays under way
				})
				// A long lease: its renewal does not come during the test.
				r := env.startRunner(Config{Queue: private, LeaseTTL: 30 * time.Second})
				t.Cleanup(fj.releaseHeld)
				run := env.launch(r, env.newRun(fj.URL(), 1, 1, 30))
				held := env.waitRun(run.ID, 15*time.Second, "a call out", func(models.Run) bool { return fj.Total() >= 1 })
				if held.LeaseOwner == "" || held.JobID == nil {
					t.Fatalf("the run is not leased (%q) or has no job while its call is out", held.LeaseOwner)
				}
				owner := held.LeaseOwner
				if tc.own {
					// As between the end of the execution (it lost its
					// lease) and River's record of its job's snooze.
					r.live.Delete(owner)
				} else {
					owner = "another-host-1-x/1"
				}
				if err := env.db.Gorm.Exec(`UPDATE runs SET lease_until = ?, lease_owner = ? WHERE id = ?`,
					time.Now().UTC().Add(-time.Minute), owner, run.ID).Error; err != nil {
					t.Fatal(err)
				}
				r.Sweep(context.Background())
				if j := env.job(*held.JobID); j.Queue != tc.wantQueue || j.State == rivertype.JobStateRunning && j.Attempt < 2 {
					t.Errorf("after the sweep the run's job is %s in queue %q (attempt %d), want requeued in %q", j.State, j.Queue, j.Attempt, tc.wantQueue)
				}
			})
		})
	}
}
