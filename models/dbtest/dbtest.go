// Package dbtest opens real, migrated, throwaway databases for tests:
// a SQLite file in a temp dir, and a fresh PostgreSQL database on the server
// named by TEST_DATABASE_URL (`make test` starts a throwaway cluster and
// sets it). Under CI a missing PostgreSQL fails the test instead of
// skipping it, so both databases are always exercised there.
package dbtest

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// Migrator applies extra schema (River's) after the product's own.
type Migrator func(ctx context.Context, db *models.DB) error

// Dialects lists the databases every storage test runs against.
var Dialects = []models.Dialect{models.SQLite, models.Postgres}

// Open returns a migrated empty database of the given dialect, closed and
// dropped when the test ends. It is a copy of a database this package
// migrated once (see template.go): migrating each test's database anew
// was most of a PostgreSQL test's set-up. OpenDSN still runs the
// migrations on it, which finds nothing to apply.
func Open(t testing.TB, d models.Dialect, extra ...Migrator) *models.DB {
	t.Helper()
	return OpenDSN(t, migratedDSN(t, d), extra...)
}

// OpenDSN opens the database at dsn as a server process does at start: a
// new store with its own pools and a fresh secret key, migrated (a no-op
// when it already is), closed when the test ends. Opening one dsn twice is
// a restart.
func OpenDSN(t testing.TB, dsn string, extra ...Migrator) *models.DB {
	t.Helper()
	ctx := context.Background()
	db, err := models.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { db.Close() })
	// A fresh secret key per database, as an operator would configure one:
	// tests store judge keys, which are always sealed.
	key := make([]byte, models.SecretKeySize)
	_, _ = rand.Read(key)
	sealer, err := models.NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	db.Secrets = models.NewSecrets(sealer, "")
	if err := db.MigrateSchema(ctx, nil); err != nil {
		t.Fatalf("migrate %s: %v", db.Dialect, err)
	}
	for _, m := range extra {
		if err := m(ctx, db); err != nil {
			t.Fatalf("migrate extra schema on %s: %v", db.Dialect, err)
		}
	}
	return db
}

// Each runs fn as a subtest on every dialect.
func Each(t *testing.T, fn func(t *testing.T, db *models.DB), extra ...Migrator) {
	for _, d := range Dialects {
		t.Run(string(d), func(t *testing.T) {
			fn(t, Open(t, d, extra...))
		})
	}
}

// DSN returns where a fresh, empty (unmigrated) database of dialect d
// lives, for tests that hand it to another process: a SQLite file path in a
// temp dir, or the URL of a new PostgreSQL database dropped at the end.
func DSN(t testing.TB, d models.Dialect) string {
	t.Helper()
	if d == models.Postgres {
		return freshPostgres(t)
	}
	return filepath.Join(t.TempDir(), "test.db")
}

func freshPostgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("TEST_DATABASE_URL is not set: CI must run the PostgreSQL tests (run them through `make test`)")
		}
		t.Skip("PostgreSQL tests skipped: TEST_DATABASE_URL is not set (`make test` starts a throwaway server and sets it)")
	}
	return newPostgresDatabase(t, base, "template1")
}
