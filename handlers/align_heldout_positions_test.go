package handlers

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestHeldOutCopyNumbersRowsFromOne: a held-out copy's rows were numbered
// from 0 (its page's # column read 0, 1, 2...), while an uploaded dataset
// and a noisy copy number theirs from 1.
func TestHeldOutCopyNumbersRowsFromOne(t *testing.T) {
	ctx := context.Background()
	for _, source := range []string{"imported", "browser"} {
		env := newTestEnv(t, dbtest.Open(t, models.SQLite))
		src := alignDemoRun(t, env, source)
		a := alignAccepted(t, env, src, 5)
		rows, err := env.db.ListDatasetRows(ctx, *a.HeldOutDatasetID, 0, 0)
		mustB(t, err)
		if len(rows) == 0 {
			t.Fatalf("%s: an empty held-out copy", source)
		}
		for i, r := range rows {
			if r.Position != i+1 {
				t.Errorf("%s: row %s of the held-out copy is at position %d, want %d", source, r.ExternalID, r.Position, i+1)
				break
			}
		}
		page := env.get(fmt.Sprintf("/datasets/%d", *a.HeldOutDatasetID)).Body.String()
		first := regexp.MustCompile(`(?s)>Rows<.*?<tbody><tr><td[^>]*>(\d+)</td>`).FindStringSubmatch(page)
		if first == nil || first[1] != "1" {
			t.Errorf("%s: the copy's page numbers its first row %v, want 1", source, first)
		}
	}
}
