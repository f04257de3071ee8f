package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Kinds of run events.
const (
	// RunEventLeaseLost: a worker could not keep its lease on the run (it
	// could not renew it in time, e.g. the database was unreachable for
	// longer than the lease) and stopped sending calls.
	RunEventLeaseLost = "lease_lost"
	// RunEventTakenOver: a worker claimed the run after another worker's
	// lease on it ran out (that worker crashed, froze or was cut off).
	RunEventTakenOver = "taken_over"
	// RunEventResumed: the worker whose lease ran out claimed the run
	// again itself.
	RunEventResumed = "resumed"
	// RunEventResent: an execution of a run that asked for it
	// (Settings.HedgeSlowCalls) re-sent judge calls much slower than the
	// run's others; each re-send is a paid call, counted in the run's
	// calls, tokens and cost.
	RunEventResent = "resent_slow_calls"
)

// RunEvent is one thing that happened to a run's execution that its
// counters do not show: a lost lease, a takeover. The run page and the API
// list them, oldest first.
type RunEvent struct {
	ID    int64
	RunID int64
	At    time.Time
	Kind  string
	// Worker is the worker the event is about (a lease owner, as the
	// run's lease_owner names it).
	Worker  string
	Message string
}

// TableName is run_events.
func (RunEvent) TableName() string { return "run_events" }

// AddRunEvent records an event on a run, retried through transient
// database errors (it is written just after the database came back). An
// execution has at most one event of a kind on a run (it loses its lease
// once, it claims the run once): when the run has one already by the same
// worker and of the same kind, nothing is written. So a retry after a
// commit whose acknowledgement was lost, or a lost lease written again
// later (the runner keeps trying while the database is down), does not
// tell the same fact twice.
func (db *DB) AddRunEvent(ctx context.Context, ev RunEvent) error {
	ev.At = ev.At.UTC()
	// PostgreSQL types a SELECT list's parameters as text unless told.
	values := "?, ?, ?, ?, ?"
	if db.Dialect == Postgres {
		values = "CAST(? AS BIGINT), CAST(? AS TIMESTAMPTZ), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT)"
	}
	q := `INSERT INTO run_events (run_id, at, kind, worker, message) SELECT ` + values +
		` WHERE NOT EXISTS (SELECT 1 FROM run_events WHERE run_id = ? AND kind = ? AND worker = ?)`
	err := db.retry(ctx, "record run event", func() error {
		return db.Gorm.WithContext(ctx).Exec(q, ev.RunID, ev.At, ev.Kind, ev.Worker, ev.Message, ev.RunID, ev.Kind, ev.Worker).Error
	})
	if err != nil {
		return fmt.Errorf("record %s on run %d: %w", ev.Kind, ev.RunID, err)
	}
	return nil
}

// RunEvents lists a run's events, oldest first. It reads through the
// read pool: the run page shows them, and pages never wait for a write
// connection (TestPagesReadWithoutTheWritePool).
func (db *DB) RunEvents(ctx context.Context, runID int64) ([]RunEvent, error) {
	out := []RunEvent{}
	if err := db.Reader(ctx).Where("run_id = ?", runID).Order("at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list events of run %d: %w", runID, err)
	}
	return out, nil
}

// ClaimRunFrom is ClaimRun, also returning the run's lease as it was just
// before the claim: a claim that follows a lease which ran out (not one
// given up) is a takeover the run's events should tell.
func (db *DB) ClaimRunFrom(ctx context.Context, runID int64, owner string, ttl time.Duration) (bool, RunLease, error) {
	prev := RunLease{RunID: runID}
	err := db.retry(ctx, "read run lease", func() error {
		var until sql.NullTime
		var lapsed int64
		err := db.SQL.QueryRowContext(ctx, rebind(db.Dialect, "SELECT lease_owner, lease_until, CASE WHEN lease_until < "+dbNowSQL(db.Dialect)+" THEN 1 ELSE 0 END FROM runs WHERE id = ?"), runID).
			Scan(&prev.Owner, &until, &lapsed)
		if err == sql.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		prev.Until, prev.Lapsed = nil, lapsed == 1
		if until.Valid {
			t := until.Time
			prev.Until = &t
		}
		return nil
	})
	if err != nil {
		return false, prev, fmt.Errorf("claim run %d: %w", runID, err)
	}
	ok, err := db.ClaimRun(ctx, runID, owner, ttl)
	return ok, prev, err
}

// PromptVersionSpan is a prompt template version a run's execution began
// building its prompts with, and when (the clock of the process that began).
type PromptVersionSpan struct {
	Version string    `json:"version"`
	Since   time.Time `json:"since"`
}

// LastPromptVersion is the version the run's prompts were last built with:
// its last PromptVersions entry's, or its launch version.
func (r Run) LastPromptVersion() string {
	if n := len(r.PromptVersions); n > 0 {
		return r.PromptVersions[n-1].Version
	}
	return r.PromptTemplateVersion
}

// RecordPromptVersion notes that the run's prompts are built with version
// from now on, when that is not the version they were last built with
// (an upgrade between a pause and its Continue, a crash and its resume):
// it appends {version, now} to runs.prompt_versions in one conditional
// write, so two executions cannot both append. A run launched before
// versions were recorded gets its first entry too: its reports then say
// the version is unknown before it. It reports whether it wrote.
func (db *DB) RecordPromptVersion(ctx context.Context, runID int64, version string) (bool, error) {
	if version == "" {
		return false, nil
	}
	var wrote bool
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var row struct {
			PromptTemplateVersion string
			PromptVersions        string
		}
		if err := tx.Raw(`SELECT prompt_template_version, COALESCE(prompt_versions, '') AS prompt_versions FROM runs WHERE id = ?`, runID).Scan(&row).Error; err != nil {
			return err
		}
		run := Run{PromptTemplateVersion: row.PromptTemplateVersion}
		if row.PromptVersions != "" && row.PromptVersions != "null" {
			if err := json.Unmarshal([]byte(row.PromptVersions), &run.PromptVersions); err != nil {
				return fmt.Errorf("run %d: prompt_versions: %w", runID, err)
			}
		}
		if run.LastPromptVersion() == version {
			return nil
		}
		spans := append(run.PromptVersions, PromptVersionSpan{Version: version, Since: time.Now().UTC()})
		after, err := json.Marshal(spans)
		if err != nil {
			return err
		}
		// Conditional on the list as read: of two executions appending at
		// once, one writes.
		res := tx.Exec(`UPDATE runs SET prompt_versions = ? WHERE id = ? AND COALESCE(prompt_versions, '') = ?`, string(after), runID, row.PromptVersions)
		if res.Error != nil {
			return res.Error
		}
		wrote = res.RowsAffected == 1
		return nil
	})
	return wrote, err
}
