package models_test

import (
	"context"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// BenchmarkSampleWiseCountsOf measures the count of a sample-wise run's
// units read from their details (SampleWiseCountsOf: one scan that matches
// each unit's JSON text and parses it) against FailureCauses, the run
// page's existing query of the same run's units (an indexed lookup of the
// failed ones), on a CloserLook-shaped run of 30,000 units (10,000
// samples, three criteria; 20 ratings each). Compare the ratios, not the
// times. TooFewReadableUnits, the scan a report build of a run with a
// fewest readable answers adds (one unit in ten left missing for too few
// readable answers), is measured beside the batches' layout of the
// three criteria (ListCriterionBatchFigures), which every report build
// reads already.
func BenchmarkSampleWiseCountsOf(b *testing.B) {
	const units = 30_000
	for _, d := range dbtest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			db := dbtest.Open(b, d)
			ctx := context.Background()
			ws, err := db.EnsureDefaultWorkspace(ctx)
			if err != nil {
				b.Fatal(err)
			}
			p := models.Project{WorkspaceID: ws.ID, Name: "bench"}
			if err := db.CreateProject(ctx, &p); err != nil {
				b.Fatal(err)
			}
			ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "d", Columns: []string{"id", "text"},
				Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
			if err := db.CreateDataset(ctx, &ds, []models.DatasetRow{{Position: 1, ExternalID: "a", Data: map[string]string{"id": "a", "text": "x"}, Ratings: map[string]*float64{}}}); err != nil {
				b.Fatal(err)
			}
			r := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds.ID, Name: "closerlook", Method: models.MethodCloserLook, CreatedAt: time.Now()}
			if err := db.CreateRun(ctx, &r, nil); err != nil {
				b.Fatal(err)
			}
			ratings := make([]float64, 18)
			for i := range ratings {
				ratings[i] = float64(1 + i%3)
			}
			batches := make([]models.RunBatch, units)
			for i := range batches {
				batches[i] = models.RunBatch{RunID: r.ID, CriterionIndex: i % 3, BatchIndex: i / 3, RowIDs: []int64{int64(i)}, Status: models.BatchDone, Problems: []string{},
					Details: map[string]any{"method": "closerlook", "asked": 20, "answered": 20, "ratings": ratings, "unreadable": 2}}
				if i%10 == 0 {
					batches[i].Details = map[string]any{"method": "closerlook", "asked": 20, "answered": 20, "ratings": ratings[:1], "unreadable": 19,
						"readable": 1, "min_readable": 10, "too_few_readable": true}
				}
			}
			if err := db.Gorm.CreateInBatches(batches, 500).Error; err != nil {
				b.Fatal(err)
			}
			for _, q := range []struct {
				name string
				run  func() error
			}{
				{"FailureCauses", func() error { _, err := db.FailureCauses(ctx, r.ID); return err }},
				{"SampleWiseCountsOf", func() error {
					got, err := db.SampleWiseCountsOf(ctx, r.ID)
					// A tenth of the units (every 30th of criterion 0) read
					// 1 of 20: 17 more unreadable answers each.
					if err == nil && got.Answers[0] != (models.SampledAnswers{Answers: 20 * units / 3, Unreadable: 2*units/3 + 17*units/30}) {
						b.Fatalf("counted %+v", got)
					}
					return err
				}},
				{"ListCriterionBatchFigures", func() error {
					for ci := range 3 {
						if _, err := db.ListCriterionBatchFigures(ctx, r.ID, ci, 0); err != nil {
							return err
						}
					}
					return nil
				}},
				{"TooFewReadableUnits", func() error {
					got, err := db.TooFewReadableUnits(ctx, r.ID)
					if err == nil && len(got) != units/10 {
						b.Fatalf("found %d units, want %d", len(got), units/10)
					}
					return err
				}},
			} {
				b.Run(q.name, func(b *testing.B) {
					for b.Loop() {
						if err := q.run(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
