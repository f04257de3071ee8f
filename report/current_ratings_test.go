package report

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestReportReadsTheCurrentRatingsAsBefore: a report that reads its
// browser ratings itself (no request passed them along) reads, in SQL,
// each reviewer's current review of each sample on the criterion's scale
// up to the choice's cut-off (readCurrentReviews,
// models.ListCurrentRatings), not every review of the dataset
// (readBrowserReviews, the read before); and what it uses is identical:
// the ratings per criterion, their counts and keys, the excluded ones, the
// stored summary's key and the rows' merged human ratings, under both
// browser sources, on a history of 900 reviews by eleven reviewers
// (typed names, accounts, one whose email changed, two sharing a display
// name, an excluded one, a typed name equal to an account's email) with
// overwritten, withdrawn and off-scale ratings, ratings after the cut-off
// and deleted rows. The counts are checked against a reading of every
// whole review by hand too.
func TestReportReadsTheCurrentRatingsAsBefore(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 60)
		run, err := db.FindRun(ctx, wsID, runID)
		must(t, err)
		rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		hist := dbtest.MakeRatingsHistory(t, db, wsID, run.DatasetID, rows, run.RubricSnapshot.Criteria, 46, 900)
		rob, review := hist.Excluded, hist.Review
		rows, err = db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)

		for _, source := range []models.HumanSource{models.HumansBrowser, models.HumansBoth} {
			choice, err := db.SetRunHumanSource(ctx, wsID, runID, source, "tester")
			must(t, err)
			review(60) // after the cut-off: read by neither
			old, err := readBrowserReviews(ctx, db, run, choice.UptoRatingID, choice.UptoRatingID)
			must(t, err)
			cur, err := readCurrentReviews(ctx, db, run, choice.UptoRatingID, false)
			must(t, err)
			count := func(pre *BrowserReviews) (n int) {
				for _, m := range []map[string][]models.ReviewRating{pre.ByName, pre.Excluded} {
					for _, rs := range m {
						n += len(rs)
					}
				}
				return n
			}
			if count(cur) >= count(old) {
				t.Fatalf("%s: read %d reviews, every review up to the cut-off is %d: the history replaces no rating", source, count(cur), count(old))
			}

			useOld, revOld, err := reviewsOfChoice(ctx, db, wsID, run, choice, old)
			must(t, err)
			useNew, revNew, err := reviewsOfChoice(ctx, db, wsID, run, choice, nil)
			must(t, err)
			if !reflect.DeepEqual(useOld, useNew) {
				t.Errorf("%s: the report says it used\n%+v\nwhere every review gave\n%+v", source, useNew, useOld)
			}
			if !reflect.DeepEqual(revOld, revNew) {
				t.Errorf("%s: the report's ratings differ from those every review gave", source)
			}
			keyOld, err := usedRatingsKey(ctx, db, run, choice, old)
			must(t, err)
			keyNew, err := usedRatingsKey(ctx, db, run, choice, nil)
			must(t, err)
			if keyOld != keyNew || keyNew == "" {
				t.Errorf("%s: summary key %q, every review gave %q", source, keyNew, keyOld)
			}
			_, rowsOld, mergedOld, err := applyHumanSource(ctx, db, wsID, run, rows, old)
			must(t, err)
			_, rowsNew, mergedNew, err := applyHumanSource(ctx, db, wsID, run, rows, nil)
			must(t, err)
			if !reflect.DeepEqual(rowsOld, rowsNew) || !reflect.DeepEqual(mergedOld, mergedNew) {
				t.Errorf("%s: the merged human ratings differ from those every review gave", source)
			}

			excludedByHand := 0
			// By hand, from every whole review: each reviewer's latest on
			// the scale up to the cut-off, with a rating, not excluded.
			for i, crit := range run.RubricSnapshot.Criteria {
				all, err := db.ListReviewRatings(ctx, wsID, run.DatasetID, crit.Name, choice.UptoRatingID)
				must(t, err)
				latest := map[string]models.ReviewRating{}
				for _, r := range all {
					if r.Lo != crit.Lo || r.Hi != crit.Hi {
						continue
					}
					k := fmt.Sprint(r.RowID, r.ReviewerKey())
					if l, ok := latest[k]; !ok || r.ID > l.ID {
						latest[k] = r
					}
				}
				want, excluded := 0, 0
				for _, r := range latest {
					switch {
					case r.Score == nil:
					case r.UserID != nil && *r.UserID == rob.ID:
						excluded++
					default:
						want++
					}
				}
				if got := useNew.Criteria[i].Ratings; got != want || want < 10 {
					t.Errorf("%s, %s: %d ratings used, every whole review gives %d", source, crit.Name, got, want)
				}
				excludedByHand += excluded
			}
			if useNew.ExcludedRatings != excludedByHand || excludedByHand == 0 || useNew.ExcludedPeople != 1 {
				t.Errorf("%s: %d excluded ratings by %d people, want %d by 1", source, useNew.ExcludedRatings, useNew.ExcludedPeople, excludedByHand)
			}
		}
	})
}
