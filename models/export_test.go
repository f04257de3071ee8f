package models

import (
	"context"
	"sync/atomic"
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

// CountPasswordKeys counts the argon2id computations (password hashes made
// or checked) from now on; restore stops counting.
func CountPasswordKeys() (count func() int64, restore func()) {
	var n atomic.Int64
	old := argon2IDKey
	argon2IDKey = func(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
		n.Add(1)
		return old(password, salt, time, memory, threads, keyLen)
	}
	return n.Load, func() { argon2IDKey = old }
}

// DummyPasswordHash is the hash an unknown address's sign-in is checked
// against.
func DummyPasswordHash() string { return dummyHash }

// SetPasswordCost sets the memory (KiB) and passes of new password hashes,
// as a change of the constants would; restore puts back the cost before.
func SetPasswordCost(memoryKiB, time uint32) (restore func()) {
	old := argonCost
	setArgonCost(memoryKiB, time)
	return func() { setArgonCost(old.memoryKiB, old.time) }
}
