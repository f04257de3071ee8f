package dbtest

import (
	"context"
	"slices"
	"strings"
	"testing"

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
