package report

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestFinishedCriterionStoredWhileRunning: while a run goes on, the
// figures of a criterion whose every call has come back are stored when
// first computed and read from storage by the next build (a running
// run's page builds its report again as answers arrive); a criterion
// still running is computed afresh each time and nothing of it is
// stored. The stored figures are the ones computed afresh.
func TestFinishedCriterionStoredWhileRunning(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 300)
		must(t, db.Gorm.Model(&models.Run{}).Where("id = ?", runID).Updates(map[string]any{"status": models.RunRunning, "finished_at": nil}).Error)
		// Criterion 1 has a call still out.
		var b models.RunBatch
		must(t, db.Gorm.Where("run_id = ? AND criterion_index = 1", runID).Order("id").First(&b).Error)
		must(t, db.Gorm.Model(&b).Update("status", models.BatchPending).Error)
		must(t, db.Gorm.Where("run_id = ?", runID).Delete(&models.RunStats{}).Error)

		build := func() (*Report, []int) {
			var recomputed []int
			rep, err := BuildFigures(ctx, db, wsID, runID, Options{Recomputed: func(ci int) { recomputed = append(recomputed, ci) }})
			must(t, err)
			if rep.Run.Finished() {
				t.Fatal("the run is not running")
			}
			slices.Sort(recomputed)
			return rep, slices.Compact(recomputed)
		}
		first, got := build()
		if !slices.Equal(got, []int{0, 1}) {
			t.Fatalf("first build recomputed criteria %v, want [0 1]", got)
		}
		stored, err := db.ListRunStats(ctx, runID)
		must(t, err)
		for _, s := range stored {
			if s.CriterionIndex != 0 {
				t.Errorf("criterion %d's figures stored while it runs", s.CriterionIndex)
			}
		}
		if len(stored) == 0 {
			t.Fatal("the finished criterion's figures were not stored")
		}
		second, got := build()
		if !slices.Equal(got, []int{1}) {
			t.Fatalf("second build recomputed criteria %v, want [1]: the finished criterion's figures not read from storage", got)
		}
		for ci := range first.Criteria {
			assertSameValue(t, fmt.Sprintf("Criteria[%d]", ci), second.Criteria[ci], first.Criteria[ci])
		}
		// Once its call is back, criterion 1's are stored too.
		must(t, db.Gorm.Model(&b).Update("status", models.BatchDone).Error)
		build()
		if _, got := build(); len(got) != 0 {
			t.Fatalf("criteria %v recomputed once every call is back", got)
		}
	})
}
