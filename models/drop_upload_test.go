package models_test

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestDropRefusedUploadOnlyDropsItsOwn: a refused upload is dropped, its
// parts with it, whether or not its save reported success; an upload that
// merely has its id (handed out again after a rolled-back save) is kept.
func TestDropRefusedUploadOnlyDropsItsOwn(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		content := strings.Repeat("id,text\n", 1)
		save := func(name string) models.PendingUpload {
			u := models.PendingUpload{WorkspaceID: ws.ID, Filename: name, Format: "csv"}
			if err := db.SavePendingUploadFrom(ctx, &u, strings.NewReader(content), int64(len(content)), 0); err != nil {
				t.Fatal(err)
			}
			return u
		}
		count := func(table string) (n int64) {
			db.Gorm.Table(table).Count(&n)
			return n
		}
		refused := save("refused.csv")
		other := save("other.csv")
		// What a rolled-back save of another file that was handed other's
		// id would ask to drop.
		stale := refused
		stale.ID = other.ID
		if err := db.DropRefusedUpload(ctx, stale); err != nil {
			t.Fatal(err)
		}
		if n := count("pending_uploads"); n != 2 {
			t.Fatalf("%d uploads after dropping a mismatched one, want 2 kept", n)
		}
		if err := db.DropRefusedUpload(ctx, refused); err != nil {
			t.Fatal(err)
		}
		if u, p := count("pending_uploads"), count("pending_upload_parts"); u != 1 || p != 1 {
			t.Errorf("%d uploads and %d parts left, want other.csv's 1 and 1", u, p)
		}
	})
}
