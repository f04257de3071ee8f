package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestLostLeaseIsRecordedOnTheRun: worker A's database stops answering it
// for longer than its lease (the run's row is held, so A's renewals and
// writes wait: the fault TestFaultFrozenWorker injects "in a write"). A
// stops working the run and the run goes on under a new claim, by worker
// B (a process of its own, with its own pool) or by A again. Once the
// database answers again, the run's events say that A lost its lease, when
// and why, and then who took the run on and when; the run ends complete,
// with every request the judge answered counted once. Before, nothing on
// the run told the gap in its progress.
func TestLostLeaseIsRecordedOnTheRun(t *testing.T) {
	t.Parallel()
	const ttl = 2 * time.Second
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		fj := newFakeJudge(t, simjudge.Options{Seed: 23, Latency: 150 * time.Millisecond}, nil)
		a := env.startRunner(Config{DB: otherHandle(t, env.db), LeaseTTL: ttl, MaxRuns: 1})
		spec := env.newRun(fj.URL(), 2, 1, 30)
		spec.Settings.BatchSize = 3 // 20 batches, one at a time
		run := env.launch(env.jobs, spec)
		mid := env.waitRun(run.ID, 30*time.Second, "a few batches answered", func(r models.Run) bool {
			return r.LeaseOwner != "" && r.BatchesDone >= 2
		})
		if !strings.HasPrefix(mid.LeaseOwner, a.ID()+"/") {
			t.Fatalf("run leased by %q, want worker A (%s)", mid.LeaseOwner, a.ID())
		}
		b := env.startRunner(Config{DB: otherHandle(t, env.db), LeaseTTL: ttl, MaxRuns: 1})
		// The database stops answering worker A for longer than its lease.
		hold := env.db.Gorm.Begin()
		t.Cleanup(func() { hold.Rollback() })
		if err := hold.Exec(`UPDATE runs SET name = name WHERE id = ?`, run.ID).Error; err != nil {
			t.Fatal(err)
		}
		var status string
		if err := hold.Raw(`SELECT status FROM runs WHERE id = ?`, run.ID).Scan(&status).Error; err != nil {
			t.Fatal(err)
		}
		if status != string(models.RunRunning) {
			t.Fatalf("the run was %s before the row was held; it must still be running for this test", status)
		}
		time.Sleep(ttl + ttl/2)
		if err := hold.Commit().Error; err != nil {
			t.Fatal(err)
		}
		got := env.waitFinished(run.ID, 60*time.Second)
		if got.Status != models.RunSucceeded || got.MissingScores != 0 {
			t.Fatalf("run %s with %d missing scores (%s), want succeeded complete", got.Status, got.MissingScores, got.Error)
		}
		// Every request the judge answered is counted once: the call A had
		// out at the lease loss, sent again by the run's next holder and
		// answered alike by the seeded judge, is two paid calls (one of
		// them used to be taken for a replay of the other and left out).
		if got.Calls != fj.Answered() {
			t.Errorf("the run counts %d calls, the judge answered %d requests (%d received): paid calls lost or counted twice", got.Calls, fj.Answered(), fj.Total())
		}

		var evs []models.RunEvent
		eventually(t, "the lost lease and what followed on the run", func() bool {
			var err error
			evs, err = env.db.RunEvents(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(evs) >= 2
		})
		lost := evs[0]
		if lost.Kind != models.RunEventLeaseLost || lost.Worker != mid.LeaseOwner {
			t.Fatalf("first event %s by %q (%s), want %s by worker A (%s)", lost.Kind, lost.Worker, lost.Message, models.RunEventLeaseLost, mid.LeaseOwner)
		}
		if !strings.Contains(lost.Message, "Worker "+a.ID()+" lost its lease on the run at "+eventTime(lost.At)) {
			t.Errorf("lost-lease message %q does not name worker A and when", lost.Message)
		}
		next := evs[1]
		switch next.Kind {
		case models.RunEventTakenOver:
			if !strings.HasPrefix(next.Worker, b.ID()+"/") || !strings.Contains(next.Message, "Worker "+b.ID()+" took the run over at ") ||
				!strings.Contains(next.Message, "from worker "+a.ID()) {
				t.Errorf("takeover by %q: %q; want worker B (%s) taking it from A (%s)", next.Worker, next.Message, b.ID(), a.ID())
			}
		case models.RunEventResumed:
			if !strings.HasPrefix(next.Worker, a.ID()+"/") || next.Worker == lost.Worker || !strings.Contains(next.Message, "Worker "+a.ID()+" resumed the run at ") {
				t.Errorf("resume by %q: %q; want a new execution of worker A (%s)", next.Worker, next.Message, a.ID())
			}
		default:
			t.Fatalf("second event %s (%s), want taken_over or resumed", next.Kind, next.Message)
		}
		if next.At.Before(lost.At) {
			t.Errorf("the run was taken on at %s, before the lease was lost at %s", next.At, lost.At)
		}
		for _, ev := range evs[2:] {
			t.Errorf("unexpected further event %s: %s", ev.Kind, ev.Message)
		}
		t.Logf("events: %q / %q", lost.Message, next.Message)
	})
}

// TestLeaseLostToAClaimMadeWhileTheRenewalWaited: worker A's renewal waits
// behind a held row for longer than its lease, and by the time it gets the
// row another execution has claimed the run. A lost its lease (the run's
// events say so, and A takes the run on again once that claim lapses).
// Before, A read the renewal's "not yours" as a cancel: it ended its job
// quietly, recorded nothing and left the run to whoever had claimed it.
func TestLeaseLostToAClaimMadeWhileTheRenewalWaited(t *testing.T) {
	t.Parallel()
	const ttl = 2 * time.Second
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		fj := newFakeJudge(t, simjudge.Options{Seed: 29, Latency: 150 * time.Millisecond}, nil)
		a := env.startRunner(Config{DB: otherHandle(t, env.db), LeaseTTL: ttl, MaxRuns: 1})
		spec := env.newRun(fj.URL(), 2, 1, 30)
		spec.Settings.BatchSize = 3
		run := env.launch(env.jobs, spec)
		mid := env.waitRun(run.ID, 30*time.Second, "a few batches answered", func(r models.Run) bool {
			return r.LeaseOwner != "" && r.BatchesDone >= 2
		})
		if !strings.HasPrefix(mid.LeaseOwner, a.ID()+"/") {
			t.Fatalf("run leased by %q, want worker A (%s)", mid.LeaseOwner, a.ID())
		}
		// Another execution claims the run while A's renewal waits for the
		// row: its claim lands first, and A's lease has run out by then.
		hold := env.db.Gorm.Begin()
		t.Cleanup(func() { hold.Rollback() })
		if err := hold.Exec(`UPDATE runs SET lease_owner = ? WHERE id = ?`, "elsewhere/1", run.ID).Error; err != nil {
			t.Fatal(err)
		}
		var status string
		if err := hold.Raw(`SELECT status FROM runs WHERE id = ?`, run.ID).Scan(&status).Error; err != nil {
			t.Fatal(err)
		}
		if status != string(models.RunRunning) {
			t.Fatalf("the run was %s before the row was held; it must still be running for this test", status)
		}
		time.Sleep(ttl + ttl/2)
		if err := hold.Commit().Error; err != nil {
			t.Fatal(err)
		}
		var evs []models.RunEvent
		eventually(t, "the lost lease on the run", func() bool {
			var err error
			evs, err = env.db.RunEvents(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(evs) >= 1
		})
		if lost := evs[0]; lost.Kind != models.RunEventLeaseLost || lost.Worker != mid.LeaseOwner {
			t.Fatalf("first event %s by %q (%s), want %s by worker A (%s)", lost.Kind, lost.Worker, lost.Message, models.RunEventLeaseLost, mid.LeaseOwner)
		}
		// The claim that won was nobody's work: once it lapses, A takes
		// the run on again and finishes it.
		got := env.waitFinished(run.ID, 60*time.Second)
		if got.Status != models.RunSucceeded || got.MissingScores != 0 {
			t.Fatalf("run %s with %d missing scores (%s), want succeeded complete", got.Status, got.MissingScores, got.Error)
		}
		evs, err := env.db.RunEvents(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) < 2 || evs[1].Kind != models.RunEventTakenOver || !strings.HasPrefix(evs[1].Worker, a.ID()+"/") ||
			!strings.Contains(evs[1].Message, "from worker elsewhere") {
			t.Errorf("events after the lost lease: %+v; want worker A taking the run over from the claim that won", evs[1:])
		}
	})
}

// TestLostLeaseWrittenAfterALongOutage: the database stays down for
// longer than --db-retry-for after a worker lost its lease. The lost lease
// is still recorded on the run, once, as soon as the database answers
// again (within EventRetryFor), with when and why it was lost, and it
// comes before the successor's takeover. Before, the worker gave up after
// --db-retry-for and the run's events never told that it had lost the
// lease, nor why.
func TestLostLeaseWrittenAfterALongOutage(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		r, err := New(Config{DB: otherHandle(t, env.db), Log: testLog(), DBRetryFor: 50 * time.Millisecond, EventRetryFor: 4 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.endNotes)
		var down atomic.Bool
		down.Store(true)
		var tries atomic.Int64
		r.eventWriter = func(ctx context.Context, ev models.RunEvent) error {
			tries.Add(1)
			if down.Load() {
				// What a write gives, after its retries, while the
				// database refuses connections.
				return fmt.Errorf("record %s: %w", ev.Kind, syscall.ECONNREFUSED)
			}
			return r.db.AddRunEvent(ctx, ev)
		}
		run := env.newRun("http://127.0.0.1:1/v1", 1, 1, 30)
		if err := env.db.CreateRun(ctx, &run, nil); err != nil {
			t.Fatal(err)
		}
		lostAt := time.Now().Add(-time.Second).Truncate(time.Second)
		cause := &leaseLostError{at: lostAt, err: errors.New("connection refused")}
		r.noteLeaseLost(ctx, run.ID, "worker-a/3", cause, cause, testLog())

		// The successor claims the run while the worker's database is
		// still down for it.
		took := models.RunEvent{RunID: run.ID, At: time.Now(), Kind: models.RunEventTakenOver, Worker: "worker-b/1",
			Message: "Worker worker-b took the run over from worker worker-a (its lease had run out)."}
		if err := env.db.AddRunEvent(ctx, took); err != nil {
			t.Fatal(err)
		}
		eventually(t, "several tries while the database is down", func() bool { return tries.Load() >= 3 })
		evs, err := env.db.RunEvents(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 {
			t.Fatalf("events while the database is down: %+v, want the takeover only", evs)
		}
		down.Store(false)
		eventually(t, "the lost lease on the run", func() bool {
			evs, err = env.db.RunEvents(ctx, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			return len(evs) >= 2
		})
		lost := evs[0]
		if lost.Kind != models.RunEventLeaseLost || lost.Worker != "worker-a/3" || !lost.At.Equal(lostAt) ||
			!strings.Contains(lost.Message, "Worker worker-a lost its lease on the run at "+eventTime(lostAt)+": it could not renew it in time (the database did not answer: connection refused)") {
			t.Errorf("first event %s by %q at %s: %q; want worker-a's lost lease at %s, with why", lost.Kind, lost.Worker, lost.At, lost.Message, lostAt)
		}
		if evs[1].Kind != models.RunEventTakenOver {
			t.Errorf("second event %s, want the takeover", evs[1].Kind)
		}
		// Written again (a retry whose commit was not acknowledged), the
		// same fact is not told twice.
		again := lost
		again.Message = "again"
		if err := env.db.AddRunEvent(ctx, again); err != nil {
			t.Fatal(err)
		}
		r.endNotes()
		if evs, err := env.db.RunEvents(ctx, run.ID); err != nil || len(evs) != 2 {
			t.Errorf("events after the same lost lease was written again: %+v (%v), want 2", evs, err)
		}
	})
}

// TestTakeoverSaysInFlightCallsWereResent: a run taken over from a worker
// whose lease ran out (kill -9 of one of two server processes) had a Run
// history line saying only "Batches already answered were not sent
// again", while the calls that worker had out were sent again and, had it
// crashed, their first copies were paid for without being in the run's
// calls, tokens or cost (README, "A worker crashes"). The line now says
// so, beside the cost it qualifies.
func TestTakeoverSaysInFlightCallsWereResent(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		r, err := New(Config{DB: env.db, Log: testLog()})
		if err != nil {
			t.Fatal(err)
		}
		run := env.newRun("http://127.0.0.1:1/v1", 1, 4, 30)
		if err := env.db.CreateRun(ctx, &run, nil); err != nil {
			t.Fatal(err)
		}
		until := time.Now().Add(-2 * time.Second)
		r.noteTakeover(ctx, run.ID, "host-b:2/1", models.RunLease{RunID: run.ID, Owner: "host-a:1/3", Until: &until, Lapsed: true}, testLog())
		evs, err := env.db.RunEvents(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 1 || evs[0].Kind != models.RunEventTakenOver {
			t.Fatalf("events %+v, want one takeover", evs)
		}
		for _, want := range []string{"Batches already answered were not sent again",
			"calls worker host-a:1 had sent and not yet stored were sent again",
			"not in the run's calls, tokens or cost"} {
			if !strings.Contains(evs[0].Message, want) {
				t.Errorf("takeover message %q does not say %q", evs[0].Message, want)
			}
		}
	})
}
