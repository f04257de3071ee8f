package runner

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestContinueWaitsForCallsOnTheirWay: a run paused with two calls on
// their way, and continued (on another worker too) once those calls have
// been out for longer than a lease, sends those calls' batches once. The
// pausing execution used to stop renewing its lease at the pause, so the
// lease lapsed while the calls were still out, and the continuing
// execution claimed the run and sent both batches again: each was paid
// twice. Now the continuing execution waits until the answers on their
// way are stored and the lease is given up, and then sends only the rest.
func TestContinueWaitsForCallsOnTheirWay(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		// The first batch is answered; the next two calls are held until
		// released (then answered as any call), every later one answered.
		const answered, concurrency = 1, 2
		var admitted atomic.Int32
		var fj *fakeJudge
		fj = newFakeJudge(t, simjudge.Options{Seed: 5}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if n := admitted.Add(1); n > answered && n <= answered+concurrency {
				return fj.hang(r)
			}
			return false
		})
		t.Cleanup(fj.releaseHeld)
		a := env.startRunner(Config{LeaseTTL: leaseTTL})
		nr := env.newRun(fj.URL(), 2, concurrency, 60)
		nr.Settings.NoCache = true
		run := env.launch(a, nr)
		env.waitRun(run.ID, 15*time.Second, "one batch stored, two calls held", func(r models.Run) bool {
			return r.BatchesDone == answered && fj.InFlight() == concurrency
		})
		if _, err := a.Pause(context.Background(), env.ws.ID, run.ID); err != nil {
			t.Fatalf("pause: %v", err)
		}
		// The held calls stay out for longer than a lease...
		time.Sleep(leaseTTL + leaseTTL/2)
		// ...then Continue is pressed, with a second worker ready too.
		b := env.startRunner(Config{LeaseTTL: leaseTTL})
		if _, err := b.Continue(context.Background(), env.ws.ID, run.ID, models.Requeue{}); err != nil {
			t.Fatalf("continue: %v", err)
		}
		// Long enough for either worker to claim the run and send a call.
		time.Sleep(leaseTTL + leaseTTL/2)
		if sent := fj.Total(); sent != answered+concurrency {
			t.Errorf("while the paused calls were on their way the judge got %d calls, want the %d sent before the pause", sent, answered+concurrency)
		}
		if now := env.getRun(run.ID); now.Status != models.RunQueued || now.LeaseOwner == "" {
			t.Errorf("while the paused calls were on their way the run is %s with lease owner %q, want queued and still held by the pausing execution", now.Status, now.LeaseOwner)
		}

		fj.releaseHeld()
		done := env.waitFinished(run.ID, 60*time.Second, func() { b.Sweep(context.Background()) })
		if done.Status != models.RunSucceeded {
			t.Fatalf("continued run %s (%s)", done.Status, done.Error)
		}
		fj.mu.Lock()
		keys := append([]string(nil), fj.order...)
		fj.mu.Unlock()
		for _, k := range keys {
			if n := fj.Count(k, false); n != 1 {
				t.Errorf("batch %s was sent to the judge %d times, want once", k, n)
			}
		}
		if len(keys) != done.BatchesTotal || done.BatchesDone != done.BatchesTotal {
			t.Errorf("the judge saw %d batches; the run has %d of %d done", len(keys), done.BatchesDone, done.BatchesTotal)
		}
		if done.Calls != fj.Total() {
			t.Errorf("the run counted %d calls, the judge got %d", done.Calls, fj.Total())
		}
	})
}
