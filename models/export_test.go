package models

import (
	"context"
	"time"
)

// WriteStoredLateCountPG writes, as PostgreSQL's answer store does after
// its statement stored an answer on a run that has ended, the event that
// the answer's spend add came after the run (status) ended.
func (db *DB) WriteStoredLateCountPG(ctx context.Context, runID, batchID int64, owner, status string, add UnitSpend, at time.Time) error {
	return db.writeLateCountOnce(ctx, lateCount{runID: runID, batchID: batchID, owner: owner, holds: owner != "", status: status, what: lateStored, add: add, at: at})
}

// HoldPasswordHashing makes every account's password hashing call hold
// first (a test then looks at what waits meanwhile); restore undoes it.
func HoldPasswordHashing(hold func()) (restore func()) {
	hashPassword = func(pw string) (string, error) {
		hold()
		return HashPassword(pw)
	}
	return func() { hashPassword = HashPassword }
}
