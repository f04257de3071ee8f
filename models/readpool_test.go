package models_test

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestReadsProceedWhileWritesWait holds a write transaction open on a
// project and lines up more writers behind it, as a run's concurrent
// result writes do, until they hold every connection writers get; a page's
// read must still answer at once, with the last committed state.
func TestReadsProceedWhileWritesWait(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := models.Project{WorkspaceID: ws.ID, Name: "before"}
		if err := db.CreateProject(ctx, &p); err != nil {
			t.Fatal(err)
		}

		tx := db.Gorm.WithContext(ctx).Begin()
		if tx.Error != nil {
			t.Fatal(tx.Error)
		}
		if err := tx.Exec("UPDATE projects SET name = ? WHERE id = ?", "during", p.ID).Error; err != nil {
			t.Fatal(err)
		}
		// Writers queued behind the open transaction, each holding a
		// connection: SQLite's writer pool has 4, and on PostgreSQL they
		// wait on the row lock.
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				_ = db.Gorm.WithContext(ctx).Exec("UPDATE projects SET description = 'queued' WHERE id = ?", p.ID).Error
			})
		}
		time.Sleep(300 * time.Millisecond)

		readCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
		started := time.Now()
		got, err := db.FindProject(readCtx, ws.ID, p.ID)
		took := time.Since(started)
		cancel()
		if err := tx.Rollback().Error; err != nil {
			t.Error(err)
		}
		wg.Wait()
		if err != nil {
			t.Fatalf("read while writes wait: %v (after %s)", err, took)
		}
		if took > time.Second {
			t.Errorf("read took %s while writes waited, want well under a second", took)
		}
		if got.Name != "before" {
			t.Errorf("read saw name %q, want the committed %q", got.Name, "before")
		}
	})
}

// TestUploadReadsWhileWritesWait: an import reads its pending upload part by
// part while its own transaction holds the write lock and other writers
// (a worker's job polling) queue behind it holding the writers'
// connections; every part must still come at once. Each part read through
// the writers' pool waited for the busy timeout.
func TestUploadReadsWhileWritesWait(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		content := strings.Repeat("id,text\n", 400000) // about 3 MiB: several parts
		u := models.PendingUpload{WorkspaceID: ws.ID, Filename: "big.csv", Format: "csv"}
		if err := db.SavePendingUploadFrom(ctx, &u, strings.NewReader(content), int64(len(content)), 0); err != nil {
			t.Fatal(err)
		}
		p := models.Project{WorkspaceID: ws.ID, Name: "busy"}
		if err := db.CreateProject(ctx, &p); err != nil {
			t.Fatal(err)
		}
		tx := db.Gorm.WithContext(ctx).Begin()
		if tx.Error != nil {
			t.Fatal(tx.Error)
		}
		if err := tx.Exec("UPDATE projects SET name = ? WHERE id = ?", "during", p.ID).Error; err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				_ = db.Gorm.WithContext(ctx).Exec("UPDATE projects SET description = 'queued' WHERE id = ?", p.ID).Error
			})
		}
		time.Sleep(300 * time.Millisecond)
		readCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
		started := time.Now()
		got, err := io.ReadAll(db.OpenPendingUpload(readCtx, u))
		took := time.Since(started)
		cancel()
		if err := tx.Rollback().Error; err != nil {
			t.Error(err)
		}
		wg.Wait()
		if err != nil || string(got) != content {
			t.Fatalf("read %d of %d bytes of the upload while writes waited (%v, after %s)", len(got), len(content), err, took)
		}
		if took > time.Second {
			t.Errorf("reading the upload took %s while writes waited, want well under a second", took)
		}
	})
}
