package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/jackc/pgx/v5/pgconn"
	gosqlite "modernc.org/sqlite"
)

// SQLite result codes that a later try may not hit (the low byte of an
// extended code): another connection holds the lock, or the disk (or the
// file's page limit) is full until someone frees space.
const (
	sqliteBusy   = 5
	sqliteLocked = 6
	sqliteFull   = 13
)

// IsTransient reports whether err is a database failure that the same
// statement may not hit again: a dropped or reset connection, a server
// restarting or terminating the session, a serialization failure or
// deadlock, a busy SQLite file, a full disk (freed space lets the write
// through; the statement or transaction was rolled back). It reads driver error types and codes, not
// message text. The caller's own cancellation is never transient.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", // serialization_failure
			"40P01", // deadlock_detected
			"57P01", // admin_shutdown (pg_terminate_backend)
			"57P02", // crash_shutdown
			"57P03", // cannot_connect_now (starting up)
			"53100", // disk_full
			"53300": // too_many_connections
			return true
		}
		// Class 08: connection exceptions.
		return len(pgErr.Code) == 5 && pgErr.Code[:2] == "08"
	}
	var sqliteErr *gosqlite.Error
	if errors.As(err, &sqliteErr) {
		code := sqliteErr.Code() & 0xff
		return code == sqliteBusy || code == sqliteLocked || code == sqliteFull
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) || pgconn.SafeToRetry(err) {
		return true
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr)
}

// RetryPolicy bounds how long a write is retried through transient
// database errors.
type RetryPolicy struct {
	// For is the total time spent retrying one statement or transaction
	// before its error is returned. Zero means DefaultRetryFor.
	For time.Duration
	// Min and Max bound the wait between tries.
	Min, Max time.Duration
	// OnRetry, if set, is told about each transient failure that is retried
	// (metrics, logs).
	OnRetry func(what string, err error)
}

// DefaultRetryFor rides out a PostgreSQL restart or fail-over (typically
// 5-30 s) and a long SQLite checkpoint, yet gives up on a real outage soon
// enough for the job to be snoozed and resumed later instead of hanging.
const DefaultRetryFor = 45 * time.Second

// retry runs op again while it fails with a transient database error, with
// exponential backoff, until the policy's time is up. op must be safe to
// run twice: a transaction that rolls back, or a statement whose condition
// makes a second application harmless.
func (db *DB) retry(ctx context.Context, what string, op func() error) error {
	p := db.Retry
	if p.For <= 0 {
		p.For = DefaultRetryFor
	}
	if p.Min <= 0 {
		// Why 50ms: a busy SQLite lock or a pool reconnect clears in tens of
		// milliseconds; less would only burn CPU.
		p.Min = 50 * time.Millisecond
	}
	if p.Max <= 0 {
		// Why 2s: a restarting PostgreSQL is noticed within two seconds of
		// coming back.
		p.Max = 2 * time.Second
	}
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		err := op()
		if err == nil {
			return struct{}{}, nil
		}
		if !IsTransient(err) {
			return struct{}{}, backoff.Permanent(err)
		}
		if p.OnRetry != nil {
			p.OnRetry(what, err)
		}
		return struct{}{}, err
	},
		backoff.WithBackOff(&backoff.ExponentialBackOff{InitialInterval: p.Min, RandomizationFactor: 0.5, Multiplier: 2, MaxInterval: p.Max}),
		backoff.WithMaxElapsedTime(p.For),
	)
	return err
}
