package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestSweepUploads: the sweeper deletes expired pending uploads on its
// first pass and keeps the others.
func TestSweepUploads(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &Config{Addr: "127.0.0.1:0", SQLitePath: filepath.Join(t.TempDir(), "b.db")}
	db, err := openDB(ctx, c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ws, _ := db.EnsureDefaultWorkspace(ctx)
	var ups []*models.PendingUpload
	for range 2 {
		u := &models.PendingUpload{WorkspaceID: ws.ID, Filename: "f.csv", Format: "csv", Content: []byte("id\n1\n")}
		if err := db.SavePendingUpload(ctx, u, 0); err != nil {
			t.Fatal(err)
		}
		ups = append(ups, u)
	}
	db.Gorm.Model(ups[0]).Update("created_at", time.Now().UTC().Add(-models.UploadTTL-time.Second))
	done := make(chan struct{})
	go func() { sweepUploads(ctx, db, slog.New(slog.DiscardHandler), time.Hour); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int64
		db.Gorm.Model(&models.PendingUpload{}).Count(&n)
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d uploads left after the sweep, want 1", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := db.FindPendingUpload(ctx, ws.ID, ups[1].Token); err != nil {
		t.Errorf("the fresh upload went: %v", err)
	}
	cancel()
	<-done
}
