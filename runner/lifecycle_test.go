package runner

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// leaseTTL is short so that a dead worker's run is taken over in seconds.
const leaseTTL = 2 * time.Second

// TestKillAndResume crashes a worker in the middle of a run and proves the
// next worker resumes it without sending any answered batch again.
func TestKillAndResume(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		// answered is how many calls the judge answers before it starts
		// holding calls until the client gives up on them: the three
		// batches of round 1 and one of round 2.
		const answered = 4
		var holding atomic.Bool
		holding.Store(true)
		var admitted atomic.Int32
		var fj *fakeJudge
		fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if holding.Load() && admitted.Add(1) > answered {
				fj.hang(r)
				return true
			}
			return false
		})
		a := env.startRunner(Config{LeaseTTL: leaseTTL})
		t.Cleanup(fj.releaseHeld) // runs before the runners stop
		run := env.launch(a, env.newRun(fj.URL(), 2, 2, 30))

		env.waitRun(run.ID, 15*time.Second, "holding two calls with four batches stored", func(r models.Run) bool {
			return r.BatchesDone == answered && fj.InFlight() == 2
		})
		run = env.getRun(run.ID)
		before := map[string]bool{}
		round2 := map[int64][]int64{}
		for _, b := range env.batches(run.ID) {
			if b.Status != models.BatchPending {
				before[storedKey(run, b)] = true
			}
			if b.Round == 1 {
				round2[b.ID] = b.RowIDs
			}
		}
		if len(before) != answered {
			t.Fatalf("%d batches stored before the kill, want %d", len(before), answered)
		}

		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		if err := a.Kill(kctx); err != nil {
			t.Errorf("kill: %v", err)
		}
		if took := time.Since(start); took > 3*time.Second {
			t.Errorf("kill took %s: the calls in flight were not cancelled", took.Round(time.Millisecond))
		}
		// The fake server notices the closed connections a moment after the
		// client gave up: poll briefly rather than race it.
		for deadline := time.Now().Add(2 * time.Second); fj.InFlight() != 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if n := fj.InFlight(); n != 0 {
			t.Errorf("%d calls still in flight 2s after the kill, want 0", n)
		}
		if got := env.getRun(run.ID); got.Finished() || got.BatchesDone != answered {
			t.Errorf("after the kill the run is %s with %d batches done; want unfinished with %d", got.Status, got.BatchesDone, answered)
		}

		j := env.job(*run.JobID)
		t.Logf("after the kill: job %s (scheduled in %s), lease owner %q", j.State, time.Until(j.ScheduledAt).Round(time.Millisecond), env.getRun(run.ID).LeaseOwner)

		holding.Store(false)
		b := env.startRunner(Config{LeaseTTL: leaseTTL})
		run = env.waitFinished(run.ID, 30*time.Second, func() { b.Sweep(context.Background()) })
		if run.Status != models.RunSucceeded {
			t.Fatalf("resumed run %s (error %q), want succeeded", run.Status, run.Error)
		}
		batches := env.batches(run.ID)
		stored := 0
		for _, bt := range batches {
			if bt.Status == models.BatchDone {
				stored++
			}
			key := storedKey(run, bt)
			if before[key] {
				if n := fj.Count(key, false); n != 1 {
					t.Errorf("batch %d of round %d was answered before the kill and requested %d times in all, want 1", bt.BatchIndex, bt.Round+1, n)
				}
			}
			if bt.Round == 1 && !slices.Equal(round2[bt.ID], bt.RowIDs) {
				t.Errorf("round 2 batch %d was recomposed after the kill: rows %v, before %v", bt.BatchIndex, bt.RowIDs, round2[bt.ID])
			}
		}
		if stored != run.BatchesTotal || run.BatchesDone != run.BatchesTotal || run.BatchesTotal != 6 {
			t.Errorf("%d batches stored, %d done, total %d; want 6 each", stored, run.BatchesDone, run.BatchesTotal)
		}
		// Every batch is stored once: the two held calls were lost with the
		// crash and sent again by the second worker, nothing else twice.
		if got := fj.Total(); got != 6+2 {
			t.Errorf("judge saw %d requests, want 8 (6 batches + the 2 lost in the crash)", got)
		}
		if n := len(env.scores(run.ID)); n != 60 {
			t.Errorf("%d scores stored, want 60", n)
		}
	})
}

// TestStopDrainsAndResumes: a graceful stop lets the calls in flight
// finish and stores them; the next start resumes with what is left.
func TestStopDrainsAndResumes(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		// Why 300ms: slow enough that calls are reliably in flight when
		// Stop is called.
		fj := newFakeJudge(t, simjudge.Options{Seed: 9, Latency: 300 * time.Millisecond}, nil)
		a := env.startRunner(Config{LeaseTTL: leaseTTL})
		run := env.launch(a, env.newRun(fj.URL(), 2, 2, 30))
		env.waitRun(run.ID, 15*time.Second, "judging with calls in flight", func(r models.Run) bool {
			return r.BatchesDone >= 1 && fj.InFlight() == 2
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Stop(ctx); err != nil {
			t.Fatalf("stop: %v", err)
		}
		got := env.getRun(run.ID)
		// The fake's handler counts a call done after its answer is sent,
		// a moment after the client has it: allow that moment.
		for deadline := time.Now().Add(time.Second); fj.InFlight() != 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if n := fj.InFlight(); n != 0 {
			t.Errorf("%d calls in flight after Stop returned, want 0", n)
		}
		if sent := fj.Total(); got.BatchesDone != sent || sent < 3 {
			t.Errorf("after the stop %d batches are stored and the judge answered %d requests; want every answer stored (and >= 3)", got.BatchesDone, sent)
		}
		if got.Finished() || got.BatchesDone >= got.BatchesTotal {
			t.Fatalf("the run is %s with %d/%d batches before the restart; the test needs it unfinished", got.Status, got.BatchesDone, got.BatchesTotal)
		}
		if got.LeaseOwner != "" {
			t.Errorf("lease still held by %q after a graceful stop", got.LeaseOwner)
		}
		if j := env.job(*run.JobID); j.State != rivertype.JobStateScheduled && j.State != rivertype.JobStateAvailable {
			t.Errorf("job is %s after a graceful stop, want scheduled or available", j.State)
		}

		b := env.startRunner(Config{LeaseTTL: leaseTTL})
		run = env.waitFinished(run.ID, 30*time.Second, func() { b.Sweep(context.Background()) })
		if run.Status != models.RunSucceeded || run.BatchesDone != run.BatchesTotal {
			t.Fatalf("resumed run %s with %d/%d batches (error %q), want succeeded", run.Status, run.BatchesDone, run.BatchesTotal, run.Error)
		}
		if got := fj.Total(); got != run.BatchesTotal {
			t.Errorf("judge saw %d requests for %d batches: something was sent twice", got, run.BatchesTotal)
		}
		for _, k := range fj.Keys() {
			if n := fj.Count(k, false); n != 1 {
				t.Errorf("a batch was requested %d times, want 1", n)
			}
		}
	})
}

// TestStopGivesUpOnHungCalls: Stop's context bounds the wait; calls that
// do not come back in time are cancelled, and the run resumes later.
func TestStopGivesUpOnHungCalls(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var holding atomic.Bool
		holding.Store(true)
		var fj *fakeJudge
		fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if holding.Load() {
				fj.hang(r)
				return true
			}
			return false
		})
		a := env.startRunner(Config{LeaseTTL: leaseTTL})
		t.Cleanup(fj.releaseHeld)
		run := env.launch(a, env.newRun(fj.URL(), 1, 2, 30))
		env.waitRun(run.ID, 15*time.Second, "holding two calls", func(models.Run) bool { return fj.InFlight() == 2 })

		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- a.Stop(ctx) }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("stop: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("Stop with a 300ms deadline still waiting after 5s: hung calls are not cancelled")
			fj.releaseHeld()
			<-done
		}
		t.Logf("Stop returned after %s", time.Since(start).Round(time.Millisecond))
		if got := env.getRun(run.ID); got.Finished() || got.BatchesDone != 0 {
			t.Errorf("after the stop the run is %s with %d batches done; want unfinished with none", got.Status, got.BatchesDone)
		}
		// Out of patience, the calls were abandoned, but the job was handed
		// back, not failed: no attempt recorded, no River backoff.
		if j := env.job(*run.JobID); len(j.Errors) != 0 || (j.State != rivertype.JobStateAvailable && j.State != rivertype.JobStateScheduled) {
			t.Errorf("job %s with errors %v after a stop out of patience; want snoozed with none", j.State, j.Errors)
		}

		holding.Store(false)
		b := env.startRunner(Config{LeaseTTL: leaseTTL})
		run = env.waitFinished(run.ID, 30*time.Second, func() { b.Sweep(context.Background()) })
		if run.Status != models.RunSucceeded || run.BatchesDone != 3 {
			t.Errorf("resumed run %s with %d batches (error %q), want succeeded with 3", run.Status, run.BatchesDone, run.Error)
		}
	})
}

// TestCancel: cancelling a run stops new calls at once; only calls already
// in flight may still complete, and the run stays cancelled.
func TestCancel(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		const concurrency = 2
		// Why 250ms: a call lasts long enough to be caught in flight, and
		// short enough that a worker that ignored the cancel would send
		// several more within the wait below.
		fj := newFakeJudge(t, simjudge.Options{Seed: 9, Latency: 250 * time.Millisecond}, nil)
		// The default lease (30s) is renewed every 10s: the cancel must not
		// depend on the renewal noticing it.
		r := env.startRunner(Config{})
		run := env.launch(r, env.newRun(fj.URL(), 3, concurrency, 30))
		env.waitRun(run.ID, 15*time.Second, "two batches stored", func(r models.Run) bool { return r.BatchesDone >= 2 })

		got, err := r.Cancel(context.Background(), env.ws.ID, run.ID)
		if err != nil {
			t.Fatalf("cancel: %v", err)
		}
		sent := fj.Total()
		done := env.getRun(run.ID).BatchesDone
		if got.Status != models.RunCancelled || !got.CancelRequested {
			t.Errorf("Cancel returned status %s, cancel requested %v; want cancelled, true", got.Status, got.CancelRequested)
		}

		time.Sleep(1500 * time.Millisecond) // several call latencies
		after := fj.Total()
		if after-sent > concurrency {
			t.Errorf("the judge got %d requests after Cancel returned, want at most %d (calls already under way)", after-sent, concurrency)
		}
		final := env.getRun(run.ID)
		if final.BatchesDone-done > concurrency {
			t.Errorf("%d batches were stored after Cancel returned, want at most the %d in flight", final.BatchesDone-done, concurrency)
		}
		// Past the job's end: River's 2s cancel poll, or the runner's own
		// stop, has ended it (was a fixed second). A job still not ended
		// after 5s fails the state check below.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if s := env.job(*run.JobID).State; s == rivertype.JobStateCancelled || s == rivertype.JobStateCompleted {
				break
			}
		}
		if later := fj.Total(); later != after {
			t.Errorf("the judge got %d more requests once the job had ended", later-after)
		}
		final = env.getRun(run.ID)
		if final.Status != models.RunCancelled || final.FinishedAt == nil {
			t.Errorf("run is %s (finished %v), want it to stay cancelled", final.Status, final.FinishedAt)
		}
		if final.BatchesDone >= final.BatchesTotal {
			t.Errorf("all %d batches were judged; the cancel came too late to prove anything", final.BatchesTotal)
		}
		if j := env.job(*run.JobID); j.State != rivertype.JobStateCancelled && j.State != rivertype.JobStateCompleted {
			t.Errorf("job is %s after a cancel, want it cancelled or completed (never retried)", j.State)
		}
	})
}

// TestLeases: a run whose worker died (lease expired, job still marked
// running in River) is swept and resumed by another worker; a run whose
// lease is still live is left to its owner.
func TestLeases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		leaseUntil time.Duration // from now
		jobRunning bool          // River still believes the dead worker runs the job
		wantDone   bool
	}{
		{name: "expired lease is taken over", leaseUntil: -time.Second, jobRunning: true, wantDone: true},
		{name: "live lease is respected", leaseUntil: time.Hour, jobRunning: false, wantDone: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachDB(t, func(t *testing.T, env *testEnv) {
				ctx := context.Background()
				fj := newFakeJudge(t, simjudge.Options{Seed: 9}, nil)
				run := env.launch(env.jobs, env.newRun(fj.URL(), 1, 3, 30))
				ok, err := env.db.ClaimRun(ctx, run.ID, "other-worker", tt.leaseUntil)
				if err != nil || !ok {
					t.Fatalf("claim for the other worker: %v, %v", ok, err)
				}
				if tt.jobRunning {
					if err := env.db.Gorm.Exec(`UPDATE river_job SET state = 'running', attempt = 1 WHERE id = ?`, *run.JobID).Error; err != nil {
						t.Fatal(err)
					}
				}
				b := env.startRunner(Config{LeaseTTL: leaseTTL})
				if tt.wantDone {
					got := env.waitFinished(run.ID, 20*time.Second)
					if got.Status != models.RunSucceeded || fj.Total() != 3 {
						t.Errorf("run %s after %d requests (error %q), want succeeded after 3", got.Status, fj.Total(), got.Error)
					}
					return
				}
				// Long enough for the job to be tried, snoozed for LeaseTTL
				// and tried again.
				time.Sleep(leaseTTL + 500*time.Millisecond)
				b.Sweep(ctx)
				got := env.getRun(run.ID)
				if got.Status != models.RunRunning || got.LeaseOwner != "other-worker" || fj.Total() != 0 {
					t.Errorf("run %s owned by %q after %d requests; want it left running to other-worker, untouched", got.Status, got.LeaseOwner, fj.Total())
				}
				// The job keeps coming back (snoozed for LeaseTTL each time:
				// scheduled, available, or briefly running) and never ends.
				switch j := env.job(*run.JobID); {
				case j.State == rivertype.JobStateCompleted || j.State == rivertype.JobStateCancelled || j.State == rivertype.JobStateDiscarded:
					t.Errorf("job is %s, want it waiting for the lease", j.State)
				case j.AttemptedAt == nil:
					t.Error("the worker never tried the job, so the test proves nothing")
				}
			})
		})
	}
}

// TestKillCancelsHungCalls: whatever the method, a hard stop cancels the
// judge calls in flight instead of waiting for them (they would otherwise
// hold the worker until the judge timeout, or for ever).
func TestKillCancelsHungCalls(t *testing.T) {
	t.Parallel()
	for _, method := range []string{models.MethodBatchEval, models.MethodGEval, models.MethodLLMEval, models.MethodCloserLook} {
		t.Run(method, func(t *testing.T) {
			t.Parallel()
			eachDB(t, func(t *testing.T, env *testEnv) {
				var fj *fakeJudge
				fj = newFakeJudge(t, simjudge.Options{}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					fj.hang(r)
					return true
				})
				a := env.startRunner(Config{LeaseTTL: leaseTTL})
				t.Cleanup(fj.releaseHeld)
				run := env.newRun(fj.URL(), 1, 2, 30)
				run.Method = method
				run = env.launch(a, run)
				env.waitRun(run.ID, 15*time.Second, "holding a call", func(models.Run) bool { return fj.InFlight() >= 1 })

				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				start := time.Now()
				if err := a.Kill(ctx); err != nil {
					t.Errorf("kill: %v", err)
				}
				if took := time.Since(start); took > 3*time.Second {
					t.Errorf("kill took %s: the calls in flight were not cancelled", took.Round(time.Millisecond))
				}
				if got := env.getRun(run.ID); got.Finished() || got.BatchesDone != 0 {
					t.Errorf("after the kill the run is %s with %d batches done; want unfinished with none", got.Status, got.BatchesDone)
				}
			})
		})
	}
}

// TestKillBetweenAUnitsCallsPaysNothingTwice: a kill while a batch's
// repair request is out leaves the batch pending with its answered call
// counted; the next worker takes the first answer from the answer cache
// at no cost and sends only the repair. Every answer the judge gave is
// counted once as paid (QA: the first answer was lost and paid again, or
// the batch was stored with its missing scores for good).
func TestKillBetweenAUnitsCallsPaysNothingTwice(t *testing.T) {
	for _, noCache := range []bool{false, true} {
		t.Run(map[bool]string{false: "answers reused", true: "no reuse"}[noCache], func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				var holding atomic.Bool
				holding.Store(true)
				// heldRepair is closed when the judge starts holding the
				// first repair request: the state the kill is meant for.
				// Waiting for "one call out after two" instead could match
				// a main call: the batch that takes the first turn is up to
				// the scheduler, and one batch's first answer has every
				// score (no repair), so the call out after it was the next
				// batch's first call.
				heldRepair := make(chan struct{})
				var holdOnce sync.Once
				var fj *fakeJudge
				fj = newFakeJudge(t, simjudge.Options{Seed: 7, MissRate: 0.5}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					if c.Repair && holding.Load() {
						holdOnce.Do(func() { close(heldRepair) })
						fj.hang(r)
						return true
					}
					return false
				})
				a := env.startRunner(Config{LeaseTTL: leaseTTL})
				t.Cleanup(fj.releaseHeld)
				spec := env.newRun(fj.URL(), 1, 1, 30) // 3 batches, one call at a time
				spec.Settings.NoCache = noCache
				run := env.launch(a, spec)
				select {
				case <-heldRepair:
				case <-time.After(15 * time.Second):
					t.Fatalf("no repair request came in 15s; the judge saw %d requests", fj.Total())
				}
				kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := a.Kill(kctx); err != nil {
					t.Fatalf("kill: %v", err)
				}
				got := env.getRun(run.ID)
				if got.Calls != fj.Total()-1 || got.BatchesDone != fj.Total()-2 {
					t.Errorf("after the kill: %d calls, %d batches done; the judge answered %d requests and holds a repair", got.Calls, got.BatchesDone, fj.Total()-1)
				}
				holding.Store(false)
				b := env.startRunner(Config{LeaseTTL: leaseTTL})
				run = env.waitFinished(run.ID, 30*time.Second, func() { b.Sweep(context.Background()) })
				if run.Status != models.RunSucceeded && run.Status != models.RunFinishedWithGaps {
					t.Fatalf("resumed run %s (%q)", run.Status, run.Error)
				}
				for _, bt := range env.batches(run.ID) {
					if n := fj.Count(storedKey(run, bt), false); n != 1 {
						t.Errorf("batch %d requested %d times, want once (its answer kept for the resume)", bt.BatchIndex, n)
					}
				}
				// The held repair was cancelled unanswered: every other
				// request was answered and is counted once as paid.
				if paid := run.Calls - run.CachedCalls; paid != fj.Total()-1 {
					t.Errorf("%d calls, %d from the cache: %d paid; the judge answered %d", run.Calls, run.CachedCalls, paid, fj.Total()-1)
				}
			})
		})
	}
}
