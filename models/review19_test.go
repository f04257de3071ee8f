package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestGroupFallbackHandsOnItsLease: a group that fails as a whole (here:
// one of its answers names a run that no longer exists) is stored one by
// one; the other answers, which ask for their lease (OnLease), must still
// be stored, and hand on the lease, whichever dialect writes them (on
// SQLite that is the counters' UPDATE ... RETURNING, reached only here).
func TestGroupFallbackHandsOnItsLease(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		run, rows := twoRowRun(t, db, "fallback")
		until := time.Now().UTC().Add(time.Minute).Truncate(time.Millisecond)
		if err := db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ?, lease_until = ? WHERE id = ?`, "w1", models.RunRunning, until, run.ID).Error; err != nil {
			t.Fatal(err)
		}
		bs, err := db.CreateRoundBatches(ctx, run.ID, 0, 0, [][]int64{{rows[0].ID}, {rows[1].ID}})
		if err != nil {
			t.Fatal(err)
		}
		item := func(b models.RunBatch, seen **models.LeaseState) models.BatchSave {
			b.Status, b.Response, b.Calls = models.BatchDone, "Sample1: 2", 1
			v := 2.0
			return models.BatchSave{Owner: "w1", OnLease: func(st models.LeaseState) { *seen = &st },
				Result: models.BatchResult{Batch: b, Scores: []models.RunScore{{RunID: b.RunID, BatchID: b.ID, RowID: b.RowIDs[0], Label: 1, Score: &v}}}}
		}
		var seenGone, seenOK *models.LeaseState
		gone := bs[1]
		gone.RunID = run.ID + 1_000_000 // no such run: the group fails
		errs := db.SaveBatchResults(ctx, []models.BatchSave{item(gone, &seenGone), item(bs[0], &seenOK)})
		if errs[1] != nil {
			t.Errorf("the answer of a run that exists, after its group failed: %v, want it stored", errs[1])
		}
		if got := getRun(t, db, run.ID); got.BatchesDone != 1 {
			t.Errorf("%d batches counted, want 1", got.BatchesDone)
		}
		if seenOK == nil || seenOK.Until == nil || !seenOK.Until.Equal(until) || seenOK.Status != models.RunRunning {
			t.Errorf("lease handed on by the one-by-one write: %+v, want running until %v", seenOK, until)
		}
	})
}
