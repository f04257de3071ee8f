package runner

import (
	"fmt"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestLaunchFetchesAtOnce: on SQLite (no LISTEN/NOTIFY), a run launched
// through an awake worker is fetched at once, not at River's next poll.
// The poll is an hour, so only the launch can have woken the worker: the
// first run may be taken by the fetch River makes as it starts, the second
// comes after that fetch, with the worker idle and awake (it never parks),
// and before its poll. Resume and Continue wake it the same way (wakeUp).
func TestLaunchFetchesAtOnce(t *testing.T) {
	t.Parallel()
	env := newTestEnv(t, dbtest.Open(t, models.SQLite, migrateJobs))
	fj := newFakeJudge(t, simjudge.Options{Seed: 37}, nil)
	r := env.startRunner(Config{PollInterval: time.Hour})
	for i := range 2 {
		calls := fj.Total()
		spec := env.newRun(fj.URL(), 1, 3, 30)
		spec.Settings.Seed = int64(100 + i) // not answered from the cache
		run := env.launch(r, spec)
		// 30 s: a bound for a loaded machine, far below the hour's poll.
		got := env.waitFinished(run.ID, 30*time.Second)
		if got.Status != models.RunSucceeded {
			t.Fatalf("run %d: %s (error %q), want succeeded", i+1, got.Status, got.Error)
		}
		if fj.Total() == calls {
			t.Fatalf("run %d finished without a judge call", i+1)
		}
	}
}

// TestFetchNowOnlyWhereRiverCannot: the wake is installed for a SQLite
// worker only. An insert-only runner (a `serve` leaving the work to
// `worker` processes) has no producer to wake: the workers find its runs
// at their next poll. On PostgreSQL River's insert notification wakes
// every worker, this process's included.
func TestFetchNowOnlyWhereRiverCannot(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dialect models.Dialect
		work    bool
		want    bool
	}{
		{models.SQLite, true, true},
		{models.SQLite, false, false},
		{models.Postgres, true, false},
		{models.Postgres, false, false},
	} {
		t.Run(fmt.Sprintf("%s/work=%v", tc.dialect, tc.work), func(t *testing.T) {
			db := dbtest.Open(t, tc.dialect, migrateJobs)
			r, err := New(Config{DB: db, Log: testLog(), Work: tc.work})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.fetch.wake != nil; got != tc.want {
				t.Fatalf("work=%v: wake installed %v, want %v", tc.work, got, tc.want)
			}
		})
	}
}
