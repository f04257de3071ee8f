package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// RequestPause pauses a queued or running run (one waiting for its judge
// included): the engine starts no new call from its next check on, the
// answers already on their way are stored and counted as they arrive, and
// the run stops holding a worker. Its lease is left to the execution that
// holds it, which gives it up once those answers are stored (a crashed
// one's lapses), so that ContinueRun's execution cannot send them again.
// The caller cancels the run's job.
func (db *DB) RequestPause(ctx context.Context, wsID, id int64) (Run, error) {
	r, err := db.FindRun(ctx, wsID, id)
	if err != nil {
		return r, err
	}
	switch {
	case r.Paused():
		return r, Errorf(EConflict, "run %d is already paused: continue it to go on", id)
	case !r.Pausable():
		return r, Errorf(EConflict, "run %d %s: only a queued or running run can be paused", id, hasEnded(r.Status))
	}
	res := db.Gorm.WithContext(ctx).Model(&Run{}).Where("id = ? AND status IN ?", id, []string{RunQueued, RunRunning}).
		Updates(map[string]any{"status": RunPaused, "waiting_since": nil, "waiting_error": "", "paused_at": db.Now()})
	if res.Error != nil {
		return r, fmt.Errorf("pause run %d: %w", id, res.Error)
	}
	if res.RowsAffected != 1 {
		return r, Errorf(EConflict, "run %d changed while it was being paused; look at it again", id)
	}
	return db.FindRun(ctx, wsID, id)
}

// ContinueRun queues a paused run again, with the new spending cap req
// gives, if any; enqueue queues its job in the same transaction. The run goes on where it stopped: the batches with a
// stored answer are kept and never sent again, the ones without are sent
// (and the rounds not reached yet), composed exactly as an uninterrupted
// run composes them. A cancelled run is not continued: cancelling is final.
func (db *DB) ContinueRun(ctx context.Context, wsID, runID int64, req Requeue, enqueue EnqueueRun) (Run, error) {
	run, err := db.FindRun(ctx, wsID, runID)
	if err != nil {
		return run, err
	}
	if !run.Paused() {
		switch {
		case run.Status == RunCancelled:
			return run, Errorf(EConflict, "run %d was cancelled with %d of %d batches answered, and cancelling is final: a cancelled run is not continued (Pause keeps a run to continue later); to judge the rest, %s",
				runID, run.BatchesDone, run.BatchesTotal, cancelledAgain(run))
		case run.Pausable():
			return run, Errorf(EConflict, "run %d is %s, not paused: there is nothing to continue", runID, RunStatusLabel(run.Status))
		case run.Resumable():
			return run, Errorf(EConflict, "run %d has %s, not paused: resume it to send the batches without an answer", runID, RunStatusLabel(run.Status))
		}
		return run, Errorf(EConflict, "run %d has %s: only a paused run can be continued", runID, RunStatusLabel(run.Status))
	}
	if req.SpendCapUSD != nil {
		if err := run.checkNewSpendCap(*req.SpendCapUSD); err != nil {
			return run, err
		}
	}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// A paused run holds no place under the workspace's run limit, so
		// queuing it again takes one, as a launch does: pausing runs,
		// launching others and continuing the paused ones passed it.
		if err := takeRunPlace(tx, db.Dialect, wsID, db.MaxActiveRunsPerWorkspace,
			fmt.Sprintf("run %d stays paused; wait for a run to finish or cancel one, then continue it", runID)); err != nil {
			return err
		}
		// The lease is kept: the execution that paused may still be
		// storing answers that were on their way, and a new one claims
		// the run only once it has let go (or its lease has lapsed).
		res := tx.Model(&Run{}).Where("id = ? AND status = ?", runID, RunPaused).
			Updates(map[string]any{"status": RunQueued, "error": "", "waiting_since": nil, "waiting_error": "",
				"paused_at": nil, "stopped_ms": gorm.Expr("stopped_ms + ?", run.stoppedSince(run.PausedAt, db.Now()))})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return Errorf(EConflict, "run %d changed while it was being continued; look at it again", runID)
		}
		return queueRunJob(ctx, tx, &run, req, enqueue)
	})
	if err != nil {
		return run, err
	}
	return db.FindRun(ctx, wsID, runID)
}

// cancelledAgain says how the rest of a cancelled run is judged: a new
// launch, which answers from the cache what was paid for when it may.
func cancelledAgain(run Run) string {
	if run.Settings.NoCache {
		return "launch it again (it did not reuse judge answers, so a new run pays for every batch; tick \"Reuse identical judge answers\" to pay only for new ones next time)"
	}
	return "launch it again with the same settings and seed: the batches it answered are then answered from the answer cache, at no cost"
}
