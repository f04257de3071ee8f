package report

import (
	"context"
	"fmt"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestStoredFiguresComputedWithoutTexts: StoreStats (LoadSummary of a run
// with nothing stored) computes a finished run's figures from rows read without their texts (only the system and
// group columns, models.ListDatasetRowFigures), and every figure of the
// summary it stores, system level and grouped correlations included, is
// the one a full build with the texts computes afresh; the pages of stored
// samples still show the texts.
func TestStoredFiguresComputedWithoutTexts(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := summaryFixture(t, db, 1200)
		for name, opt := range map[string]Options{"usual": {}, "grouped by system": {GroupColumn: "system"},
			"grouped, no system level": {GroupColumn: "system", SystemColumn: NoSystem}} {
			must(t, db.Gorm.Where("run_id = ?", runID).Delete(&models.RunStats{}).Error)
			must(t, db.Gorm.Where("run_id = ?", runID).Delete(&models.RunSummary{}).Error)
			recomputed := 0
			opt.Recomputed = func(int) { recomputed++ }
			sum, err := LoadSummary(ctx, db, wsID, runID, opt) // StoreStats with opt
			must(t, err)
			if recomputed != 2 {
				t.Fatalf("%s: the summary computed %d criteria's figures, want 2", name, recomputed)
			}
			must(t, db.Gorm.Where("run_id = ?", runID).Delete(&models.RunStats{}).Error)
			recomputed = 0
			full, err := BuildWith(ctx, db, wsID, runID, opt)
			must(t, err)
			if recomputed != 2 || len(full.Criteria[0].Samples[0].Fields) == 0 || full.Criteria[0].Samples[0].Fields[0].Value == "" {
				t.Fatalf("%s: the full build recomputed %d criteria or has no texts", name, recomputed)
			}
			if opt.SystemColumn == "" && (full.Criteria[0].System == nil || sum.Criteria[0].SystemColumn != "system") {
				t.Fatalf("%s: no system-level figures to compare", name)
			}
			if opt.GroupColumn != "" && full.Criteria[0].Grouped == nil {
				t.Fatalf("%s: no grouped figures to compare", name)
			}
			for ci := range full.Criteria {
				want := full.Criteria[ci]
				want.Samples = nil
				assertSameValue(t, fmt.Sprintf("%s: Criteria[%d]", name, ci), sum.Criteria[ci], want)
			}
			page, _, err := LoadSamplePage(ctx, db, sum, SamplePage{Criterion: 0, Sort: "position", Page: 1, PerPage: 10})
			must(t, err)
			assertSameValue(t, name+": first page", page, full.Criteria[0].Samples[:10])
		}

		// A run still going: its summary is built afresh at each read,
		// without texts too, and has the full build's figures.
		must(t, db.Gorm.Model(&models.Run{}).Where("id = ?", runID).Update("status", models.RunRunning).Error)
		sum, err := LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		full, err := BuildWith(ctx, db, wsID, runID, Options{})
		must(t, err)
		if full.Run.Finished() || len(full.Criteria[0].Samples[0].Fields) == 0 {
			t.Fatalf("the run is not going again, or its full build has no texts")
		}
		for ci := range full.Criteria {
			want := full.Criteria[ci]
			want.Samples = nil
			assertSameValue(t, fmt.Sprintf("running: Criteria[%d]", ci), sum.Criteria[ci], want)
		}
	})
}
