package models_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestUploadStoredInParts stores uploads part by part and reads them back
// byte for byte: sizes around the part size, an empty quota check, and a
// reader that lies about its size, which stores nothing.
func TestUploadStoredInParts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		tests := []struct {
			name string
			size int
		}{
			{"small", 10},
			{"exactly one part", 1 << 20},
			{"three parts", 2<<20 + 17},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				data := make([]byte, tt.size)
				for i := range data {
					data[i] = byte(rng.IntN(256))
				}
				u := models.PendingUpload{WorkspaceID: ws.ID, Filename: "f.csv", Format: "csv"}
				if err := db.SavePendingUploadFrom(ctx, &u, bytes.NewReader(data), int64(len(data)), 0); err != nil {
					t.Fatal(err)
				}
				found, err := db.FindPendingUpload(ctx, ws.ID, u.Token)
				if err != nil || found.SizeBytes != int64(tt.size) || len(found.Content) != 0 {
					t.Fatalf("found %d bytes inline, size %d (%v)", len(found.Content), found.SizeBytes, err)
				}
				got, err := io.ReadAll(db.OpenPendingUpload(ctx, found))
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("read back %d bytes (%v), want the %d stored", len(got), err, len(data))
				}
			})
		}

		// A reader giving fewer bytes than announced stores nothing.
		u := models.PendingUpload{WorkspaceID: ws.ID, Filename: "short.csv", Format: "csv"}
		if err := db.SavePendingUploadFrom(ctx, &u, strings.NewReader("abc"), 10, 0); err == nil {
			t.Fatal("a short reader was accepted")
		}
		if _, err := db.FindPendingUpload(ctx, ws.ID, u.Token); err == nil {
			t.Error("the failed upload was kept")
		}
		// The quota counts uploads stored in parts.
		big := models.PendingUpload{WorkspaceID: ws.ID, Filename: "big.csv", Format: "csv"}
		err = db.SavePendingUploadFrom(ctx, &big, strings.NewReader(strings.Repeat("x", 100)), 100, 3<<20+50)
		if models.ErrorCode(err) != models.EConflict {
			t.Errorf("an upload past the quota: %v, want a conflict", err)
		}
		// Expired uploads go with their parts.
		if _, err := db.PurgeExpiredUploads(ctx, time.Now().Add(models.UploadTTL+time.Hour)); err != nil {
			t.Fatal(err)
		}
		if n := count(t, db, "pending_upload_parts", "1 = 1"); n != 0 {
			t.Errorf("%d parts left after the uploads expired", n)
		}
	})
}
