package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestWorkerProcessWakesOnSQLite: worker processes on a SQLite file (as
// `batcheval worker` beside a `serve --no-worker`) start runs queued by
// another process (this one, through an insert-only runner with its own
// pools) at once, woken through the wake file, not at their next poll for
// jobs, an hour here. Each round's runs are queued once the last round's
// have ended, with every worker idle and its first fetch long made, so
// only a wake can start them; with two workers both wake, and River's
// locked fetch gives each run to one of them. Before, the second round
// stayed queued.
func TestWorkerProcessWakesOnSQLite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		workers, maxRuns int
		// perRound runs are queued back to back each round.
		perRound int
	}{
		{"one worker, one run at a time", 1, 1, 1},
		{"two workers, runs queued together", 2, 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newWorkersLabOn(t, models.SQLite)
			cj := newCountingJudge(t, 0)
			startWorkerProcs(t, l.dsn, tc.workers, tc.maxRuns, workerPollEnv+"=1h")
			var all []int64
			for round := range 3 {
				ids := l.launchRuns(t, tc.perRound, cj.URL(), 0, 1, 4)
				// 30 s: a bound for a loaded machine, far below the poll.
				l.waitAll(t, ids, 30*time.Second)
				all = append(all, ids...)
				t.Logf("round %d: %d runs ended", round+1, len(ids))
			}
			if want := int64(len(all) * 4); cj.calls.Load() != want {
				t.Errorf("the judge saw %d calls, want %d (4 batches a run, each sent once)", cj.calls.Load(), want)
			}
		})
	}
}

// TestWakeFileWakesParkedWorker: a parked worker (River's client stopped;
// on SQLite it looks for due jobs every PollInterval, an hour here) starts
// a run queued through another connection pool on the file at once: the
// wake file's change wakes it as a launch through it would.
func TestWakeFileWakesParkedWorker(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, dbtest.Open(t, models.SQLite, migrateJobs))
	fj := newFakeJudge(t, simjudge.Options{Seed: 38}, nil)
	r := env.startRunner(Config{IdleAfter: idleAfter, PollInterval: time.Hour})
	other := insertOnlyRunner(t, otherHandle(t, env.db), testLog())
	for i := range 2 {
		waitParked(t, r, true, 10*time.Second)
		spec := env.newRun(fj.URL(), 1, 3, 30)
		spec.Settings.Seed = int64(200 + i) // not answered from the cache
		run := env.launch(other, spec)
		if got := env.waitFinished(run.ID, 30*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %d: %s (error %q), want succeeded", i+1, got.Status, got.Error)
		}
	}
}

// TestWakeFileRemoved: a wake file removed while a worker watches it is
// made again and watched again: runs queued afterwards by another pool
// still wake the awake worker (its poll is an hour). A watch left on the
// removed file would hear nothing of the new one the launch writes.
func TestWakeFileRemoved(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, dbtest.Open(t, models.SQLite, migrateJobs))
	fj := newFakeJudge(t, simjudge.Options{Seed: 38}, nil)
	r := env.startRunner(Config{PollInterval: time.Hour})
	other := insertOnlyRunner(t, otherHandle(t, env.db), testLog())
	for i := range 2 {
		if err := os.Remove(r.wake.path); err != nil {
			t.Fatalf("remove the wake file: %v", err)
		}
		// Past the removal's own wake: only the launch's can start the run.
		time.Sleep(300 * time.Millisecond)
		spec := env.newRun(fj.URL(), 1, 3, 30)
		spec.Settings.Seed = int64(300 + i)
		run := env.launch(other, spec)
		if got := env.waitFinished(run.ID, 30*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %d: %s (error %q), want succeeded", i+1, got.Status, got.Error)
		}
	}
}

// TestWakeFileUnusable: where the wake file cannot be made (here a folder
// stands in its place; a read-only folder does the same to a process
// without root), the worker says once that it keeps to its poll and the
// launching process says once that it cannot wake the others; launches
// still succeed and the worker's poll (50 ms here) still finds the runs.
func TestWakeFileUnusable(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, dbtest.Open(t, models.SQLite, migrateJobs))
	file, err := mainDatabaseFile(context.Background(), env.db.SQL)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(file+wakePathSuffix, 0o700); err != nil {
		t.Fatal(err)
	}
	fj := newFakeJudge(t, simjudge.Options{Seed: 38}, nil)
	var workerLog, launchLog logLines
	env.startRunner(Config{PollInterval: 50 * time.Millisecond, Log: slog.New(&workerLog)})
	other := insertOnlyRunner(t, otherHandle(t, env.db), slog.New(&launchLog))
	for i := range 2 {
		spec := env.newRun(fj.URL(), 1, 3, 30)
		spec.Settings.Seed = int64(400 + i)
		run := env.launch(other, spec)
		if got := env.waitFinished(run.ID, 30*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %d: %s (error %q), want succeeded", i+1, got.Status, got.Error)
		}
	}
	for _, tc := range []struct {
		who    string
		log    *logLines
		prefix string
	}{
		{"worker", &workerLog, "wake file: cannot watch it"},
		{"launching process", &launchLog, "wake file: cannot write it"},
	} {
		if n := tc.log.count(tc.prefix); n != 1 {
			t.Errorf("the %s logged %q %d times, want once; its lines: %q", tc.who, tc.prefix, n, tc.log.all())
		}
	}
}

// TestWakeFileOnlyBesideASQLiteFile: the wake file is named after the
// file SQLite opened, "<file>-wake", and made with the database file's mode
// (0600 as the product creates it: the folder's other users may not touch
// it either); there is none for PostgreSQL or a database in memory.
func TestWakeFileOnlyBesideASQLiteFile(t *testing.T) {
	t.Parallel()
	memory, err := models.Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { memory.Close() })
	for _, tc := range []struct {
		name     string
		db       func(t *testing.T) *models.DB
		want     func(t *testing.T, db *models.DB) string
		wantMode fs.FileMode
	}{
		{"sqlite file", func(t *testing.T) *models.DB { return dbtest.Open(t, models.SQLite) }, func(t *testing.T, db *models.DB) string {
			file, err := mainDatabaseFile(context.Background(), db.SQL)
			if err != nil || file == "" {
				t.Fatalf("the database's file: %q, %v", file, err)
			}
			return file + "-wake"
		}, 0o600},
		{"sqlite in memory", func(*testing.T) *models.DB { return memory }, func(*testing.T, *models.DB) string { return "" }, 0},
		{"postgres", func(t *testing.T) *models.DB { return dbtest.Open(t, models.Postgres) }, func(*testing.T, *models.DB) string { return "" }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.db(t)
			path, mode, err := wakeFileOf(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.want(t, db); path != want || mode != tc.wantMode {
				t.Fatalf("wake file %q, mode %v; want %q, %v", path, mode, want, tc.wantMode)
			}
		})
	}
}

// insertOnlyRunner is a runner that queues runs and works none, as a
// `serve --no-worker` or `resume --queue-only` is.
func insertOnlyRunner(t *testing.T, db *models.DB, log *slog.Logger) *Runner {
	t.Helper()
	r, err := New(Config{DB: db, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// logLines keeps the messages logged through it.
type logLines struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }

func (l *logLines) Handle(_ context.Context, rec slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, fmt.Sprintf("%s %s", rec.Level, rec.Message))
	return nil
}

func (l *logLines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logLines) WithGroup(string) slog.Handler      { return l }

// count is how many messages start with prefix.
func (l *logLines) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if _, msg, _ := strings.Cut(m, " "); strings.HasPrefix(msg, prefix) {
			n++
		}
	}
	return n
}

func (l *logLines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// TestHandOverWakesSharedWorkers: a run handed over to the shared queue by
// a command-line run's private runner (`batcheval run` interrupted) starts
// at once in a worker of the shared queue with its own pools, as another
// process's would: on SQLite woken through the wake file (its poll is an
// hour), on PostgreSQL by River's insert notification. Before, on SQLite,
// it waited for that poll.
func TestHandOverWakesSharedWorkers(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{Seed: 38}, nil)
		env.startRunner(Config{DB: otherHandle(t, env.db), PollInterval: time.Hour})
		// Past the worker's first fetch, made as it starts: from now on
		// only a wake or its next poll brings it a job.
		time.Sleep(500 * time.Millisecond)
		// The command line's runner, stopped before it worked its run.
		private, err := New(Config{DB: env.db, Log: testLog(), Queue: "cli_handover"})
		if err != nil {
			t.Fatal(err)
		}
		run := env.launch(private, env.newRun(fj.URL(), 1, 3, 30))
		if err := private.HandOver(context.Background(), env.ws.ID, run.ID); err != nil {
			t.Fatal(err)
		}
		if got := env.waitFinished(run.ID, 30*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %s (error %q), want succeeded", got.Status, got.Error)
		}
	})
}

// TestWakeFileWatchErrors: events lost to an overflowing queue wake the
// worker (one may have been a wake) and the watch goes on; any other error
// of the watch wakes it once and leaves it to its poll, with a log line,
// rather than looping on an error that may come back at once.
func TestWakeFileWatchErrors(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, models.SQLite, migrateJobs)
	for _, tc := range []struct {
		name      string
		err       error
		goesOn    bool
		logPrefix string
	}{
		{"overflow", fsnotify.ErrEventOverflow, true, ""},
		{"read error", errors.New("read: input/output error"), false, "wake file: cannot watch it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log logLines
			r, err := New(Config{DB: db, Log: slog.New(&log), Work: true})
			if err != nil {
				t.Fatal(err)
			}
			// A watcher of the test's own, not the process's.
			ww := &wakeWatch{}
			w, err := fsnotify.NewWatcher()
			if err != nil {
				t.Fatal(err)
			}
			ww.start(w)
			done := ww.done
			if err := ww.add(r); err != nil {
				t.Fatal(err)
			}
			defer ww.remove(r)
			w.Errors <- tc.err
			select {
			case <-r.park.wake:
			case <-time.After(10 * time.Second):
				t.Fatal("the error did not wake the worker")
			}
			select {
			case <-done:
				if tc.goesOn {
					t.Fatal("the watch ended")
				}
			case <-time.After(200 * time.Millisecond):
				if !tc.goesOn {
					t.Fatal("the watch went on")
				}
			}
			if tc.logPrefix != "" && log.count(tc.logPrefix) != 1 {
				t.Errorf("logged %q %d times, want once; lines %q", tc.logPrefix, log.count(tc.logPrefix), log.all())
			}
			// Left to its poll, the worker polls every second, parked too.
			if r.wake.watched.Load() != tc.goesOn {
				t.Errorf("watched = %v after the error, want %v", r.wake.watched.Load(), tc.goesOn)
			}
		})
	}
}

// TestQueuedWakesWorkers: a run stored and queued in a transaction of the
// caller's (Enqueue, as the demo's first run at `serve`'s start) starts at
// once in a worker of another pool on the file (its poll is an hour) once
// Queued is called after the commit.
func TestQueuedWakesWorkers(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, dbtest.Open(t, models.SQLite, migrateJobs))
	fj := newFakeJudge(t, simjudge.Options{Seed: 38}, nil)
	env.startRunner(Config{DB: otherHandle(t, env.db), PollInterval: time.Hour})
	time.Sleep(500 * time.Millisecond) // past the worker's first fetch
	run := env.newRun(fj.URL(), 1, 3, 30)
	if err := env.jobs.PrepareRun(&run); err != nil {
		t.Fatal(err)
	}
	if err := env.db.CreateRun(context.Background(), &run, env.jobs.Enqueue); err != nil {
		t.Fatal(err)
	}
	env.jobs.Queued()
	if got := env.waitFinished(run.ID, 30*time.Second); got.Status != models.RunSucceeded {
		t.Fatalf("run %s (error %q), want succeeded", got.Status, got.Error)
	}
}

// TestOneInotifyInstancePerProcess: a user may open 128 inotify instances
// (fs.inotify.max_user_instances), across all of its processes, and a
// worker that finds none left keeps to its 1 s poll; so the workers of one
// process share one, whatever files they are on, and it is closed after
// the last. Before, each worker opened its own. Three workers here: two on
// one file (through their own pools), one on another; each is woken
// through the shared watch. (Not parallel: it counts this process's
// instances, and parallel tests start after it.)
func TestOneInotifyInstancePerProcess(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count inotify instances in:", err)
	}
	before := inotifyInstances(t)
	envA := newTestEnv(t, dbtest.Open(t, models.SQLite, migrateJobs))
	envB := newTestEnv(t, dbtest.Open(t, models.SQLite, migrateJobs))
	fj := newFakeJudge(t, simjudge.Options{Seed: 39}, nil)
	var workers []*Runner
	for _, c := range []struct {
		env *testEnv
		db  *models.DB
	}{{envA, envA.db}, {envA, otherHandle(t, envA.db)}, {envB, envB.db}} {
		r, err := New(Config{DB: c.db, Log: testLog(), Work: true, PollInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		workers = append(workers, r)
		stop := func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = r.Stop(ctx)
		}
		t.Cleanup(stop)
		if !r.wake.watched.Load() {
			t.Fatalf("worker %d does not watch its wake file", len(workers))
		}
	}
	if n := inotifyInstances(t); n != before+1 {
		t.Errorf("%d inotify instances open with %d workers, %d before: want one more, shared", n, len(workers), before)
	}
	time.Sleep(300 * time.Millisecond) // past the workers' first fetch
	for i, env := range []*testEnv{envA, envB} {
		other := insertOnlyRunner(t, otherHandle(t, env.db), testLog())
		spec := env.newRun(fj.URL(), 1, 3, 30)
		spec.Settings.Seed = int64(500 + i)
		run := env.launch(other, spec)
		if got := env.waitFinished(run.ID, 30*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run on file %d: %s (error %q), want succeeded", i+1, got.Status, got.Error)
		}
	}
	for _, r := range workers {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := r.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		cancel()
	}
	if n := inotifyInstances(t); n != before {
		t.Errorf("%d inotify instances open after the workers stopped, want %d as before", n, before)
	}
}

// inotifyInstances counts this process's open inotify instances.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if dest, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && dest == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// TestWatchFailureSaysWhichLimit: a worker that cannot watch its wake file
// because of one of inotify's per-user limits says which, and how to raise
// it; other failures say only that it polls.
func TestWatchFailureSaysWhichLimit(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, models.SQLite, migrateJobs)
	for _, tc := range []struct {
		name string
		err  error
		want []string
	}{
		// As fsnotify.NewWatcher and Watcher.Add return them.
		{"no instances left", fmt.Errorf("couldn't initialize inotify: %w", syscall.EMFILE),
			[]string{"inotify instances are all in use", "sysctl -w fs.inotify.max_user_instances=", "/etc/sysctl.d/"}},
		{"no watches left", syscall.ENOSPC, []string{"inotify watches are all in use", "sysctl -w fs.inotify.max_user_watches="}},
		{"other", syscall.EACCES, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log logLines
			r, err := New(Config{DB: db, Log: slog.New(&log), Work: true})
			if err != nil {
				t.Fatal(err)
			}
			r.pollInstead(tc.err)
			lines := log.all()
			if len(lines) != 1 || !strings.Contains(lines[0], "wake file: cannot watch it") || !strings.Contains(lines[0], "next poll") {
				t.Fatalf("logged %q, want one line saying the worker polls", lines)
			}
			for _, w := range tc.want {
				if !strings.Contains(lines[0], w) {
					t.Errorf("the line %q does not say %q", lines[0], w)
				}
			}
			if tc.want == nil && strings.Contains(lines[0], "sysctl") {
				t.Errorf("the line %q names a limit for %v", lines[0], tc.err)
			}
		})
	}
}

// TestParkedPollIsABackstopWhenWoken: a parked worker looks for due jobs
// every PollInterval (1 s by default) only where nothing else wakes it for
// another process's run: on SQLite without its wake file watched. Watched
// (or on PostgreSQL, where River's insert notification wakes it), it looks
// as often as its idle lease sweep, 5 s by default. Before, a parked
// SQLite worker looked every second with its wake file watched.
func TestParkedPollIsABackstopWhenWoken(t *testing.T) {
	t.Parallel()
	unusable := func(t *testing.T, db *models.DB) {
		file, err := mainDatabaseFile(context.Background(), db.SQL)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(file+wakePathSuffix, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		dialect models.Dialect
		prepare func(*testing.T, *models.DB)
		want    time.Duration
	}{
		{"sqlite, wake file watched", models.SQLite, nil, 5 * time.Second},
		{"sqlite, wake file unusable", models.SQLite, unusable, time.Second},
		{"postgres", models.Postgres, nil, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := dbtest.Open(t, tc.dialect, migrateJobs)
			if tc.prepare != nil {
				tc.prepare(t, db)
			}
			env := newTestEnv(t, db)
			// The production poll and lease.
			r := env.startRunner(Config{PollInterval: time.Second, LeaseTTL: DefaultLeaseTTL, Log: slog.New(&logLines{})})
			if got := r.parkedPoll(); got != tc.want {
				t.Errorf("a parked worker looks every %s, want %s", got, tc.want)
			}
		})
	}
}
