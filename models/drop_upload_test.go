package models_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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

// cancelAtEOF reads r and cancels its context a moment (after) once no
// more than left bytes are still to read: with left 0 the upload's save is
// then storing its last part or committing, with more it has parts to go.
type cancelAtEOF struct {
	r      *strings.Reader
	cancel context.CancelFunc
	after  time.Duration
	left   int
	once   sync.Once
}

func (c *cancelAtEOF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if c.r.Len() <= c.left {
		c.once.Do(func() { time.AfterFunc(c.after, c.cancel) })
	}
	return n, err
}

// TestCancelledUploadSaveEndsOneWay: a save cancelled as it stores its last
// part or commits (the scan of a refused file found its problem at the
// end) either stored the upload, and says so, or stored nothing, ever. It
// used to report the cancel while PostgreSQL was still committing, so the
// handler's drop ran before the upload appeared and the upload stayed
// (TestRefusedUploadStoresNothing failed now and then in CI).
func TestCancelledUploadSaveEndsOneWay(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ws, err := db.EnsureDefaultWorkspace(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		content := strings.Repeat("s,a row of text to fill the parts,3\n", 90000) // about 3.2 MB, 4 parts
		stored, refused := 0, 0
		for i := range 40 {
			ctx, cancel := context.WithCancel(t.Context())
			u := models.PendingUpload{WorkspaceID: ws.ID, Filename: fmt.Sprintf("f%d.csv", i), Format: "csv"}
			err := db.SavePendingUploadFrom(ctx, &u, &cancelAtEOF{r: strings.NewReader(content), cancel: cancel, after: time.Duration(i%20) * 500 * time.Microsecond,
				left: (i % 2) * len(content) / 2}, int64(len(content)), 0)
			cancel()
			if err == nil {
				stored++
				if derr := db.DropRefusedUpload(t.Context(), u); derr != nil {
					t.Fatal(derr)
				}
				continue
			}
			refused++
			// Reported as not stored: nothing is, now or a moment later.
			time.Sleep(50 * time.Millisecond)
			var n int64
			db.Gorm.Table("pending_uploads").Where("filename = ?", u.Filename).Count(&n)
			if n != 0 {
				t.Fatalf("save %d reported %v, yet its upload is stored", i, err)
			}
		}
		t.Logf("%d of 40 saves stored before the cancel, %d stopped", stored, refused)
		if refused == 0 {
			t.Error("no save was stopped by its cancel: the test proves nothing about that side")
		}
	})
}
