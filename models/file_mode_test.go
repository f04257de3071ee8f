package models_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestSQLiteFilesPrivate: the SQLite database holds password hashes, token
// hashes and sealed judge keys, so a fresh one is readable by its owner
// only: the folder the product makes for it 0700, the database and its
// -wal and -shm files 0600 (they were 0755 and 0644, readable by every
// account on the machine). A folder that already exists keeps its mode.
func TestSQLiteFilesPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix permissions")
	}
	ctx := context.Background()
	existing := t.TempDir()
	if err := os.Chmod(existing, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(existing, "data", "db")
	path := filepath.Join(dir, "batcheval.db")
	db, err := models.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// A write, so the WAL and its index exist (and hold rows) while open.
	if err := db.MigrateSchema(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureDefaultWorkspace(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{
		{filepath.Join(existing, "data"), 0o700},
		{dir, 0o700},
		{path, 0o600},
		{path + "-wal", 0o600},
		{path + "-shm", 0o600},
		{existing, 0o755},
	} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("%s: mode %v, want %v", filepath.Base(c.path), got, c.want)
		}
	}
}
