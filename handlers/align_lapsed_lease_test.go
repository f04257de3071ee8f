package handlers

import (
	"context"
	"errors"
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
