package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// ErrLeaseLost means a write was refused because the writer no longer
// holds the run's lease: another worker has taken the run over.
var ErrLeaseLost = errors.New("this worker no longer holds the run's lease")

type leaseOwnerKey struct{}

// WithLeaseOwner marks ctx as belonging to the execution that holds a run's
// lease under owner. Every run-state write made with such a context carries
// the condition "lease_owner = owner" in its SQL, so a worker that lost its
// lease (frozen, partitioned) cannot overwrite its successor's work.
func WithLeaseOwner(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, leaseOwnerKey{}, owner)
}

// LeaseOwnerFrom returns the owner set by WithLeaseOwner, or "".
func LeaseOwnerFrom(ctx context.Context) string {
	s, _ := ctx.Value(leaseOwnerKey{}).(string)
	return s
}

// fenced adds the lease condition of ctx, if any, to a query on runs.
func fenced(ctx context.Context, q *gorm.DB) *gorm.DB {
	if owner := LeaseOwnerFrom(ctx); owner != "" {
		return q.Where("lease_owner = ?", owner)
	}
	return q
}

// checkFence fails with ErrLeaseLost when ctx names a lease owner that no
// longer holds run runID; tx is the transaction the write happens in.
func checkFence(ctx context.Context, tx *gorm.DB, runID int64) error {
	owner := LeaseOwnerFrom(ctx)
	if owner == "" {
		return nil
	}
	var n int64
	if err := tx.Model(&Run{}).Where("id = ? AND lease_owner = ?", runID, owner).Count(&n).Error; err != nil {
		return err
	}
	if n == 0 {
		// Not a conflict code: the writer must stop, not carry on as if
		// another execution had merely answered the same batch first.
		return fmt.Errorf("run %d: %w", runID, ErrLeaseLost)
	}
	return nil
}

// LeaseState is a run's lease as the database sees it.
type LeaseState struct {
	Owner  string
	Status string
	Until  *time.Time
	// Now is the database's clock when read, the clock Until was written
	// with, so Until - Now is the lease's time left whatever this
	// process's clock says.
	Now time.Time
	// Began is this process's clock (with its monotonic reading) just
	// before the read: the lease's time left counts from there.
	Began time.Time
}

// leaseStateSQL reads a run's lease: the same statement before a call
// (LeaseState) and inside an answer's write (leaseIn).
func leaseStateSQL(d Dialect) string {
	return hotSQL.get(d, "lease state", 0, func() string {
		return "SELECT lease_owner, status, lease_until, " + dbNowSQL(d) + " FROM runs WHERE id = ?"
	})
}

// scanLease reads the lease and the database's clock from row into st;
// ENotFound when the run does not exist.
func scanLease(row *sql.Row, runID int64, st *LeaseState) error {
	var until sql.NullTime
	var now dbTime
	if err := row.Scan(&st.Owner, &st.Status, &until, &now); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Errorf(ENotFound, "run %d does not exist", runID)
		}
		return err
	}
	st.Until = nil
	if until.Valid {
		u := until.Time
		st.Until = &u
	}
	st.Now = now.t
	return nil
}

// LeaseState reads run runID's lease. It runs before every judge call, so
// it is one fixed statement through database/sql (see hotsql.go).
func (db *DB) LeaseState(ctx context.Context, runID int64) (LeaseState, error) {
	var st LeaseState
	q := leaseStateSQL(db.Dialect)
	sctx := db.shortStatement(ctx)
	err := db.retry(ctx, "read lease", func() error {
		st.Began = time.Now()
		return scanLease(db.hotQueryRow(sctx, db.SQL, nil, q, runID), runID, &st)
	})
	return st, err
}
