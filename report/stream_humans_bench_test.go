package report

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// BenchmarkStreamCSVHumanCheck measures what the streamed CSV's check for
// criteria without any human rating (criteriaWithHumans, so provenance
// names only the columns read) adds to the export of a synthesized
// 50,000-sample run on SQLite, in one process: the check alone against
// the whole streamed CSV, when both criteria have ratings (the check stops
// at the first page) and when the rubric names columns the dataset lacks
// (the worst case: one pass over the ratings column). Run with
// -benchtime=1x; the ratios are reported as metrics.
func BenchmarkStreamCSVHumanCheck(b *testing.B) {
	db := benchDB(b, b.TempDir())
	wsID, runID := synthRun(b, db, 50_000)
	ctx := context.Background()
	measure := func(name string) {
		x, err := openExport(ctx, db, wsID, runID)
		if err != nil {
			b.Fatal(err)
		}
		if err := x.pinAnnotators(ctx); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := x.criteriaWithHumans(ctx); err != nil {
			b.Fatal(err)
		}
		check := time.Since(start)
		start = time.Now()
		if err := StreamCSV(ctx, db, wsID, runID, io.Discard); err != nil {
			b.Fatal(err)
		}
		total := time.Since(start)
		b.Logf("%s: check %v, whole streamed CSV %v (check/CSV %.3f)", name, check, total, check.Seconds()/total.Seconds())
		b.ReportMetric(check.Seconds()/total.Seconds(), name+"-check/csv")
	}
	for b.Loop() {
		measure("rated")
		run, err := db.GetRun(ctx, runID)
		if err != nil {
			b.Fatal(err)
		}
		for i := range run.RubricSnapshot.Criteria {
			run.RubricSnapshot.Criteria[i].HumanColumn = "scores." + run.RubricSnapshot.Criteria[i].Name
		}
		snap, err := json.Marshal(run.RubricSnapshot)
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Gorm.Model(&models.Run{}).Where("id = ?", runID).Update("rubric_snapshot", string(snap)).Error; err != nil {
			b.Fatal(err)
		}
		measure("unrated")
	}
}
