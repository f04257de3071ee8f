package models

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// activeRuns counts the workspace's runs that are queued or running.
func activeRuns(tx *gorm.DB, wsID int64) (int64, error) {
	var n int64
	err := tx.Model(&Run{}).Where("workspace_id = ? AND status IN ?", wsID, []string{RunQueued, RunRunning}).Count(&n).Error
	if err != nil {
		return 0, fmt.Errorf("count active runs: %w", err)
	}
	return n, nil
}

// runLimitError says the workspace has as many runs as it may have at once.
func runLimitError(active int64, adding, limit int) error {
	if adding > 1 {
		return Errorf(EConflict, "this workspace has %s queued or running and these %d would pass its limit of %d at once (BATCHEVAL_MAX_RUNS_PER_WORKSPACE): "+
			"wait for some to finish or cancel some, then launch again", runsText(active), adding, limit)
	}
	return atRunLimit(active, "wait for one to finish or cancel one, then launch again")
}

// atRunLimit says the workspace has as many runs as it may have at once,
// then what the refused caller should do.
func atRunLimit(active int64, then string) error {
	return Errorf(EConflict, "this workspace already has %s queued or running, the most it may have at once (BATCHEVAL_MAX_RUNS_PER_WORKSPACE): %s", runsText(active), then)
}

// runsText is "1 run", "0 runs", "3 runs".
func runsText(n int64) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

// takeRunPlace checks, in tx, that the workspace has a place under its run
// limit (0: none) for one more queued run: a launch, and a paused or
// finished run queued again (continue, resume), which held no place. On
// PostgreSQL it locks the workspace until tx ends, so that two of them
// cannot both take its last place. When it is full it refuses with a
// conflict naming the setting, followed by then (what to do).
func takeRunPlace(tx *gorm.DB, d Dialect, wsID int64, limit int, then string) error {
	if limit <= 0 {
		return nil
	}
	if err := lockWorkspace(tx, d, wsID); err != nil {
		return err
	}
	active, err := activeRuns(tx, wsID)
	if err != nil {
		return err
	}
	if active >= int64(limit) {
		return atRunLimit(active, then)
	}
	return nil
}

// CheckRunCapacity reports whether n more runs may be launched in the
// workspace now (under DB.MaxActiveRunsPerWorkspace), so that a group of
// runs is refused as a whole rather than half launched. CreateRun checks
// again for each run.
func (db *DB) CheckRunCapacity(ctx context.Context, wsID int64, n int) error {
	if db.MaxActiveRunsPerWorkspace <= 0 {
		return nil
	}
	active, err := activeRuns(db.Gorm.WithContext(ctx), wsID)
	if err != nil {
		return err
	}
	if active+int64(n) > int64(db.MaxActiveRunsPerWorkspace) {
		return runLimitError(active, n, db.MaxActiveRunsPerWorkspace)
	}
	return nil
}
