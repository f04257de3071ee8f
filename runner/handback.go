package runner

import (
	"context"
	"time"

	"github.com/riverqueue/river"
)

// handBack ends an execution whose job context was cancelled. When the
// process is shutting down (Stop ran out of patience and cancelled what was
// left), the job is snoozed, not failed: River counts no attempt, applies no
// backoff, and the next process resumes the run at once. Otherwise (a
// crash-like Kill, a job cancelled remotely) the cancellation is returned
// as before.
func (r *Runner) handBack(ctx context.Context, log interface{ Info(string, ...any) }) error {
	select {
	case <-r.draining:
		log.Info("run handed back for the next start (shutdown grace period over)")
		return river.JobSnooze(0)
	default:
		return ctx.Err()
	}
}

// dbPause is how long a run whose database writes keep failing waits
// before its job is tried again; its answers so far are stored.
const dbPause = 5 * time.Second

// pauseForDatabase ends an execution stopped by a transient database
// error that outlasted the retries: the run is not failed (nothing is wrong
// with it), its lease is released as far as the database allows, and the
// job is snoozed (no attempt counted) to resume shortly.
func (r *Runner) pauseForDatabase(ctx context.Context, runID int64, owner string, err error, log interface{ Warn(string, ...any) }) error {
	log.Warn("database unavailable: run paused; it resumes when the database answers", "err", err, "retry_in", dbPause)
	_ = r.db.ReleaseLease(context.WithoutCancel(ctx), runID, owner)
	return river.JobSnooze(dbPause)
}
