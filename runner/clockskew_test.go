package runner

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestLeasesFollowTheDatabaseClock: two workers share a database, and one
// of them has a wall clock three leases off. Leases used to be written and
// compared with each worker's own clock: a worker whose clock runs ahead
// saw every other worker's live lease as lapsed and took the run (its
// batches were then paid twice), and a worker whose clock runs behind
// wrote leases that looked lapsed to everyone else the moment it wrote
// them. With the database's clock, the contender leaves the live lease
// alone (neither its sweep nor its claim takes the run) and the holder
// keeps its lease to the end of the run, each batch sent once.
func TestLeasesFollowTheDatabaseClock(t *testing.T) {
	t.Parallel()
	// Short, so that three leases pass while the holder's call is out;
	// but the holder renews every TTL/3 and gives the run up once a TTL
	// has passed since its last renewal began (keepLease). A TTL of 1 s
	// left it 667 ms, which renewals under the race detector at load 20
	// overran in a third of the tries on SQLite: the lease really lapsed,
	// and the contender rightly took it. 2 s leaves 1.3 s, as the other
	// lease tests do; a try where the holder still let its lease lapse is
	// made again (leaseClockTry).
	const ttl = 2 * time.Second
	cases := []struct {
		name              string
		holder, contender time.Duration // how far each worker's clock is off
	}{
		{name: "the other worker's clock runs ahead", contender: 3 * ttl},
		{name: "the holder's clock runs behind", holder: -3 * ttl},
	}
	for _, d := range dbtest.Dialects {
		for _, tc := range cases {
			t.Run(string(d)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				// A try where the holder itself let its lease lapse (its
				// renewal came late: the race detector under load) shows
				// nothing about the contender, which may then rightly take
				// the run, and is made again on a new database.
				const tries = 3
				for try := 1; ; try++ {
					lapsed := leaseClockTry(t, d, ttl, tc.holder, tc.contender)
					if lapsed == "" {
						return
					}
					if try == tries {
						t.Fatalf("in each of %d tries the holder let its own lease lapse (%s): the machine is too slow for %s leases", tries, lapsed, ttl)
					}
					t.Logf("try %d: the holder let its own lease lapse (%s); trying again", try, lapsed)
				}
			})
		}
	}
}

// leaseClockTry is one try of TestLeasesFollowTheDatabaseClock on a new
// database: it fails t, or returns how the holder let its own lease lapse
// ("" when it did not, and the try passed).
func leaseClockTry(t *testing.T, d models.Dialect, ttl, holderSkew, contenderSkew time.Duration) string {
	t.Helper()
	// Two processes on one database, each with its own clock.
	dsn := dbtest.DSN(t, d)
	holderDB := dbtest.OpenDSN(t, dsn, migrateJobs)
	contenderDB := dbtest.OpenDSN(t, dsn, migrateJobs)
	holderDB.Clock = func() time.Time { return time.Now().Add(holderSkew) }
	contenderDB.Clock = func() time.Time { return time.Now().Add(contenderSkew) }
	env := newTestEnv(t, holderDB)

	var fj *fakeJudge
	fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
		return fj.hang(r) // held until released, then answered
	})
	holder := env.startRunner(Config{LeaseTTL: ttl})
	t.Cleanup(fj.releaseHeld)
	// The holder's lease, read with the database's clock every 20 ms
	// from the launch to the end of the contention: the holder let it
	// lapse if one of its executions' leases was seen live and then lapsed
	// while still its own, or passed from one of its executions to another
	// (its job claimed the run again after the lapse). A holder that
	// wrote leases lapsed from the start (the bug this test is for) is
	// never seen live, and is not excused.
	watch, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	watched := make(chan string, 1)
	mine := func(owner string) bool { return strings.HasPrefix(owner, holder.ID()+"/") }
	go func() {
		live, last := map[string]bool{}, ""
		for watch.Err() == nil {
			ls, _ := env.db.RunningLeases(watch) // an error: nothing seen
			for _, l := range ls {
				switch {
				case !mine(l.Owner):
				case last != "" && l.Owner != last:
					watched <- fmt.Sprintf("its lease passed from %s to %s", last, l.Owner)
					return
				case l.Lapsed && live[l.Owner]:
					watched <- fmt.Sprintf("%s's lease lapsed while still its own", l.Owner)
					return
				case !l.Lapsed:
					live[l.Owner], last = true, l.Owner
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		watched <- ""
	}()
	ownLapse := sync.OnceValue(func() string {
		stopWatch()
		return <-watched
	})

	run := env.launch(holder, env.newRun(fj.URL(), 1, 1, 30))
	// Leased and a call out, read together: a poll between the
	// call's arrival and the read of the run could see the run
	// before its claim was visible (a flake under load, where
	// the holder's first read came late).
	held := env.waitRun(run.ID, 60*time.Second, "leased with a call out", func(r models.Run) bool {
		return fj.Total() >= 1 && r.LeaseOwner != ""
	})

	contender, err := New(Config{DB: contenderDB, Log: testLog(), LeaseTTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	// The contender sweeps and tries to claim the run, as its
	// sweep loop and its worker would, while the holder renews.
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			contender.Sweep(ctx)
			_ = contender.Execute(ctx, run.ID)
			time.Sleep(ttl / 20) // some 20 tries a lease
		}
	}()
	var taken string
	var requeued rivertype.JobState
	for end := time.Now().Add(3 * ttl); time.Now().Before(end) && taken == ""; time.Sleep(20 * time.Millisecond) {
		if got := env.getRun(run.ID); got.LeaseOwner != held.LeaseOwner {
			taken = got.LeaseOwner
		}
		if j := env.job(*run.JobID); j.State != rivertype.JobStateRunning && requeued == "" {
			requeued = j.State
		}
	}
	stop()
	fj.releaseHeld()
	wg.Wait()
	if taken != "" || requeued != "" {
		if lapsed := ownLapse(); lapsed != "" {
			return lapsed
		}
	}
	if taken != "" {
		t.Fatalf("the live lease of %s was taken by %q", held.LeaseOwner, taken)
	}
	if requeued != "" {
		t.Errorf("the holder's job became %s during its run, want running (the contender's sweep requeued it)", requeued)
	}
	got := env.waitFinished(run.ID, 60*time.Second)
	// A lapse after the contention sends a batch again: the holder's own.
	if lapsed := ownLapse(); lapsed != "" {
		return lapsed
	}
	if got.Status != models.RunSucceeded || fj.Total() != 3 || got.Calls != 3 {
		t.Errorf("run %s after %d requests, %d calls counted (error %q); want succeeded after 3, each batch sent once",
			got.Status, fj.Total(), got.Calls, got.Error)
	}
	return ""
}

// TestJudgeSlotsFollowTheDatabaseClock: two workers share a database and a
// judge limited to two calls at once, and one worker's wall clock is two
// minutes off (more than a slot's lease). Slot leases used to be written
// and compared with each worker's own clock: a worker whose clock runs
// ahead saw the slots another worker held as expired and took them, and
// one whose clock runs behind wrote leases that had lapsed for everyone
// else, so the judge had four calls in flight. With the database's clock
// it never has more than two, and both runs finish.
func TestJudgeSlotsFollowTheDatabaseClock(t *testing.T) {
	t.Parallel()
	const limit = 2
	const skew = 4 * slotLease
	cases := []struct {
		name              string
		holder, contender time.Duration // how far each worker's clock is off
	}{
		{name: "the other worker's clock runs ahead", contender: skew},
		{name: "the holder's clock runs behind", holder: -skew},
	}
	for _, d := range dbtest.Dialects {
		for _, tc := range cases {
			t.Run(string(d)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				dsn := dbtest.DSN(t, d)
				holderDB := dbtest.OpenDSN(t, dsn, migrateJobs)
				contenderDB := dbtest.OpenDSN(t, dsn, migrateJobs)
				contenderDB.Secrets = holderDB.Secrets
				holderDB.Clock = func() time.Time { return time.Now().Add(tc.holder) }
				contenderDB.Clock = func() time.Time { return time.Now().Add(tc.contender) }
				env := newTestEnv(t, holderDB)

				var fj *fakeJudge
				fj = newFakeJudge(t, simjudge.Options{Seed: 11}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					return fj.hang(r) // held until released, then answered
				})
				judgeID := limitedJudge(t, env, fj.URL(), models.JudgeLimits{MaxConcurrency: limit})
				// Both runs are stored by a runner that works no jobs; each
				// worker executes its own, as its job would.
				var ids []int64
				for k := range 2 {
					spec := env.newRun(fj.URL(), 1, 8, 30)
					spec.Name = fmt.Sprintf("shared key %d", k)
					spec.JudgeID = &judgeID
					spec.Settings.BatchSize = 5 // 6 batches: more than the limit
					ids = append(ids, env.launch(env.jobs, spec).ID)
				}
				var workers []*Runner
				for _, db := range []*models.DB{holderDB, contenderDB} {
					w, err := New(Config{DB: db, Log: testLog(), JudgeTuning: fastTuning})
					if err != nil {
						t.Fatal(err)
					}
					workers = append(workers, w)
				}
				var peak atomic.Int64
				watchCtx, stopWatch := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for watchCtx.Err() == nil {
						if n := int64(fj.InFlight()); n > peak.Load() {
							peak.Store(n)
						}
						time.Sleep(200 * time.Microsecond)
					}
				}()
				execErrs := make([]error, 2)
				execute := func(k int) {
					wg.Add(1)
					go func() {
						defer wg.Done()
						execErrs[k] = workers[k].Execute(context.Background(), ids[k])
					}()
				}
				t.Cleanup(func() { fj.releaseHeld(); stopWatch(); wg.Wait() })

				// The holder takes both slots; its calls stay out.
				execute(0)
				env.waitRun(ids[0], 15*time.Second, "the holder's calls out", func(models.Run) bool { return fj.InFlight() >= limit })
				// The other worker wants slots for its own run meanwhile:
				// once it has been refused one (it waits for a slot to be
				// freed), it tries again for 300ms, every 2-100ms (was a
				// fixed second). A worker that took the held slots did so
				// at its first try, and its calls were counted in flight.
				execute(1)
				waitingForSlot := func() bool {
					workers[1].slots.mu.Lock()
					defer workers[1].slots.mu.Unlock()
					_, ok := workers[1].slots.ch[judgeID]
					return ok
				}
				for deadline := time.Now().Add(15 * time.Second); !waitingForSlot() && fj.InFlight() <= limit; time.Sleep(5 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the other worker never asked for a slot")
					}
				}
				time.Sleep(300 * time.Millisecond)
				fj.releaseHeld()
				for k, id := range ids {
					if got := env.waitFinished(id, 30*time.Second); got.Status != models.RunSucceeded {
						t.Errorf("run %d (worker %d) ended %s (%s)", id, k, got.Status, got.Error)
					}
				}
				stopWatch()
				wg.Wait()
				for k, err := range execErrs {
					if err != nil {
						t.Errorf("worker %d: %v", k, err)
					}
				}
				if p := peak.Load(); p > limit {
					t.Errorf("the judge had up to %d calls in flight; want at most the shared limit %d", p, limit)
				}
				if n, err := holderDB.JudgeSlotsHeld(context.Background(), judgeID); err != nil || n != 0 {
					t.Errorf("%d slots still held after both runs ended (%v)", n, err)
				}
			})
		}
	}
}

// TestJudgeBudgetFollowsTheDatabaseClock: two workers share a judge
// limited to 240 requests a minute, and one worker's wall clock is two
// minutes off. The bucket used to be refilled by each worker's own clock:
// one whose clock runs ahead refilled it fully and stamped the refill two
// minutes ahead, and one whose clock runs behind found the last refill in
// its future; either way a worker saw no refill for two minutes and its
// run stalled. With the database's clock both runs share the rate and
// finish in seconds.
func TestJudgeBudgetFollowsTheDatabaseClock(t *testing.T) {
	t.Parallel()
	const skew = 2 * time.Minute
	cases := []struct {
		name         string
		first, other time.Duration // how far each worker's clock is off
	}{
		{name: "the other worker's clock runs ahead", other: skew},
		{name: "the other worker's clock runs behind", other: -skew},
	}
	for _, d := range dbtest.Dialects {
		for _, tc := range cases {
			t.Run(string(d)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				dsn := dbtest.DSN(t, d)
				firstDB := dbtest.OpenDSN(t, dsn, migrateJobs)
				otherDB := dbtest.OpenDSN(t, dsn, migrateJobs)
				otherDB.Secrets = firstDB.Secrets
				firstDB.Clock = func() time.Time { return time.Now().Add(tc.first) }
				otherDB.Clock = func() time.Time { return time.Now().Add(tc.other) }
				env := newTestEnv(t, firstDB)
				fj := newFakeJudge(t, simjudge.Options{Seed: 12}, nil)
				// 240 a minute: a bucket of 4 requests, 4 more a second.
				judgeID := limitedJudge(t, env, fj.URL(), models.JudgeLimits{RequestsPerMinute: 240})
				var ids []int64
				for k := range 2 {
					spec := env.newRun(fj.URL(), 1, 2, 30)
					spec.Name = fmt.Sprintf("shared key %d", k)
					spec.JudgeID = &judgeID
					spec.Settings.BatchSize = 5 // 6 calls each: 12 take about 2 s
					ids = append(ids, env.launch(env.jobs, spec).ID)
				}
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				t.Cleanup(func() { cancel(); wg.Wait() })
				for k, db := range []*models.DB{firstDB, otherDB} {
					w, err := New(Config{DB: db, Log: testLog(), JudgeTuning: fastTuning})
					if err != nil {
						t.Fatal(err)
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := w.Execute(ctx, ids[k]); err != nil && ctx.Err() == nil {
							t.Errorf("worker %d: %v", k, err)
						}
					}()
				}
				for k, id := range ids {
					if got := env.waitFinished(id, 20*time.Second); got.Status != models.RunSucceeded || got.Calls != 6 {
						t.Errorf("run %d (worker %d) ended %s after %d calls (%s); want succeeded after 6 within 20 s",
							id, k, got.Status, got.Calls, got.Error)
					}
				}
			})
		}
	}
}
