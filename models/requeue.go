package models

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"

	"gorm.io/gorm"
)

// Requeue is what a resume (ReopenRun) or a continue (ContinueRun) may
// change on the run it queues again.
type Requeue struct {
	// SpendCapUSD, when set, is the run's new spending cap. It is saved in
	// the transaction that queues the run, so a refused resume or continue
	// (the workspace's run limit, a judge address that cannot be called, a
	// cap below what was spent) leaves the run's cap as it was.
	SpendCapUSD *float64
}

// EnqueueRun queues a run's job in tx and returns the job's id.
type EnqueueRun func(ctx context.Context, tx *sql.Tx, r *Run) (int64, error)

// checkNewSpendCap refuses a new spending cap for run that cannot be kept
// or would stop it at once: not a positive amount, on a judge whose prices
// are unknown (a launch refuses that too), or not above what the run has
// already spent, calls and probes.
func (r Run) checkNewSpendCap(capUSD float64) error {
	if !(capUSD > 0 && !math.IsInf(capUSD, 0)) {
		return Errorf(EInvalid, "the spending cap must be a positive amount of US dollars")
	}
	if !r.JudgeSnapshot.Simulated && r.JudgeSnapshot.Cost(0, 0) == nil {
		return Errorf(EInvalid, "the spending cap of run %d cannot be kept: its judge had no prices when it started, so its cost is unknown; leave the cap blank", r.ID)
	}
	var spent float64
	if r.CostUSD != nil {
		spent = *r.CostUSD
	}
	if p := r.ProbeCostUSD(); p != nil {
		spent += *p
	}
	if spent > 0 && capUSD <= spent {
		return Errorf(EInvalid, "a spending cap of $%s is not above the $%s run %d has already spent: give a higher cap (the run's cap is unchanged)",
			strconv.FormatFloat(capUSD, 'f', -1, 64), strconv.FormatFloat(math.Ceil(spent*1e6)/1e6, 'f', -1, 64), r.ID)
	}
	return nil
}

// queueRunJob is the tail a resume and a continue share, in the
// transaction that set the run queued again: it saves the run's new
// spending cap, if req gives one, then queues its job and records the
// job's id.
func queueRunJob(ctx context.Context, tx *gorm.DB, run *Run, req Requeue, enqueue EnqueueRun) error {
	if req.SpendCapUSD != nil {
		c := *req.SpendCapUSD
		run.Settings.SpendCapUSD = &c
		if err := tx.Model(&Run{}).Where("id = ?", run.ID).Update("settings", jsonValue(run.Settings)).Error; err != nil {
			return err
		}
	}
	stx, err := SQLTx(tx)
	if err != nil {
		return err
	}
	jobID, err := enqueue(ctx, stx, run)
	if err != nil {
		return fmt.Errorf("queue run %d: %w", run.ID, err)
	}
	return tx.Model(&Run{}).Where("id = ?", run.ID).Update("job_id", jobID).Error
}
