package report

import (
	"context"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestUsedRatingsKeyReadsEveryCriterionAtOnce: keying a run's stored
// summary by the browser ratings it reads (usedRatingsKey, on every page
// of a run using browser ratings whose summary is not in memory) reads the
// reviews of all the run's criteria in one query. The old code sent one
// per criterion (two here), so a run of ten criteria sent ten. Keyed
// again, with the proof stored by the first, it reads none (ratings48).
func TestUsedRatingsKeyReadsEveryCriterionAtOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 12)
		run, err := db.FindRun(ctx, wsID, runID)
		must(t, err)
		if len(run.RubricSnapshot.Criteria) < 2 {
			t.Fatalf("%d criteria: the test needs several", len(run.RubricSnapshot.Criteria))
		}
		rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		for _, crit := range run.RubricSnapshot.Criteria {
			for _, r := range rows[:3] {
				v := crit.Lo
				_, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: wsID, DatasetID: run.DatasetID, RowID: r.ID,
					Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "ann", Score: &v, Lo: crit.Lo, Hi: crit.Hi})
				must(t, err)
			}
		}
		choice, err := db.SetRunHumanSource(ctx, wsID, runID, models.HumansBoth, "tester")
		must(t, err)

		var mu sync.Mutex
		reads := 0
		count := func(tx *gorm.DB) {
			// The ratings proof's tallies (models.TallyRatings) read
			// five numbers, not the reviews.
			if q := tx.Statement.SQL.String(); strings.Contains(q, "review_ratings") && !strings.Contains(q, "COUNT(user_id)") {
				mu.Lock()
				reads++
				mu.Unlock()
			}
		}
		for _, g := range []*gorm.DB{db.Gorm, db.Read} {
			if g == nil {
				continue
			}
			// Queries, and the rows read by hand (models.ListCriteriaRatings).
			must(t, g.Callback().Query().After("gorm:query").Register("test:count_reviews", count))
			must(t, g.Callback().Row().After("gorm:row").Register("test:count_reviews", count))
			t.Cleanup(func() {
				_ = g.Callback().Query().Remove("test:count_reviews")
				_ = g.Callback().Row().Remove("test:count_reviews")
			})
		}
		key, err := usedRatingsKey(ctx, db, run, choice, nil)
		must(t, err)
		if key == "" {
			t.Fatal("no key for a run using browser ratings")
		}
		if reads != 1 {
			t.Errorf("keying the summary read the reviews in %d queries, want 1 for %d criteria", reads, len(run.RubricSnapshot.Criteria))
		}
		// Keyed again: the stored proof holds, and no review is read
		// (ratings48).
		reads = 0
		again, err := usedRatingsKey(ctx, db, run, choice, nil)
		must(t, err)
		if again != key || reads != 0 {
			t.Errorf("keyed again: %q in %d reads of the reviews, want %q in none", again, reads, key)
		}
	})
}

// TestReviewsReadEarlierServeOnlyTheirCutOff: browser reviews a request
// read before someone chose the human source again (a later cut-off) are
// not used for the new choice, whose ratings they may lack: the key (and a
// build) read the reviews afresh, and give what they give without them.
func TestReviewsReadEarlierServeOnlyTheirCutOff(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 6)
		run, err := db.FindRun(ctx, wsID, runID)
		must(t, err)
		rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		crit := run.RubricSnapshot.Criteria[0]
		rate := func(r models.DatasetRow) {
			v := crit.Lo
			_, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: wsID, DatasetID: run.DatasetID, RowID: r.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "ann", Score: &v, Lo: crit.Lo, Hi: crit.Hi})
			must(t, err)
		}
		rate(rows[0])
		first, err := db.SetRunHumanSource(ctx, wsID, runID, models.HumansBrowser, "tester")
		must(t, err)
		pre, err := ReadBrowserReviews(ctx, db, run)
		must(t, err)
		rate(rows[1])
		// Read before the later rating: still serves the first choice.
		want, err := usedRatingsKey(ctx, db, run, first, nil)
		must(t, err)
		got, err := usedRatingsKey(ctx, db, run, first, pre)
		must(t, err)
		if got != want {
			t.Errorf("first choice: key from the reviews read %s, read afresh %s", got, want)
		}
		again, err := db.SetRunHumanSource(ctx, wsID, runID, models.HumansBrowser, "tester")
		must(t, err)
		want, err = usedRatingsKey(ctx, db, run, again, nil)
		must(t, err)
		stale, err := usedRatingsKey(ctx, db, run, first, nil)
		must(t, err)
		if want == stale {
			t.Fatal("the later rating does not change the key: the test cannot tell")
		}
		got, err = usedRatingsKey(ctx, db, run, again, pre)
		must(t, err)
		if got != want {
			t.Errorf("chosen again after the reviews were read: key %s, want %s (read afresh, with the later rating)", got, want)
		}
	})
}
