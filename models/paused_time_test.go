package models_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestElapsedLeavesOutPausedTime: a run's elapsed time counts only the time
// it was going. Paused for 14 hours after 10 minutes of work, it reads 10
// minutes (with 14 hours paused said apart), while paused and after
// Continue; the time it stood finished before a resume is left out too.
// Elapsed used to run on from the start through every pause.
func TestElapsedLeavesOutPausedTime(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		clock := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
		db.Clock = func() time.Time { return clock }
		enqueue := func(context.Context, *sql.Tx, *models.Run) (int64, error) { return 1, nil }
		r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: w.dataset.ID, Name: "overnight", Method: models.MethodBatchEval, CreatedAt: clock}
		if err := db.CreateRun(ctx, &r, nil); err != nil {
			t.Fatal(err)
		}
		if err := db.Gorm.Exec(`UPDATE runs SET status = ?, started_at = ?, batches_total = 10, batches_done = 5 WHERE id = ?`, models.RunRunning, clock, r.ID).Error; err != nil {
			t.Fatal(err)
		}
		check := func(step string, now time.Time, wantElapsed, wantPaused time.Duration) {
			t.Helper()
			run, err := db.GetRun(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := run.Elapsed(now)
			// The databases keep microseconds; a second either way is no matter.
			if !ok || (got-wantElapsed).Abs() > time.Second || (run.PausedFor(now)-wantPaused).Abs() > time.Second {
				t.Errorf("%s: elapsed %s (%v), paused %s; want %s and %s", step, got, ok, run.PausedFor(now), wantElapsed, wantPaused)
			}
		}
		clock = clock.Add(10 * time.Minute)
		if _, err := db.RequestPause(ctx, w.ws.ID, r.ID); err != nil {
			t.Fatal(err)
		}
		check("just paused", clock, 10*time.Minute, 0)
		clock = clock.Add(14 * time.Hour)
		check("paused overnight", clock, 10*time.Minute, 14*time.Hour)
		if _, err := db.ContinueRun(ctx, w.ws.ID, r.ID, models.Requeue{}, enqueue); err != nil {
			t.Fatal(err)
		}
		check("continued", clock, 10*time.Minute, 14*time.Hour)
		clock = clock.Add(5 * time.Minute)
		check("going again", clock, 15*time.Minute, 14*time.Hour)

		// It ends with gaps, stands finished for a day, and is resumed.
		if err := db.Gorm.Exec(`UPDATE runs SET status = ?, batches_failed = 1, finished_at = ? WHERE id = ?`, models.RunFinishedWithGaps, clock, r.ID).Error; err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(24 * time.Hour)
		check("finished", clock, 15*time.Minute, 14*time.Hour)
		if _, err := db.ReopenRun(ctx, w.ws.ID, r.ID, models.Requeue{}, enqueue); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Minute)
		check("resumed", clock, 16*time.Minute, 38*time.Hour)

		// Paused, then cancelled a while later: the clock stopped at the pause.
		if _, err := db.RequestPause(ctx, w.ws.ID, r.ID); err != nil {
			t.Fatal(err)
		}
		if err := db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = ? WHERE id = ?`, models.RunCancelled, clock.Add(time.Hour), r.ID).Error; err != nil {
			t.Fatal(err)
		}
		check("cancelled while paused", clock.Add(5*time.Hour), 16*time.Minute, 39*time.Hour)
	})
}
