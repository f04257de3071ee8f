package models

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// RunEventRequeued: the run was queued with a job no worker would ever
// take (discarded, cancelled or deleted), and the sweep queued a new one.
const RunEventRequeued = "requeued"

// LostJob is a queued run whose job no worker will take: River discarded
// it (an older build fetched a kind it did not know and used up its
// attempts), it was cancelled, or River's cleaner deleted it since.
type LostJob struct {
	RunID, JobID int64
	// State is the job's: "discarded" or "cancelled", "" when it is gone.
	State string
	// Requeued says the sweep already gave the run a new job once.
	Requeued bool
}

// QueuedRunsWithLostJobs lists the queued runs whose job is lost: gone from
// River's table, or discarded or cancelled longer than grace ago by the
// database's clock (a hand-over cancels a job just before it records the
// next one). A run without a job is left alone: only a job once given can
// be lost.
func (db *DB) QueuedRunsWithLostJobs(ctx context.Context, grace time.Duration) ([]LostJob, error) {
	age := "(julianday('now') - julianday(j.finalized_at)) * 86400.0"
	if db.Dialect == Postgres {
		age = "EXTRACT(EPOCH FROM (clock_timestamp() - j.finalized_at))"
	}
	q := rebind(db.Dialect, `SELECT r.id, r.job_id, COALESCE(CAST(j.state AS TEXT), ''),
		CASE WHEN EXISTS (SELECT 1 FROM run_events e WHERE e.run_id = r.id AND e.kind = ?) THEN 1 ELSE 0 END
		FROM runs r LEFT JOIN river_job j ON j.id = r.job_id
		WHERE r.status = ? AND r.job_id IS NOT NULL
		AND (j.id IS NULL OR (j.state IN ('discarded', 'cancelled') AND j.finalized_at IS NOT NULL AND `+age+` >= ?))
		ORDER BY r.id`)
	rows, err := db.SQL.QueryContext(ctx, q, RunEventRequeued, RunQueued, grace.Seconds())
	if err != nil {
		return nil, fmt.Errorf("look for queued runs with lost jobs: %w", err)
	}
	defer rows.Close()
	var out []LostJob
	for rows.Next() {
		var l LostJob
		var state sql.NullString
		var requeued int64
		if err := rows.Scan(&l.RunID, &l.JobID, &state, &requeued); err != nil {
			return nil, err
		}
		l.State, l.Requeued = state.String, requeued == 1
		out = append(out, l)
	}
	return out, rows.Err()
}

// ReplaceLostJob records, in tx, newJob as the queued run's job in place
// of its lost one, with ev on the run; false (and nothing written) when the
// run is no longer queued on that job: another process replaced it first,
// or the run moved on.
func ReplaceLostJob(tx *gorm.DB, l LostJob, newJob int64, ev RunEvent) (bool, error) {
	res := tx.Model(&Run{}).Where("id = ? AND status = ? AND job_id = ?", l.RunID, RunQueued, l.JobID).Update("job_id", newJob)
	if res.Error != nil {
		return false, fmt.Errorf("record run %d's new job: %w", l.RunID, res.Error)
	}
	if res.RowsAffected != 1 {
		return false, nil
	}
	ev.ID, ev.RunID, ev.Kind, ev.At = 0, l.RunID, RunEventRequeued, ev.At.UTC()
	if err := tx.Create(&ev).Error; err != nil {
		return false, fmt.Errorf("record the requeue on run %d: %w", l.RunID, err)
	}
	return true, nil
}
