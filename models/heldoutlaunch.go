package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// A launch of an alignment's held-out runs (copying the held-out samples
// into a dataset of their own, then launching both runs on it) is claimed
// in the database before it starts, by a lease on the alignment's row of
// heldout_launches: every server process sharing the database then sees it
// under way, a second launch is refused while the lease is live, and one
// whose process ended (a crash, a restart) is seen to have stopped once its
// lease lapses, unrenewed. The launcher renews the lease while it works and
// ends it (with why, when it failed) after the runs are recorded on the
// alignment. Lease times are the database's clock (dbclock.go), as runs'
// leases are: processes on several machines share them.

// ErrHeldOutPreparing is the cause of the refusal of a launch of held-out
// runs already under way (ClaimHeldOutLaunch); its message says since when.
var ErrHeldOutPreparing = errors.New("the held-out runs are being prepared")

// ErrHeldOutLaunched is the cause of the refusal of a launch of held-out
// runs that another launch recorded since the alignment was read.
var ErrHeldOutLaunched = errors.New("the held-out runs were launched meanwhile")

// HeldOutLaunch is the last launch of an alignment's held-out runs, as the
// database sees it when read.
type HeldOutLaunch struct {
	AlignmentID int64
	// Owner is the launch's own random token: only its launcher renews
	// and ends it.
	Owner     string
	StartedAt time.Time
	// LeaseUntil is nil once the launch ended (EndedAt, Failed).
	LeaseUntil *time.Time
	EndedAt    *time.Time
	// Failed is why it failed, as a page says it ("" when the runs were
	// launched, or while under way).
	Failed string
	// Now is the database's clock when read, the clock LeaseUntil was
	// written with.
	Now time.Time

	// Locked says, on a SQLite file, that a live process holds the
	// launch's lock (heldoutlock.go): it is under way even if its lease
	// lapsed unrenewed (its renewals waiting for SQLite's write lock).
	// Only looked at once the lease has lapsed.
	Locked bool
}

// Preparing says the launch is under way: its lease is live, or its
// process holds its lock.
func (l HeldOutLaunch) Preparing() bool {
	return l.LeaseUntil != nil && (l.LeaseUntil.After(l.Now) || l.Locked)
}

// Stopped says the launch's process ended before it did: its lease
// lapsed, never renewed nor ended, and no process holds its lock. Nothing
// of its copy was kept (the copy is one transaction), and it can be
// launched again.
func (l HeldOutLaunch) Stopped() bool {
	return l.LeaseUntil != nil && !l.LeaseUntil.After(l.Now) && !l.Locked
}

// ClaimHeldOutLaunch claims the launch of accepted alignment a's held-out
// runs for owner, with a lease of the given length: refused (EConflict,
// wrapping ErrHeldOutPreparing) while another launch's lease is live,
// wherever it runs, and refused (EConflict) when the alignment's runs are
// no longer those a holds (another launch recorded its runs since a was
// read). A claim whose lease lapsed (its process ended) is taken over;
// on a SQLite file only when no process holds its lock (heldoutlock.go),
// which a claim takes first and EndHeldOutLaunch lets go.
func (db *DB) ClaimHeldOutLaunch(ctx context.Context, a Alignment, owner string, lease time.Duration) (err error) {
	d := db.Dialect
	locked, err := db.lockHeldOutLaunch(ctx, a.ID, owner)
	if err != nil {
		return err
	}
	if !locked {
		// Another launch is alive, whatever its lease says.
		since := "a moment ago"
		if l, ok, err := db.FindHeldOutLaunch(ctx, a.ID); err == nil && ok {
			since = "since " + l.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		return heldOutPreparing(a.ID, since)
	}
	defer func() {
		if err != nil {
			db.unlockHeldOutLaunch(owner)
		}
	}()
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// One statement: of two processes claiming at once, one inserts
		// or takes over the row and the other finds its lease live.
		res := tx.Exec(`INSERT INTO heldout_launches (alignment_id, owner, started_at, lease_until, ended_at, failed)
			VALUES (?, ?, `+dbNowSQL(d)+`, `+dbLaterSQL(d)+`, NULL, '')
			ON CONFLICT (alignment_id) DO UPDATE SET owner = excluded.owner, started_at = excluded.started_at,
				lease_until = excluded.lease_until, ended_at = NULL, failed = ''
			WHERE heldout_launches.lease_until IS NULL OR heldout_launches.lease_until <= `+dbNowSQL(d),
			a.ID, owner, leaseSeconds(lease))
		if res.Error != nil {
			return fmt.Errorf("claim the held-out launch of alignment %d: %w", a.ID, res.Error)
		}
		if res.RowsAffected == 0 {
			l, ok, err := findHeldOutLaunch(ctx, tx, d, a.ID)
			if err != nil {
				return err
			}
			since := "a moment ago"
			if ok {
				since = "since " + l.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC")
			}
			return heldOutPreparing(a.ID, since)
		}
		// Claimed after any launch before it ended, which records its runs
		// first: they are read here, after the claim.
		var now Alignment
		if err := tx.Select("before_run_id", "after_run_id").Where("id = ?", a.ID).First(&now).Error; err != nil {
			return notFound(err, "alignment", a.ID)
		}
		if !sameID(now.BeforeRunID, a.BeforeRunID) || !sameID(now.AfterRunID, a.AfterRunID) {
			return &Error{Code: EConflict, Err: ErrHeldOutLaunched,
				Message: fmt.Sprintf("the held-out runs of alignment %d were launched meanwhile (runs %s and %s): they are not launched twice", a.ID, idText(now.BeforeRunID), idText(now.AfterRunID))}
		}
		return nil
	})
}

// heldOutPreparing refuses a launch of alignment id's held-out runs while
// another is under way (since says since when).
func heldOutPreparing(id int64, since string) error {
	return &Error{Code: EConflict, Err: ErrHeldOutPreparing,
		Message: fmt.Sprintf("the held-out runs of alignment %d are being prepared (%s): they are not launched twice; the alignment's page shows them once they are launched", id, since)}
}

func sameID(x, y *int64) bool {
	return (x == nil) == (y == nil) && (x == nil || *x == *y)
}

func idText(p *int64) string {
	if p == nil {
		return "none"
	}
	return fmt.Sprint(*p)
}

// RenewHeldOutLaunch extends owner's lease on alignment id's launch by
// lease from now; held is false when owner no longer holds it (it lapsed
// and another launch took it over, or it ended).
func (db *DB) RenewHeldOutLaunch(ctx context.Context, id int64, owner string, lease time.Duration) (held bool, err error) {
	res := db.Gorm.WithContext(ctx).Exec(`UPDATE heldout_launches SET lease_until = `+dbLaterSQL(db.Dialect)+`
		WHERE alignment_id = ? AND owner = ? AND lease_until IS NOT NULL`, leaseSeconds(lease), id, owner)
	if res.Error != nil {
		return false, fmt.Errorf("renew the held-out launch of alignment %d: %w", id, res.Error)
	}
	return res.RowsAffected > 0, nil
}

// EndHeldOutLaunch ends owner's launch of alignment id's held-out runs:
// failed says why it failed, "" when the runs were launched (and recorded
// on the alignment). A launch owner no longer holds is left as it is.
// Its lock is let go whatever the update did: the launch is over.
func (db *DB) EndHeldOutLaunch(ctx context.Context, id int64, owner, failed string) error {
	defer db.unlockHeldOutLaunch(owner)
	err := db.Gorm.WithContext(ctx).Exec(`UPDATE heldout_launches SET lease_until = NULL, ended_at = `+dbNowSQL(db.Dialect)+`, failed = ?
		WHERE alignment_id = ? AND owner = ?`, failed, id, owner).Error
	if err != nil {
		return fmt.Errorf("end the held-out launch of alignment %d: %w", id, err)
	}
	return nil
}

// FindHeldOutLaunch reads the last launch of alignment id's held-out runs;
// ok is false when there was none.
func (db *DB) FindHeldOutLaunch(ctx context.Context, id int64) (l HeldOutLaunch, ok bool, err error) {
	l, ok, err = findHeldOutLaunch(ctx, db.Gorm.WithContext(ctx), db.Dialect, id)
	if err == nil && ok && l.LeaseUntil != nil && !l.LeaseUntil.After(l.Now) {
		l.Locked, err = db.heldOutLaunchLocked(ctx, id)
	}
	return l, ok, err
}

func findHeldOutLaunch(ctx context.Context, g *gorm.DB, d Dialect, id int64) (HeldOutLaunch, bool, error) {
	l := HeldOutLaunch{AlignmentID: id}
	var started, now dbTime
	var until, ended nullDBTime
	err := g.WithContext(ctx).Raw(`SELECT owner, started_at, lease_until, ended_at, failed, `+dbNowSQL(d)+` FROM heldout_launches WHERE alignment_id = ?`, id).
		Row().Scan(&l.Owner, &started, &until, &ended, &l.Failed, &now)
	if errors.Is(err, sql.ErrNoRows) {
		return l, false, nil
	}
	if err != nil {
		return l, false, fmt.Errorf("read the held-out launch of alignment %d: %w", id, err)
	}
	l.StartedAt, l.Now, l.LeaseUntil, l.EndedAt = started.t, now.t, until.ptr(), ended.ptr()
	return l, true, nil
}

// nullDBTime scans a nullable time written with the database's clock.
type nullDBTime struct {
	t     dbTime
	valid bool
}

// Scan implements sql.Scanner.
func (n *nullDBTime) Scan(src any) error {
	if src == nil {
		n.valid = false
		return nil
	}
	n.valid = true
	return n.t.Scan(src)
}

func (n nullDBTime) ptr() *time.Time {
	if !n.valid {
		return nil
	}
	t := n.t.t
	return &t
}
