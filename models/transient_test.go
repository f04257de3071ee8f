package models_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

func TestIsTransient(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"serialization failure", &pgconn.PgError{Code: "40001"}, true},
		{"deadlock", fmt.Errorf("save: %w", &pgconn.PgError{Code: "40P01"}), true},
		{"terminated by administrator", &pgconn.PgError{Code: "57P01"}, true},
		{"connection failure class 08", &pgconn.PgError{Code: "08006"}, true},
		{"disk full", fmt.Errorf("commit: %w", &pgconn.PgError{Code: "53100"}), true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"not null violation", &pgconn.PgError{Code: "23502"}, false},
		{"bad connection", fmt.Errorf("query: %w", driver.ErrBadConn), true},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		{"unexpected EOF", fmt.Errorf("receive: %w", io.ErrUnexpectedEOF), true},
		{"caller cancelled", context.Canceled, false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{"record not found", gorm.ErrRecordNotFound, false},
		{"product conflict", models.Errorf(models.EConflict, "already answered"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := models.IsTransient(tt.err); got != tt.want {
				t.Errorf("IsTransient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

// TestSQLiteBusyIsTransient: a real SQLITE_BUSY from the driver, as a
// writer that cannot wait for another's lock gets it, is classified
// transient by its code.
func TestSQLiteBusyIsTransient(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "busy.db")
	db, err := models.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.MigrateSchema(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(0)")
	impatient, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer impatient.Close()
	tx, err := db.SQL.Begin() // immediate: holds the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`UPDATE runs SET calls = calls WHERE id = 0`); err != nil {
		t.Fatal(err)
	}
	_, err = impatient.Exec(`UPDATE runs SET calls = calls WHERE id = 0`)
	if err == nil {
		t.Fatal("a second writer got the lock; the test proves nothing")
	}
	if !models.IsTransient(err) {
		t.Errorf("IsTransient(%v) = false, want true for SQLITE_BUSY", err)
	}
}

// TestSQLiteFullIsTransient: a real SQLITE_FULL (the disk or the file's
// page limit is full) is classified transient: space freed by an operator
// lets the same write through. It used to fail the run at once, marking it
// failed if that write went through, while answers the judge had been paid
// for were dropped with the execution.
func TestSQLiteFullIsTransient(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "full.db")
	db, err := models.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.MigrateSchema(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := db.SQL.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	// A connection that may not grow the file: as a full disk does.
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("max_page_count(%d)", pages))
	full, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	_, err = full.Exec(`UPDATE runs SET error = ? WHERE id = 0; CREATE TABLE filler (b BLOB); INSERT INTO filler VALUES (zeroblob(1048576))`, "x")
	if err == nil {
		t.Fatal("a megabyte fitted in a file that may not grow; the test proves nothing")
	}
	if !models.IsTransient(err) {
		t.Errorf("IsTransient(%v) = false, want true for SQLITE_FULL", err)
	}
}

// TestWritesSurviveKilledConnections: every connection of the database is
// terminated (as a PostgreSQL restart or fail-over does) right before a
// run-state write; the write is retried on a new connection and succeeds.
func TestWritesSurviveKilledConnections(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, models.Postgres)
	ctx := context.Background()
	var retried atomic.Int32
	db.Retry.OnRetry = func(string, error) { retried.Add(1) }
	admin := dbtest.Open(t, models.Postgres) // another database on the same server
	for i := 0; i < 5; i++ {
		// Warm the pool, so the killed connections are the ones reused.
		if err := db.SetRunPlan(ctx, 424242, 1, 0, 0); err != nil {
			t.Fatalf("warm-up write: %v", err)
		}
		var dbName string
		if err := db.SQL.QueryRow(`SELECT current_database()`).Scan(&dbName); err != nil {
			t.Fatal(err)
		}
		if err := admin.Gorm.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ?`, dbName).Error; err != nil {
			t.Fatal(err)
		}
		if err := db.SetRunPlan(ctx, 424242, 2, 0, 0); err != nil {
			t.Fatalf("write after the connections were killed (round %d): %v", i+1, err)
		}
	}
	if retried.Load() == 0 {
		t.Error("no write was retried: the killed connections were never hit, so the test proves nothing")
	}
}
