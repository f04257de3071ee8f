package dbtest

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/batcheval/batcheval/models"
)

// TestCopyIsTheMigratedSchema: a test's database, copied from the
// template, has exactly the schema (tables, columns, indexes, applied
// versions) that migrating a new database gives.
func TestCopyIsTheMigratedSchema(t *testing.T) {
	for _, d := range Dialects {
		t.Run(string(d), func(t *testing.T) {
			copied := Open(t, d)
			fresh := OpenDSN(t, DSN(t, d))
			a, b := schemaOf(t, copied), schemaOf(t, fresh)
			if len(b) < 50 {
				t.Fatalf("a migrated database describes only %d schema lines", len(b))
			}
			if !slices.Equal(a, b) {
				for _, l := range a {
					if !slices.Contains(b, l) {
						t.Errorf("only in the copy: %s", l)
					}
				}
				for _, l := range b {
					if !slices.Contains(a, l) {
						t.Errorf("only in the migrated database: %s", l)
					}
				}
			}
		})
	}
}

// TestCopiesAreSeparate: what one test writes, the next copy does not see.
func TestCopiesAreSeparate(t *testing.T) {
	ctx := context.Background()
	for _, d := range Dialects {
		t.Run(string(d), func(t *testing.T) {
			one := Open(t, d)
			if _, err := one.EnsureDefaultWorkspace(ctx); err != nil {
				t.Fatal(err)
			}
			two := Open(t, d)
			var n int64
			if err := two.Gorm.Model(&models.Workspace{}).Count(&n).Error; err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Fatalf("a new copy holds %d workspaces written to another", n)
			}
		})
	}
}

func schemaOf(t *testing.T, db *models.DB) []string {
	t.Helper()
	var q string
	if db.Dialect == models.Postgres {
		q = `SELECT 'col ' || table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || COALESCE(column_default, '')
			FROM information_schema.columns WHERE table_schema = current_schema()
			UNION ALL SELECT 'idx ' || indexdef FROM pg_indexes WHERE schemaname = current_schema()
			UNION ALL SELECT 'ver ' || version_id::text FROM batcheval_schema_version WHERE is_applied`
	} else {
		q = `SELECT 'obj ' || type || ' ' || name || ' ' || COALESCE(sql, '') FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'
			UNION ALL SELECT 'ver ' || version_id FROM batcheval_schema_version WHERE is_applied`
	}
	rows, err := db.SQL.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join(strings.Fields(s), " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// BenchmarkOpen: a test's database migrated anew (the old way, still what
// DSN and OpenDSN give) against copied from the template (Open).
func BenchmarkOpen(b *testing.B) {
	for _, d := range Dialects {
		b.Run(string(d)+"/migrated", func(b *testing.B) {
			for b.Loop() {
				OpenDSN(b, DSN(b, d))
			}
		})
		b.Run(string(d)+"/copied", func(b *testing.B) {
			for b.Loop() {
				Open(b, d)
			}
		})
	}
}

// TestSparesOfEndedProcessesAreDropped: a copy made ahead by a process
// that ended before a test took it (its lock released with its
// connection) is dropped by the next process to take a copy; one whose
// process still holds its lock is left alone, and a copy taken is out of
// the spares' names.
func TestSparesOfEndedProcessesAreDropped(t *testing.T) {
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		freshPostgres(t) // skips, or fails under CI
	}
	ctx := context.Background()
	_ = Open(t, models.Postgres) // the template exists
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	live, err := pgx.Connect(ctx, base) // a process still running
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close(ctx)
	exists := func(name string) bool {
		var ok bool
		if err := admin.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	cases := []struct {
		name     string
		held     bool // its process still holds its lock
		wantKept bool
	}{
		{"the spare of an ended process", false, false},
		{"the spare of a live process", true, true},
	}
	names := make([]string, len(cases))
	for i, tc := range cases {
		key := int64(0x7eadbeef00+i) + time.Now().UnixNano()%1e9*1000
		names[i] = fmt.Sprintf("%s%x", sparePrefix, key)
		if err := createDatabase(ctx, admin, names[i], pgTemplate.name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+names[i]+" WITH (FORCE)") })
		if tc.held {
			if _, err := live.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
				t.Fatal(err)
			}
		}
	}
	next := &spares{ready: make(chan spare, 1)} // the next process's
	taken, err := next.take(ctx, base, pgTemplate.name)
	if err != nil {
		t.Fatal(err)
	}
	dropAtEnd(t, base, taken)
	for i, tc := range cases {
		if got := exists(names[i]); got != tc.wantKept {
			t.Errorf("%s: kept %v, want %v", tc.name, got, tc.wantKept)
		}
	}
	if strings.HasPrefix(taken, sparePrefix) || !exists(taken) {
		t.Errorf("the copy taken is %q (exists %v): want a database of its own, out of the spares' names", taken, exists(taken))
	}
	// The copy made ahead for the next test is taken as a database of its
	// own too, and its spare name is gone.
	again, err := next.take(ctx, base, pgTemplate.name)
	if err != nil {
		t.Fatal(err)
	}
	dropAtEnd(t, base, again)
	if again == taken || strings.HasPrefix(again, sparePrefix) || !exists(again) {
		t.Errorf("second copy %q (first %q, exists %v): want another database of its own", again, taken, exists(again))
	}
	var left int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname LIKE $1 AND datname <> $2", sparePrefix+"%", names[1]).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left > 2 {
		// This process's own and the test's next: never more.
		t.Errorf("%d spares on the server, want at most this process's own and next's", left)
	}
	// next's spare is left as an ended process leaves it.
	next.mu.Lock()
	filling := next.filling
	next.mu.Unlock()
	if filling {
		sp := <-next.ready
		next.ready <- sp
	}
	if len(next.ready) == 1 {
		sp := <-next.ready
		_, _ = next.holder.Exec(ctx, "DROP DATABASE IF EXISTS "+sp.name+" WITH (FORCE)")
	}
	next.holder.Close(ctx)
}
