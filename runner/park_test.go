package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// idleAfter is how long the parking tests let a worker idle before it
// parks: short, so the whole set takes seconds.
const idleAfter = 200 * time.Millisecond

// waitParked waits until r's parked state is want, failing after within.
func waitParked(t *testing.T, r *Runner, want bool, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for r.Parked() != want {
		if time.Since(start) > within {
			t.Fatalf("worker parked = %v after %s, want %v", r.Parked(), within, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// stopWithin stops r and fails if that takes longer than d.
func stopWithin(t *testing.T, r *Runner, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := r.Stop(ctx); err != nil {
		t.Errorf("stop: %v", err)
	}
	if took := time.Since(start); took > d {
		t.Errorf("stop took %s, want at most %s", took.Round(time.Millisecond), d)
	}
	assertParkingEnded(t, r)
}

// assertParkingEnded checks that Stop left nothing of parking behind: its
// loop has returned and no connection still LISTENs (PostgreSQL).
func assertParkingEnded(t *testing.T, r *Runner) {
	t.Helper()
	if r.park.done != nil {
		select {
		case <-r.park.done:
		default:
			t.Error("the parking loop is still running after Stop")
		}
	}
	if r.db.Dialect != models.Postgres {
		return
	}
	// A closed connection's server process ends a moment after the close:
	// look for a second; a subscription left on a pooled connection stays.
	var listening []string
	for deadline := time.Now().Add(time.Second); ; time.Sleep(20 * time.Millisecond) {
		listening = listeningBackends(t, r.db)
		if len(listening) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(listening) != 0 {
		t.Errorf("connections still LISTEN after Stop: %q, want none", listening)
	}
}

// listeningBackends lists the other connections to db's database whose
// last statement was a LISTEN.
func listeningBackends(t *testing.T, db *models.DB) []string {
	t.Helper()
	rows, err := db.SQL.Query(`SELECT pid::text || ' ' || query || ' (' || state || ')' FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN %'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			t.Fatal(err)
		}
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestParkWhenIdle: a worker with nothing to do parks after IdleAfter; a
// Launch through it wakes it and the run finishes; it does not park while
// the run's calls are in flight, and parks again once the run is over.
func TestParkWhenIdle(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var hold atomic.Bool
		hold.Store(true)
		var fj *fakeJudge
		fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if hold.Load() {
				fj.hang(r)
			}
			return false
		})
		// Long polls: only the in-process wake can start the run quickly.
		r := env.startRunner(Config{IdleAfter: idleAfter, PollInterval: time.Minute})
		t.Cleanup(fj.releaseHeld)
		took := waitParked(t, r, true, 3*time.Second)
		if took < idleAfter/2 {
			t.Errorf("parked %s after start, before IdleAfter (%s)", took, idleAfter)
		}
		if got := parkedGauge(t, r); got != 1 {
			t.Errorf("parked gauge %v while parked, want 1", got)
		}

		run := env.launch(r, env.newRun(fj.URL(), 1, 3, 30))
		waitParked(t, r, false, time.Second)
		env.waitRun(run.ID, 2*time.Second, "judging", func(r models.Run) bool { return fj.InFlight() > 0 })
		// Calls in flight for several IdleAfters: no parking.
		time.Sleep(4 * idleAfter)
		if r.Parked() {
			t.Fatal("the worker parked while a run was being judged")
		}
		hold.Store(false)
		fj.releaseHeld()
		if got := env.waitFinished(run.ID, 10*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %s (error %q), want succeeded", got.Status, got.Error)
		}
		waitParked(t, r, true, 3*time.Second)
		stopWithin(t, r, time.Second)
	})
}

// TestParkingOff: IdleAfter 0 (the default) never parks.
func TestParkingOff(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		r := env.startRunner(Config{})
		time.Sleep(5 * idleAfter)
		if r.Parked() || r.park.done != nil {
			t.Fatalf("a worker with IdleAfter 0 parked (%v) or started parking (%v)", r.Parked(), r.park.done != nil)
		}
	})
}

// TestParkedWakesForAnotherProcess: a run queued by another process (an
// insert-only runner: not this worker's Launch, so no in-process wake) is
// picked up by a parked worker: on PostgreSQL through River's insert
// notification (the poll is a minute, so nothing else could), on SQLite
// by the parked poll, within PollInterval.
func TestParkedWakesForAnotherProcess(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		poll, within := time.Minute, time.Second
		if env.db.Dialect == models.SQLite {
			poll = 300 * time.Millisecond
			within = poll + time.Second
		}
		fj := newFakeJudge(t, simjudge.Options{Seed: 9}, nil)
		r := env.startRunner(Config{IdleAfter: idleAfter, PollInterval: poll})
		waitParked(t, r, true, 3*time.Second)
		// Parked a while, so a poll started at parking time is long past.
		time.Sleep(idleAfter)

		start := time.Now()
		run := env.launch(env.jobs, env.newRun(fj.URL(), 1, 3, 30))
		env.waitRun(run.ID, within, "picked up", func(r models.Run) bool { return r.Status != models.RunQueued })
		t.Logf("picked up %s after it was queued", time.Since(start).Round(time.Millisecond))
		if got := env.waitFinished(run.ID, 10*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %s (error %q), want succeeded", got.Status, got.Error)
		}
	})
}

// TestJobQueuedWhileParking: a run queued by another process while the
// worker's client is stopping (after its last look, before it waits) is
// still picked up, at once: the worker looks again once the client has
// stopped. The poll is a minute, so only that look can find it on SQLite,
// and on PostgreSQL the notification went out before the LISTEN.
func TestJobQueuedWhileParking(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{Seed: 9}, nil)
		var queued atomic.Int64
		var once atomic.Bool
		r := env.startRunner(Config{IdleAfter: idleAfter, PollInterval: time.Minute}, func(r *Runner) {
			r.park.afterStop = func() {
				if once.CompareAndSwap(false, true) {
					run := env.launch(env.jobs, env.newRun(fj.URL(), 1, 3, 30))
					queued.Store(run.ID)
				}
			}
		})
		waitParked(t, r, true, 3*time.Second)
		for queued.Load() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		if got := env.waitFinished(queued.Load(), 3*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %s (error %q), want succeeded", got.Status, got.Error)
		}
	})
}

// TestParkedRescuesLapsedLease: the lease sweep keeps running while the
// worker is parked; a run whose worker died is requeued when its lease
// lapses, and the requeue wakes the worker, which finishes the run.
func TestParkedRescuesLapsedLease(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		fj := newFakeJudge(t, simjudge.Options{Seed: 9}, nil)
		run := env.launch(env.jobs, env.newRun(fj.URL(), 1, 3, 30))
		// The dead worker's lease lapses when the test says, once the
		// worker is parked: a lease of a fixed 1.5 s lapsed before a worker
		// slowed by the race detector under load had parked.
		if ok, err := env.db.ClaimRun(ctx, run.ID, "dead-worker", time.Hour); err != nil || !ok {
			t.Fatalf("claim for the dead worker: %v, %v", ok, err)
		}
		if err := env.db.Gorm.Exec(`UPDATE river_job SET state = 'running', attempt = 1 WHERE id = ?`, *run.JobID).Error; err != nil {
			t.Fatal(err)
		}
		// The default lease (10 s), not leaseTTL: the rescued run is worked
		// under it, and a worker slowed by the race detector at load 20 lost
		// a 2 s lease at almost every renewal, so the run did not finish.
		r := env.startRunner(Config{IdleAfter: idleAfter, PollInterval: time.Minute})
		waitParked(t, r, true, 30*time.Second)
		// Nothing but the rescue can wake it now: parked until the lapse.
		if !r.Parked() {
			t.Fatal("woke before the lease lapsed: the test proves nothing")
		}
		if ok, err := env.db.RenewLease(ctx, run.ID, "dead-worker", -time.Second); err != nil || !ok {
			t.Fatalf("lapse the dead worker's lease: %v, %v", ok, err)
		}
		got := env.waitFinished(run.ID, 60*time.Second)
		if got.Status != models.RunSucceeded || fj.Total() != 3 {
			t.Fatalf("run %s after %d requests (error %q), want succeeded after 3", got.Status, fj.Total(), got.Error)
		}
	})
}

// TestStopWhileParked: Stop returns promptly, and leaves no loop or
// listening connection behind, whether the worker is parked, parking,
// or being woken by a Launch.
func TestStopWhileParked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		parked bool          // wait for the worker to park first
		launch bool          // then launch a run through it (waking it)
		delay  time.Duration // and call Stop this long after that
	}{
		{name: "parked", parked: true},
		{name: "parking", parked: false, delay: idleAfter},
		{name: "racing a wake", parked: true, launch: true},
		{name: "just after a wake", parked: true, launch: true, delay: 5 * time.Millisecond},
		{name: "while waking", parked: true, launch: true, delay: 20 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachDB(t, func(t *testing.T, env *testEnv) {
				fj := newFakeJudge(t, simjudge.Options{Seed: 9}, nil)
				r := env.startRunner(Config{IdleAfter: idleAfter, PollInterval: time.Minute})
				if tt.parked {
					waitParked(t, r, true, 3*time.Second)
				}
				run := env.newRun(fj.URL(), 1, 3, 30)
				launched := make(chan error, 1)
				if tt.launch {
					go func() { launched <- r.Launch(context.Background(), &run) }()
				} else {
					launched <- nil
				}
				time.Sleep(tt.delay)
				stopWithin(t, r, time.Second)
				if err := <-launched; err != nil {
					t.Fatalf("launch: %v", err)
				}
				if !tt.launch {
					return
				}
				// Whatever the race did, the run is not lost: a later
				// worker finishes it, each batch judged once.
				env.startRunner(Config{})
				if got := env.waitFinished(run.ID, 10*time.Second); got.Status != models.RunSucceeded {
					t.Fatalf("run %s (error %q), want succeeded", got.Status, got.Error)
				}
				if n := fj.Total(); n != 3 {
					t.Errorf("judge saw %d requests, want 3 (one per batch)", n)
				}
			})
		})
	}
}

// TestParkWakeRace: runs queued at moments around parking (just before,
// during and after the client stops), through this worker and through
// another process, all finish, each batch judged exactly once.
func TestParkWakeRace(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		const idle = 30 * time.Millisecond
		fj := newFakeJudge(t, simjudge.Options{Seed: 9}, nil)
		r := env.startRunner(Config{IdleAfter: idle, PollInterval: 100 * time.Millisecond})
		const n = 8
		for i := range n {
			// Queue at idle plus 0..7 ms after the last run ended: around
			// the moment the worker decides to park and stops its client.
			time.Sleep(idle + time.Duration(i)*time.Millisecond)
			via := r
			if i%2 == 1 {
				via = env.jobs
			}
			run := env.newRun(fj.URL(), 1, 3, 30)
			run.Name = fmt.Sprintf("%s-%d", t.Name(), i)
			run.Settings.Seed = int64(100 + i) // distinct prompts, to count each batch's requests
			run = env.launch(via, run)
			if got := env.waitFinished(run.ID, 10*time.Second); got.Status != models.RunSucceeded {
				t.Fatalf("run %d: %s (error %q), want succeeded", i, got.Status, got.Error)
			}
		}
		for _, k := range fj.Keys() {
			if c := fj.Count(k, false); c != 1 {
				t.Errorf("batch %s requested %d times, want once", k, c)
			}
		}
		if got := fj.Total(); got != 3*n {
			t.Errorf("judge saw %d requests, want %d", got, 3*n)
		}
	})
}

// parkedGauge reads the parked gauge from r's registry.
func parkedGauge(t *testing.T, r *Runner) float64 {
	t.Helper()
	mfs, err := r.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "batcheval_worker_parked" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("no batcheval_worker_parked metric")
	return 0
}

// TestDueIn: the parked worker's one query finds jobs of its own queue
// that are or will be available, and how soon; finished jobs and other
// queues' do not count.
func TestDueIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		queue   string
		state   string
		in      time.Duration // scheduled_at from now
		wantAny bool
		wantDue bool // due now (wait <= 0)
	}{
		{name: "empty queue"},
		{name: "available", state: "available", wantAny: true, wantDue: true},
		{name: "retry due", state: "retryable", in: -time.Second, wantAny: true, wantDue: true},
		{name: "snoozed for an hour", state: "scheduled", in: time.Hour, wantAny: true},
		{name: "completed", state: "completed", in: -time.Second},
		{name: "running elsewhere", state: "running", in: -time.Second},
		{name: "another queue", queue: "cli_1", state: "available"},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := env.db.Gorm.Exec(`DELETE FROM river_job`).Error; err != nil {
					t.Fatal(err)
				}
				if tt.state != "" {
					queue := tt.queue
					if queue == "" {
						queue = "default"
					}
					res, err := env.jobs.river.Insert(ctx, RunArgs{RunID: 1}, &river.InsertOpts{Queue: queue})
					if err != nil {
						t.Fatal(err)
					}
					at := time.Now().Add(tt.in).UTC()
					var atArg any = at
					if env.db.Dialect == models.SQLite {
						atArg = at.Format("2006-01-02 15:04:05.000") // River's SQLite time format
					}
					var finalized any // River requires it of finished jobs only
					if tt.state == "completed" {
						finalized = atArg
					}
					if err := env.db.Gorm.Exec(`UPDATE river_job SET state = ?, scheduled_at = ?, finalized_at = ? WHERE id = ?`, tt.state, atArg, finalized, res.Job.ID).Error; err != nil {
						t.Fatal(err)
					}
				}
				wait, any, err := env.jobs.dueIn(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if any != tt.wantAny || (any && (wait <= 0) != tt.wantDue) {
					t.Fatalf("dueIn = %s, %v; want any %v, due now %v", wait, any, tt.wantAny, tt.wantDue)
				}
				// A second of slack: SQLite's clock is read as a Julian day.
				if tt.in == time.Hour && (wait < 59*time.Minute || wait > time.Hour+time.Second) {
					t.Errorf("a job snoozed for an hour is due in %s", wait)
				}
			})
		}
	})
}

// TestDueInUsesFetchIndex: on SQLite the parked worker's query is
// answered from River's fetch index, so it stays cheap however many
// finished jobs the table holds.
func TestDueInUsesFetchIndex(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, models.SQLite, migrateJobs)
	rows, err := db.SQL.Query(`EXPLAIN QUERY PLAN `+dueInSQLite, river.QueueDefault, DefaultRescueAfter.Seconds(), MailQueue)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if len(plan) == 0 || !strings.Contains(strings.Join(plan, "; "), "COVERING INDEX river_job_prioritized_fetching_index") {
		t.Errorf("query plan %q, want River's fetch index, covering", plan)
	}
}

// TestJobFetchedWhileParkingIsHandedBack: a job River fetches while the
// worker is stopping its client to park is snoozed, not worked (River's
// graceful stop would otherwise wait for the whole run, holding up every
// other run of this worker); the parked worker's look then finds it due.
func TestJobFetchedWhileParkingIsHandedBack(t *testing.T) {
	r := &Runner{} // no database: working the job would fail at once
	r.park.stopping.Store(true)
	w := &runWorker{r: r}
	err := w.Work(context.Background(), &river.Job[RunArgs]{Args: RunArgs{RunID: 1}})
	var snooze *river.JobSnoozeError
	if !errors.As(err, &snooze) {
		t.Fatalf("Work while parking returned %v, want a snooze", err)
	}
	if n := r.park.active.Load(); n != 0 {
		t.Errorf("%d jobs still counted active", n)
	}
}

// TestStopNotHeldByAHangingWake: Stop returns by its deadline even while
// the parking loop is restarting River's client and that restart hangs
// (a database that does not answer); the client is not started after.
func TestStopNotHeldByAHangingWake(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		r := env.startRunner(Config{IdleAfter: idleAfter, PollInterval: time.Minute})
		waitParked(t, r, true, 3*time.Second)
		entered, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		r.park.beforeStart = func() {
			once.Do(func() { close(entered) })
			<-release
		}
		// A wake that lands before the parked loop starts listening is
		// drained by it (a real launch leaves a due job the loop then
		// finds); with no job here, wake until it is seen.
		for deadline := time.Now().Add(10 * time.Second); ; {
			r.wakeUp()
			select {
			case <-entered:
			case <-time.After(50 * time.Millisecond):
				if time.Now().After(deadline) {
					t.Fatal("the parked worker did not try to wake")
				}
				continue
			}
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		done := make(chan struct{})
		go func() {
			_ = r.Stop(ctx)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			close(release)
			t.Fatal("Stop waited for a hanging restart of the job client")
		}
		close(release)
		select {
		case <-r.park.done:
		case <-time.After(5 * time.Second):
			t.Fatal("the parking loop did not end once the restart returned")
		}
	})
}

// TestHandOverLeavesAPrivateWorkerParked: a run handed over to the shared
// queue by a worker of a private queue (`batcheval run`) does not wake
// that worker, which could not take it (it kept River's client running
// for IdleAfter for nothing).
func TestHandOverLeavesAPrivateWorkerParked(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		private := env.startRunner(Config{Queue: "private-handover", IdleAfter: idleAfter, PollInterval: time.Minute})
		waitParked(t, private, true, 3*time.Second)
		run, _ := env.storedRun(env.newRun("http://127.0.0.1:1/v1", 1, 1, 30), 1)
		if err := private.HandOver(ctx, env.ws.ID, run.ID); err != nil {
			t.Fatal(err)
		}
		time.Sleep(idleAfter / 2)
		if !private.Parked() {
			t.Error("handing a run over to the shared queue woke the private queue's parked worker")
		}
	})
}

// TestParkedLooksWithTheSweep: a parked worker whose look for due jobs is
// a backstop (the wake file watched on SQLite, notifications on
// PostgreSQL) looked on a timer of its own, at the interval of the lease
// sweep's timer: two wake-ups of the process every 5 s where one does. It
// now looks right after each sweep: while the sweep is held, it makes no
// look of its own; once the sweep goes on, it looks again (and finds a job
// queued without a wake-up, the backstop). A job it has seen coming due
// sooner still sets its own timer (TestDueIn's times, parkedLooksWithSweep).
func TestParkedLooksWithTheSweep(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var looks atomic.Int64
		var hold atomic.Bool
		// quiet, once probed, gets the count of looks at the end of the
		// first look after which the parked worker has no signal of the
		// sweep left to look for (see below); probeMu orders the probe's
		// signal before the looks that check for it.
		var probeMu sync.Mutex
		var probed, marked bool
		unread := 0 // looks ended, once probed, with the signal still unread
		quiet := make(chan int64, 1)
		held := make(chan struct{}, 1)
		release := make(chan struct{})
		var releaseOnce sync.Once
		letGo := func() { releaseOnce.Do(func() { close(release) }) }
		// A lease of 400 ms: the idle sweep looks every 200 ms, the parked
		// worker's backstop as often (PollInterval is shorter).
		r := env.startRunner(Config{IdleAfter: idleAfter, PollInterval: 20 * time.Millisecond, LeaseTTL: 400 * time.Millisecond}, func(r *Runner) {
			r.park.looked = func() {
				n := looks.Add(1)
				probeMu.Lock()
				defer probeMu.Unlock()
				if !probed || marked {
					return
				}
				if len(r.park.swept) > 0 {
					// One look under way when the signal came may end
					// before it is read; a second is one of the worker's
					// own, which does not read it: count from here too.
					if unread++; unread < 2 {
						return
					}
				}
				marked = true
				quiet <- n
			}
			r.beforeSweep = func() {
				if hold.Load() {
					select {
					case held <- struct{}{}:
					default:
					}
					<-release
				}
			}
		})
		// Registered after the runner's stop, so run before it (a stop
		// waits for a held sweep).
		t.Cleanup(letGo)
		if env.db.Dialect == models.SQLite && !r.wake.watched.Load() {
			t.Skip("the wake file is not watched here: the parked worker looks every PollInterval on its own timer")
		}
		if got, want := r.parkedPoll(), 200*time.Millisecond; got != want {
			t.Fatalf("parked poll %s, want %s (the idle sweep's)", got, want)
		}
		// Deadlines are generous (the race detector under load is slow);
		// they bound a failure, not a pass.
		waitParked(t, r, true, 30*time.Second)
		for deadline := time.Now().Add(30 * time.Second); looks.Load() < 2; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d looks in 30 s while parked, want at least 2", looks.Load())
			}
		}
		hold.Store(true)
		select {
		case <-held:
		case <-time.After(30 * time.Second):
			t.Fatal("the sweep did not come in 30 s")
		}
		// The sweeps before the held one may still have a look coming: one
		// under way, slowed past the next sweep, and a signal waiting in
		// swept. Counted from here, it was taken for a look of the worker's
		// own (a flake under load). So wait for the worker to have none: a
		// signal of the test's own, sent now, makes sure one more look
		// ends; the first to end with no signal left in swept (the sweep is
		// held, so none comes) leaves the worker nothing to look for. (A
		// worker looking on a timer of its own leaves the signal unread:
		// the count starts at its second look.)
		probeMu.Lock()
		select {
		case r.park.swept <- struct{}{}:
		default: // one already waits: it makes the look
		}
		probed = true
		probeMu.Unlock()
		var before int64
		select {
		case before = <-quiet:
		case <-time.After(30 * time.Second):
			t.Fatal("the parked worker did not look after the sweep's signal in 30 s")
		}
		time.Sleep(5 * 200 * time.Millisecond) // five backstop intervals
		if got := looks.Load() - before; got != 0 {
			t.Errorf("%d looks of its own while the sweep was held, want none (one wake-up: the sweep's)", got)
		}
		hold.Store(false)
		letGo()
		// The backstop goes on with the sweep: a job queued without waking
		// this worker (stored and queued as another process does, without
		// writing the wake file) is found by the look after a sweep. (On
		// PostgreSQL River's insert notification wakes it.)
		fj := newFakeJudge(t, simjudge.Options{Seed: 9}, nil)
		before = looks.Load()
		run := env.newRun(fj.URL(), 1, 3, 30)
		if err := env.jobs.PrepareRun(&run); err != nil {
			t.Fatal(err)
		}
		if err := env.db.CreateRun(context.Background(), &run, env.jobs.enqueue); err != nil {
			t.Fatal(err)
		}
		env.waitRun(run.ID, 30*time.Second, "picked up", func(r models.Run) bool { return r.Status != models.RunQueued })
		if env.db.Dialect == models.SQLite && looks.Load() == before {
			t.Error("the run was picked up with no look after the sweep went on")
		}
		// The run is not lost: this worker hands it back as it stops, and
		// one with the default lease finishes it. (Under the race detector
		// at load 20 this worker lost its 400 ms lease at almost every
		// renewal, and the run did not finish in a minute.)
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := r.Stop(stopCtx); err != nil {
			t.Fatalf("stop: %v", err)
		}
		env.startRunner(Config{})
		if got := env.waitFinished(run.ID, 60*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %s (error %q), want succeeded", got.Status, got.Error)
		}
	})
}
