package models

import (
	"fmt"
	"time"
)

// Run leases are written and compared with the database's clock, never a
// worker's: workers on several machines share one database, and a worker
// whose clock ran a lease ahead saw every other worker's live lease as
// lapsed and took their runs (their pending batches were then paid twice),
// while one whose clock ran behind wrote leases that looked lapsed to the
// others at once. A worker measures only durations (the lease's length,
// its time left) on its own monotonic clock. SQLite is one machine, but
// takes the same path: its clock is SQL too.

// dbNowSQL is the database's clock in SQL. PostgreSQL's clock_timestamp(),
// not now(): now() is when the transaction began, which for a write that
// waited for a lock is in the past. SQLite's text is the format the
// driver writes times in (db.go, _time_format=sqlite) with milliseconds,
// so it compares as text with the times stored.
func dbNowSQL(d Dialect) string {
	if d == Postgres {
		return "clock_timestamp()"
	}
	return "strftime('%Y-%m-%d %H:%M:%f+00:00', 'now')"
}

// dbLaterSQL is the database's clock plus a number of seconds, given as
// one float64 parameter (leaseSeconds).
func dbLaterSQL(d Dialect) string {
	if d == Postgres {
		return "(clock_timestamp() + make_interval(secs => ?))"
	}
	return "strftime('%Y-%m-%d %H:%M:%f+00:00', 'now', ? || ' seconds')"
}

// leaseSeconds is a lease's length as dbLaterSQL's parameter.
func leaseSeconds(d time.Duration) float64 { return d.Seconds() }

// dbTime scans the database's clock (dbNowSQL): a time on PostgreSQL, the
// text of one on SQLite.
type dbTime struct{ t time.Time }

// dbTimeLayouts are the layouts SQLite's clock is read in.
var dbTimeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999"}

// Scan implements sql.Scanner.
func (t *dbTime) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case time.Time:
		t.t = v.UTC()
		return nil
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("read the database's clock: unexpected %T", src)
	}
	for _, l := range dbTimeLayouts {
		if x, err := time.Parse(l, s); err == nil {
			t.t = x.UTC()
			return nil
		}
	}
	return fmt.Errorf("read the database's clock: cannot read %q", s)
}

// dbNowMSSQL is the database's clock (as dbNowSQL) in milliseconds since
// the Unix epoch: the judges' shared slots and per-minute buckets
// (judgelimits.go) keep their times as such integers. SQLite's julianday
// is a float64 of days, exact to well under a millisecond today.
func dbNowMSSQL(d Dialect) string {
	if d == Postgres {
		return "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
	}
	return "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
}
