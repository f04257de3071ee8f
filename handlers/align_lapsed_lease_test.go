package handlers

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestHeldOutRunsRecordedOnceAfterALapsedLease: process A claims the
// launch of an alignment's held-out runs and stalls past its lease; B
// takes the launch over and launches; A resumes. A's launch copies and
// launches nothing and fails saying another took over, the alignment
// keeps B's runs, and no other run exists to be worked or paid for. The
// write itself checks the claim and the runs recorded: A's record made
// between B's takeover and B's launch is refused (claim lost) and stores
// no run, and B's second record is refused (launched meanwhile). Before,
// A launched two more runs and recorded them over B's
// (models.SetAlignmentRuns wrote whatever it was given).
func TestHeldOutRunsRecordedOnceAfterALapsedLease(t *testing.T) {
	parallelTest(t)
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.DSN(t, d)
			env := newTestEnv(t, openStore(t, dsn))
			src := alignDemoRun(t, env, "imported")
			a := startAlignment(t, env, src, 3)
			crit := src.RubricSnapshot.Criteria[0]
			count := func(table string) int64 {
				var n int64
				mustB(t, env.db.Gorm.Raw("SELECT COUNT(*) FROM "+table+" WHERE workspace_id = ?", env.ws.ID).Row().Scan(&n))
				return n
			}

			// A claims, then stalls past its lease (on SQLite its lock is
			// let go too: its own store, closed; A goes on through env's).
			stalled := openStore(t, dsn)
			mustB(t, stalled.ClaimHeldOutLaunch(ctx, a, "A", time.Minute))
			mustB(t, stalled.Close())
			mustB(t, env.db.Gorm.Exec("UPDATE heldout_launches SET lease_until = started_at WHERE alignment_id = ?", a.ID).Error)
			mustB(t, env.db.ClaimHeldOutLaunch(ctx, a, "B", time.Minute))

			// A, past its last check, records between B's takeover and
			// B's launch: refused, nothing stored.
			runs := count("runs")
			lateA := a
			r1 := models.Run{WorkspaceID: env.ws.ID, ProjectID: src.ProjectID, DatasetID: src.DatasetID, Name: "A before", Method: src.Method,
				Settings: src.Settings, RubricSnapshot: src.RubricSnapshot, JudgeSnapshot: src.JudgeSnapshot, JudgeID: src.JudgeID, Simulated: true}
			r2 := r1
			r2.Name = "A after"
			if err := env.db.LaunchHeldOutRuns(ctx, &lateA, "A", a, &r1, &r2, nil); !errors.Is(err, models.ErrHeldOutClaimLost) || models.ErrorCode(err) != models.EConflict {
				t.Errorf("A's record after B took over: %v, want %v (conflict)", err, models.ErrHeldOutClaimLost)
			}
			if n := count("runs"); n != runs || lateA.BeforeRunID != nil || r1.ID != 0 {
				t.Errorf("A's refused record stored runs: %d runs, was %d; alignment %v, run %d", n, runs, lateA.BeforeRunID, r1.ID)
			}

			// B launches and records.
			aB := a
			before, after, err := env.runner.LaunchHeldOut(ctx, env.ws.ID, &aB, crit, nil, "B")
			mustB(t, err)
			mustB(t, env.db.EndHeldOutLaunch(ctx, a.ID, "B", ""))
			runs, datasets := count("runs"), count("datasets")

			// A resumes: it launches nothing and records nothing.
			aA := a
			b2, a2, err := env.runner.LaunchHeldOut(ctx, env.ws.ID, &aA, crit, nil, "A")
			if !errors.Is(err, models.ErrHeldOutClaimLost) {
				t.Errorf("A's launch after B took over: %v, want %v", err, models.ErrHeldOutClaimLost)
			}
			if b2.ID != 0 || a2.ID != 0 || count("runs") != runs || count("datasets") != datasets {
				t.Errorf("A's launch made runs %d and %d (%d runs, was %d; %d datasets, was %d)", b2.ID, a2.ID, count("runs"), runs, count("datasets"), datasets)
			}
			// B recording again over its own runs: refused.
			again := aB
			r3, r4 := r1, r2
			if err := env.db.LaunchHeldOutRuns(ctx, &again, "B", a, &r3, &r4, nil); !errors.Is(err, models.ErrHeldOutLaunched) {
				t.Errorf("a second record of the runs: %v, want %v", err, models.ErrHeldOutLaunched)
			}
			got, err := env.db.FindAlignment(ctx, env.ws.ID, a.ID)
			mustB(t, err)
			if got.BeforeRunID == nil || got.AfterRunID == nil || *got.BeforeRunID != before.ID || *got.AfterRunID != after.ID ||
				got.HeldOutDatasetID == nil || *got.HeldOutDatasetID != before.DatasetID {
				t.Errorf("the alignment records %v, %v on dataset %v; want B's runs %d, %d on %d", got.BeforeRunID, got.AfterRunID, got.HeldOutDatasetID, before.ID, after.ID, before.DatasetID)
			}
			if count("runs") != runs {
				t.Errorf("%d runs, want %d", count("runs"), runs)
			}
			env.waitRun(before.ID, 60*time.Second)
			env.waitRun(after.ID, 60*time.Second)
		})
	}
}

// TestHeldOutLaunchThatLosesItsClaimLeavesNoCopy: two launches of one
// alignment's held-out runs at once. A claims and starts copying the
// held-out samples; while its copy waits for the database (another
// connection holds the write lock), B takes the claim over, as after a
// lapsed lease. A's launch fails saying another took over and leaves
// nothing behind: no dataset, experiment or run more than before. B's
// launch then makes exactly one copy and two runs. Before, A's copy was
// committed in a transaction of its own ahead of the check of its claim,
// and stayed behind unused (a dataset in the list that no run judged).
func TestHeldOutLaunchThatLosesItsClaimLeavesNoCopy(t *testing.T) {
	parallelTest(t)
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.DSN(t, d)
			env := newTestEnv(t, openStore(t, dsn))
			src := alignDemoRun(t, env, "imported")
			a := startAlignment(t, env, src, 3)
			crit := src.RubricSnapshot.Criteria[0]
			count := func(table string) int64 {
				var n int64
				mustB(t, env.db.Gorm.Raw("SELECT COUNT(*) FROM "+table+" WHERE workspace_id = ?", env.ws.ID).Row().Scan(&n))
				return n
			}
			datasets, experiments, runs := count("datasets"), count("experiments"), count("runs")

			mustB(t, env.db.ClaimHeldOutLaunch(ctx, a, "A", time.Minute))
			// Another process (a store of its own) takes the launch over
			// in a transaction that holds the database's write lock until
			// A is copying.
			other := openStore(t, dsn)
			tx := other.Gorm.Begin()
			mustB(t, tx.Error)
			mustB(t, tx.Exec("UPDATE heldout_launches SET owner = 'B' WHERE alignment_id = ?", a.ID).Error)
			// A's copy cannot write its dataset until this commits: on
			// SQLite this transaction holds the write lock already; on
			// PostgreSQL it locks the table against inserts (reads go on).
			if d == models.Postgres {
				mustB(t, tx.Exec("LOCK TABLE datasets IN SHARE MODE").Error)
			}
			type result struct {
				before, after models.Run
				err           error
			}
			done := make(chan result, 1)
			go func() {
				aA := a
				b, f, err := env.runner.LaunchHeldOut(ctx, env.ws.ID, &aA, crit, nil, "A")
				done <- result{b, f, err}
			}()
			// A has passed its first check of the claim once it is in the
			// copy (waiting there for the write lock).
			deadline := time.Now().Add(30 * time.Second)
			for !goroutineIn("models.(*DB).ImportDataset(", "models.(*DB).importDataset(") {
				if time.Now().After(deadline) {
					tx.Rollback()
					t.Fatal("A's launch never reached its copy")
				}
				time.Sleep(5 * time.Millisecond)
			}
			mustB(t, tx.Commit().Error)
			res := <-done
			if !errors.Is(res.err, models.ErrHeldOutClaimLost) || models.ErrorCode(res.err) != models.EConflict {
				t.Errorf("A's launch after B took over: %v, want %v (conflict)", res.err, models.ErrHeldOutClaimLost)
			}
			if res.before.ID != 0 || res.after.ID != 0 {
				t.Errorf("A's launch returned runs %d and %d", res.before.ID, res.after.ID)
			}
			if n, e, r := count("datasets"), count("experiments"), count("runs"); n != datasets || e != experiments || r != runs {
				t.Errorf("A's lost launch left %d datasets, %d experiments, %d runs more", n-datasets, e-experiments, r-runs)
			}
			got, err := env.db.FindAlignment(ctx, env.ws.ID, a.ID)
			mustB(t, err)
			if got.HeldOutDatasetID != nil || got.BeforeRunID != nil {
				t.Errorf("A's lost launch recorded dataset %v and run %v on the alignment", got.HeldOutDatasetID, got.BeforeRunID)
			}

			// B launches: one copy, two runs.
			aB := a
			before, after, err := env.runner.LaunchHeldOut(ctx, env.ws.ID, &aB, crit, nil, "B")
			mustB(t, err)
			mustB(t, env.db.EndHeldOutLaunch(ctx, a.ID, "B", ""))
			if n, e, r := count("datasets"), count("experiments"), count("runs"); n != datasets+1 || e != experiments+1 || r != runs+2 {
				t.Errorf("after B's launch: %d datasets, %d experiments, %d runs more; want 1, 1, 2", n-datasets, e-experiments, r-runs)
			}
			got, err = env.db.FindAlignment(ctx, env.ws.ID, a.ID)
			mustB(t, err)
			if got.HeldOutDatasetID == nil || *got.HeldOutDatasetID != before.DatasetID || after.DatasetID != before.DatasetID ||
				before.ExperimentID == nil || after.ExperimentID == nil || *before.ExperimentID != *after.ExperimentID {
				t.Errorf("B's runs %+v / %+v and the alignment's copy %v do not match", before, after, got.HeldOutDatasetID)
			}
			env.waitRun(before.ID, 60*time.Second)
			env.waitRun(after.ID, 60*time.Second)
		})
	}
}

// goroutineIn says whether a goroutine of this process is in one of the
// functions named (as a stack trace writes them).
func goroutineIn(funcs ...string) bool {
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for _, f := range funcs {
		if strings.Contains(stacks, f) {
			return true
		}
	}
	return false
}
