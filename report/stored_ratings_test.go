package report

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestStoredSummaryFollowsTheRatingsUsed: a run's stored summary and
// per-sample results are keyed by the browser ratings the report actually
// reads, after the scale filter (models.OnScale), not only by the source
// and its cut-off id. A summary stored while a review given on another
// scale was still counted (before that rule) is not served once the rule
// filters it out: it is built again, and the review counts nowhere.
func TestStoredSummaryFollowsTheRatingsUsed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 40)
		run, err := db.FindRun(ctx, wsID, runID)
		must(t, err)
		rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		crit := run.RubricSnapshot.Criteria[0]
		var bobIDs []int64
		for i, r := range rows {
			// ann rates on the rubric's 1-5; bob's ratings are far from
			// everything, so counting them moves every figure.
			ann := 1 + float64(i%5)
			_, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: wsID, DatasetID: run.DatasetID, RowID: r.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "ann", Score: &ann, Lo: crit.Lo, Hi: crit.Hi})
			must(t, err)
			bob := 5 - float64(i%3)
			rv, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: wsID, DatasetID: run.DatasetID, RowID: r.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "bob", Score: &bob, Lo: crit.Lo, Hi: crit.Hi})
			must(t, err)
			bobIDs = append(bobIDs, rv.ID)
		}
		_, err = db.SetRunHumanSource(ctx, wsID, runID, models.HumansBrowser, "tester")
		must(t, err)
		// Stored while bob's reviews counted (the code before the scale
		// rule counted every review, whatever its scale).
		before, err := LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		if got, want := before.Humans.BrowserRatings, 2*len(rows); got != want {
			t.Fatalf("before: %d browser ratings read, want %d", got, want)
		}
		// bob's reviews were in fact given on LLM-Eval's 0-5: the rule
		// now leaves them out of this 1-5 criterion.
		must(t, db.Gorm.Model(&models.ReviewRating{}).Where("id IN ?", bobIDs).Updates(map[string]any{"lo": 0, "hi": 5}).Error)
		if err := StoredSamplesCurrent(ctx, db, run, nil); !errors.Is(err, ErrSamplesNotStored) {
			t.Errorf("stored per-sample results computed with bob's ratings still current: %v", err)
		}
		after, err := LoadSummary(ctx, db, wsID, runID, Options{})
		must(t, err)
		if got, want := after.Humans.BrowserRatings, len(rows); got != want {
			t.Errorf("after: the stored summary was served: %d browser ratings read, want %d (ann's only)", got, want)
		}
		full, err := BuildWith(ctx, db, wsID, runID, Options{})
		must(t, err)
		if a, f := after.Criteria[0].Pearson.Coef, full.Criteria[0].Pearson.Coef; a != f && !(math.IsNaN(a) && math.IsNaN(f)) {
			t.Errorf("after: Pearson %v, a fresh build %v", a, f)
		}
		if before.Criteria[0].Pearson.Coef == full.Criteria[0].Pearson.Coef {
			t.Errorf("bob's ratings did not move Pearson: the test proves nothing")
		}
		must(t, StoredSamplesCurrent(ctx, db, run, nil))
	})
}
