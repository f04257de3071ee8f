package models_test

import (
	"context"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRunSampleRowIDsFromTheKey: ListRunSampleRowIDs gives, on each
// database, exactly the row ids stored for the criterion, in order, whether
// they are consecutive (made from the key's two ends) or not (read), with
// the other criterion's and the other run's rows left out; a criterion
// with no stored result has none.
func TestRunSampleRowIDsFromTheKey(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		run, other := w.runs[0], w.runs[1]
		store := func(runID int64, criterion int, ids []int64) {
			t.Helper()
			rows := make([]models.RunSampleResult, len(ids))
			for i, id := range ids {
				rows[i] = models.RunSampleResult{RunID: runID, CriterionIndex: criterion, RowID: id, Position: i, RankPosition: i}
			}
			if err := db.Gorm.Create(&rows).Error; err != nil {
				t.Fatal(err)
			}
		}
		consecutive := []int64{1000, 1001, 1002, 1003, 1004}
		gapped := []int64{7, 9, 10, 11, 40}
		store(run.ID, 0, consecutive)
		store(run.ID, 1, gapped)
		store(other.ID, 0, []int64{999, 1005, 1006})
		for _, tc := range []struct {
			name      string
			criterion int
			want      []int64
		}{
			{"consecutive", 0, consecutive},
			{"with gaps", 1, gapped},
			{"none stored", 2, []int64{}},
		} {
			got, err := db.ListRunSampleRowIDs(ctx, run.ID, tc.criterion, len(tc.want))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
	})
}
