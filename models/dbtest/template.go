package dbtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/batcheval/batcheval/migrations"
	"github.com/batcheval/batcheval/models"
)

// Every test of the suite starts from the same migrated, empty schema, and
// applying some forty migrations to a new PostgreSQL database took about
// 0.25 s a test (there are hundreds). So the schema is migrated once into a
// template, named by a hash of the migration files (an edited or added
// migration makes a new one), and each test's database is a copy of it.
// The template outlives the test process: the next process, or another
// package's tests running at the same time, reuse it. On a throwaway server
// (`make test`) it goes with the server; on a long-lived one, each schema
// leaves one small template database (bt_tpl_...) or file in the temp
// directory behind.

// migratedDSN returns where a fresh copy of the migrated template of
// dialect d lives, dropped or removed when the test ends.
func migratedDSN(t testing.TB, d models.Dialect) string {
	t.Helper()
	if d == models.Postgres {
		return copiedPostgres(t)
	}
	return copiedSQLite(t)
}

// schemaHash names the migrations of one dialect: any change to them
// names a new template.
func schemaHash(fsys fs.FS) (string, error) {
	h := sha256.New()
	var names []string
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

var sqliteTemplate struct {
	once sync.Once
	path string
	err  error
}

// copiedSQLite copies the migrated template file into the test's temp dir.
func copiedSQLite(t testing.TB) string {
	t.Helper()
	sqliteTemplate.once.Do(func() {
		sqliteTemplate.path, sqliteTemplate.err = makeSQLiteTemplate()
	})
	if err := sqliteTemplate.err; err != nil {
		t.Fatalf("migrated SQLite template: %v", err)
	}
	dst := filepath.Join(t.TempDir(), "test.db")
	if err := copyFile(sqliteTemplate.path, dst); err != nil {
		t.Fatalf("copy the migrated SQLite template: %v", err)
	}
	return dst
}

// makeSQLiteTemplate migrates a new file and renames it into place, so a
// process never sees another's half-migrated template.
func makeSQLiteTemplate() (string, error) {
	hash, err := schemaHash(migrations.SQLite)
	if err != nil {
		return "", err
	}
	path := filepath.Join(os.TempDir(), "batcheval-dbtest-"+hash+".db")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	dir, err := os.MkdirTemp("", "batcheval-dbtest-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, "template.db")
	if err := migrateOnce(tmp); err != nil {
		return "", err
	}
	// Closed, the database is all in its main file (SQLite checkpoints
	// and removes the write-ahead log when its last connection closes).
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(tmp + suffix); err == nil {
			return "", fmt.Errorf("%s%s left after close", tmp, suffix)
		}
	}
	return path, os.Rename(tmp, path)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	// With the template's mode, which is the product's (0600): a test may
	// ask for it, or for that of a file made beside the database.
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// migrateOnce applies the product's migrations to dsn and closes it.
func migrateOnce(dsn string) error {
	ctx := context.Background()
	db, err := models.Open(ctx, dsn)
	if err != nil {
		return err
	}
	if err := db.MigrateSchema(ctx, nil); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

var pgTemplate struct {
	once sync.Once
	name string
	err  error
}

// copiedPostgres creates the test's database as a copy of the template.
func copiedPostgres(t testing.TB) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		return freshPostgres(t) // which skips, or fails under CI
	}
	pgTemplate.once.Do(func() {
		pgTemplate.name, pgTemplate.err = makePostgresTemplate(base)
	})
	if err := pgTemplate.err; err != nil {
		t.Fatalf("migrated PostgreSQL template: %v", err)
	}
	ctx := context.Background()
	name, err := pgSpares.take(ctx, base, pgTemplate.name)
	if err != nil {
		t.Fatalf("create test database: %v", err)
	}
	return dropAtEnd(t, base, name)
}

// makePostgresTemplate makes the template under an advisory lock, so that
// test processes starting together make it once; it is migrated under
// another name and renamed, so none copies it half-migrated.
func makePostgresTemplate(base string) (string, error) {
	hash, err := schemaHash(migrations.Postgres)
	if err != nil {
		return "", err
	}
	name := "bt_tpl_" + hash
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	const lockKey = 0x62617463 // "batc": only these templates take it
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", lockKey); err != nil {
		return "", err
	}
	defer conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", lockKey)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	tmp := name + "_" + randomSuffix()
	if err := createDatabase(ctx, conn, tmp, "template1"); err != nil {
		return "", err
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + tmp
	if err := migrateOnce(u.String()); err != nil {
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+tmp+" WITH (FORCE)")
		return "", err
	}
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+tmp+" RENAME TO "+name); err != nil {
		return "", err
	}
	return name, nil
}

// newPostgresDatabase creates a database copied from template, dropped
// when the test ends, and returns its URL.
func newPostgresDatabase(t testing.TB, base, template string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to TEST_DATABASE_URL: %v", err)
	}
	defer conn.Close(ctx)
	name := "bt_" + randomSuffix()
	if err := createDatabase(ctx, conn, name, template); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	return dropAtEnd(t, base, name)
}

// dropAtEnd drops the database name when the test ends, and returns its URL.
func dropAtEnd(t testing.TB, base, name string) string {
	t.Helper()
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

// createDatabase copies template into a new database name. A small
// database is copied fastest file by file (PostgreSQL 15's default
// writes every page to the WAL instead: 150 against 70 ms here); an older
// server, which copies files anyway, does not know the option.
func createDatabase(ctx context.Context, conn *pgx.Conn, name, template string) error {
	var version int
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return err
	}
	q := "CREATE DATABASE " + name + " TEMPLATE " + template
	if version >= 150000 {
		q += " STRATEGY FILE_COPY"
	}
	_, err := conn.Exec(ctx, q)
	return err
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
