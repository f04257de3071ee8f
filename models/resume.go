package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// ReopenRun prepares a finished run with gaps to be resumed: its failed
// batches become pending again (their empty scores are removed and the
// run's counters corrected), the run is queued again with the new spending
// cap req gives, if any, and enqueue queues its job in the same
// transaction: a refused resume changes nothing, its cap included. Answers
// already stored, and what they cost, are kept: a resume sends only what
// has no answer.
func (db *DB) ReopenRun(ctx context.Context, wsID, runID int64, req Requeue, enqueue EnqueueRun) (Run, error) {
	run, err := db.FindRun(ctx, wsID, runID)
	if err != nil {
		return run, err
	}
	if !run.Resumable() {
		if run.Paused() {
			return run, Errorf(EConflict, "run %d is paused: continue it to go on where it stopped", runID)
		}
		if !run.Finished() {
			return run, Errorf(EConflict, "run %d is still %s: it resumes by itself", runID, run.Status)
		}
		if (run.Status == RunFailed || run.Status == RunFinishedWithGaps) && run.EveryBatchAnswered() {
			return run, Errorf(EConflict, "run %d has nothing to resume: every call has its answer, and its %d missing scores could not be read from those answers, which a resume does not ask for again; to ask the judge again, re-run it with another seed", runID, run.MissingScores)
		}
		if run.Status == RunCancelled {
			// Cancelling is final (the trash cancels the runs it takes, and
			// a run cancelled on purpose must not start paying again).
			return run, Errorf(EConflict, "run %d was cancelled with %d of %d batches answered, and a cancelled run is not resumed; to judge the rest, %s", runID, run.BatchesDone, run.BatchesTotal, cancelledAgain(run))
		}
		return run, Errorf(EConflict, "run %d has %s with no gaps: there is nothing to resume", runID, run.Status)
	}
	if problem := run.JudgeAddressProblem(); problem != "" {
		// The run page offers no resume then; a form from an older page,
		// the command line or a script is told the same.
		return run, Errorf(EConflict, "%s", run.judgeAddressRefusal(problem))
	}
	if req.SpendCapUSD != nil {
		if err := run.checkNewSpendCap(*req.SpendCapUSD); err != nil {
			return run, err
		}
	}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// A finished run holds no place under the workspace's run limit,
		// so queuing it again takes one, as a launch does: resuming failed
		// runs passed it.
		if err := takeRunPlace(tx, db.Dialect, wsID, db.MaxActiveRunsPerWorkspace,
			fmt.Sprintf("run %d keeps its gaps; wait for a run to finish or cancel one, then resume it", runID)); err != nil {
			return err
		}
		var failed []int64
		if err := tx.Model(&RunBatch{}).Where("run_id = ? AND status = ?", runID, BatchFailed).Pluck("id", &failed).Error; err != nil {
			return err
		}
		var missing int64
		if len(failed) > 0 {
			if err := tx.Model(&RunScore{}).Where("batch_id IN ? AND score IS NULL", failed).Count(&missing).Error; err != nil {
				return err
			}
			if err := tx.Where("batch_id IN ?", failed).Delete(&RunScore{}).Error; err != nil {
				return err
			}
			if err := tx.Model(&RunBatch{}).Where("id IN ?", failed).Updates(map[string]any{
				"status": BatchPending, "response": "", "repair_request": "", "repair_response": "",
				"problems": jsonValue([]string{}), "error": "", "error_kind": "", "done_at": nil, "details": jsonValue(map[string]any{}),
			}).Error; err != nil {
				return err
			}
		}
		res := tx.Model(&Run{}).Where("id = ? AND status = ?", runID, run.Status).Updates(map[string]any{
			"status": RunQueued, "error": "", "finished_at": nil, "lease_owner": "", "lease_until": nil,
			"waiting_since": nil, "waiting_error": "", "cancel_requested": false,
			"batches_done":   gorm.Expr("batches_done - ?", len(failed)),
			"batches_failed": gorm.Expr("batches_failed - ?", len(failed)),
			"missing_scores": gorm.Expr("missing_scores - ?", missing),
			"resumes":        gorm.Expr("resumes + 1"),
			// The time it stood finished is no part of its elapsed time.
			"stopped_ms": gorm.Expr("stopped_ms + ?", run.stoppedSince(run.FinishedAt, db.Now())),
		})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return Errorf(EConflict, "run %d changed while it was being resumed; try again", runID)
		}
		return queueRunJob(ctx, tx, &run, req, enqueue)
	})
	if err != nil {
		return run, err
	}
	return db.FindRun(ctx, wsID, runID)
}

// SetRunWaiting records that the run waits for its judge (since, with the
// error that made it wait), or, with a nil since, that it goes on. Only the
// lease holder named in ctx may change it.
func (db *DB) SetRunWaiting(ctx context.Context, runID int64, since *time.Time, lastErr string) error {
	upd := map[string]any{"waiting_since": nil}
	if since != nil {
		upd = map[string]any{"waiting_since": since.UTC(), "waiting_error": lastErr}
	}
	return db.retry(ctx, "record judge wait", func() error {
		return fenced(ctx, db.Gorm.WithContext(ctx).Model(&Run{}).Where("id = ?", runID)).Updates(upd).Error
	})
}

// AddRunProbe counts one probe of the breaker (a tiny request sent while
// the run waits for its judge to answer again) on the run, with the
// tokens the endpoint reported for it, at once. It is not fenced: the
// probe was sent, and paid for if answered, whoever holds the run now.
// The run's calls, tokens and cost, the batches' figures, are unchanged.
// Counted on a run that has ended (a probe out at a cancel), the run's
// events say so (RunEventLateCount).
func (db *DB) AddRunProbe(ctx context.Context, runID int64, promptTokens, completionTokens int) error {
	q := hotSQL.get(db.Dialect, "probe", 0, func() string {
		return `UPDATE runs SET probe_calls = probe_calls + 1, probe_prompt_tokens = probe_prompt_tokens + ?,
 probe_completion_tokens = probe_completion_tokens + ? WHERE id = ?` + lateReturning
	})
	return db.countOnRun(ctx, "count a probe", runID, q, []any{promptTokens, completionTokens, runID},
		lateCount{what: lateProbe, add: UnitSpend{Calls: 1, PromptTokens: promptTokens, CompletionTokens: completionTokens}})
}

// AddRunRetries counts n failed judge attempts on the run, at once: a
// count kept in memory until the unit's answer is stored was lost with
// every attempt of a unit that never was (a run paused by a rate limit
// again and again, a crash). Not fenced: the attempts were made whoever
// holds the run now. Counted on a run that has ended (an attempt out at a
// cancel), the run's events say so (RunEventLateCount); the count reads
// the run's status back, so a run still going pays no statement more.
func (db *DB) AddRunRetries(ctx context.Context, runID int64, n int) error {
	q := hotSQL.get(db.Dialect, "retries", 0, func() string {
		return `UPDATE runs SET retries = retries + ? WHERE id = ?` + lateReturning
	})
	return db.countOnRun(ctx, "count retries", runID, q, []any{n, runID}, lateCount{what: lateRetry, add: UnitSpend{Calls: n}})
}

// CountRunsByStatus counts every run by status, "waiting for judge" apart
// from running (metrics).
func (db *DB) CountRunsByStatus(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		Status  string
		Waiting bool
		N       int64
	}
	err := db.Gorm.WithContext(ctx).Model(&Run{}).
		Select("status, waiting_since IS NOT NULL AS waiting, COUNT(*) AS n").
		Group("status, waiting_since IS NOT NULL").Scan(&rows).Error
	out := map[string]int64{}
	for _, r := range rows {
		s := r.Status
		if r.Waiting && s == RunRunning {
			s = StatusWaitingForJudge
		}
		out[s] += r.N
	}
	return out, err
}

// StatusWaitingForJudge is the status shown for a running run whose judge
// is not answering (see Run.WaitingForJudge).
const StatusWaitingForJudge = "waiting for judge"

// CountJobsByState counts the run jobs in River's table by state (queue
// depth for metrics).
func (db *DB) CountJobsByState(ctx context.Context, kind string) (map[string]int64, error) {
	var rows []struct {
		State string
		N     int64
	}
	err := db.Gorm.WithContext(ctx).Table("river_job").Select("state, COUNT(*) AS n").
		Where("kind = ?", kind).Group("state").Scan(&rows).Error
	out := map[string]int64{}
	for _, r := range rows {
		out[r.State] = r.N
	}
	return out, err
}

// judgeAddressRefusal says why a run whose judge address cannot be called
// is not resumed, as its page does: the judge to correct (by name and
// page) and that a new run is the way on, since a run keeps the address
// it started with.
func (r Run) judgeAddressRefusal(problem string) string {
	judge := "the judge's page (/judges)"
	if r.JudgeID != nil {
		judge = fmt.Sprintf("the page of judge %q (/judges/%d)", r.JudgeSnapshot.Name, *r.JudgeID)
	}
	return fmt.Sprintf("Fix the judge's base URL first. No call of run %d could be sent: the judge's address was saved before addresses had to start with http:// or https://, and %s. "+
		"A run keeps the address it started with, so resuming it can only fail the same way. Correct the base URL on %s (Test connection checks it), then launch a new run.",
		r.ID, problem, judge)
}
