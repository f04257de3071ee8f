package report

import (
	"context"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// readBrowserReviews is how ReadBrowserReviews read a run's browser
// reviews before reviews47, kept as the tests' reference: every review of
// the run's dataset on each criterion whose human scale the run can say
// (with an id up to only, when only > 0), the ratings since replaced,
// withdrawn or given on another scale among them, as read under the
// cut-off upto.
func readBrowserReviews(ctx context.Context, db *models.DB, run models.Run, upto, only int64) (*BrowserReviews, error) {
	all, refused, err := db.RunHumanScales(ctx, run)
	if err != nil {
		return nil, err
	}
	pre := &BrowserReviews{runID: run.ID, upto: upto, Scales: make([]*evaluator.Scale, len(all)), Refused: refused}
	var names []string
	for i, crit := range run.RubricSnapshot.Criteria {
		if refused[i] != nil {
			continue
		}
		pre.Scales[i] = &all[i]
		names = append(names, crit.Name)
	}
	if pre.ByName, err = db.ListCriteriaRatings(ctx, run.WorkspaceID, run.DatasetID, names, only); err != nil {
		return nil, err
	}
	excluded, err := db.ExcludedRaters(ctx, run.WorkspaceID)
	if err != nil || len(excluded) == 0 {
		return pre, err
	}
	pre.Excluded = map[string][]models.ReviewRating{}
	for name, rs := range pre.ByName {
		kept, _ := models.WithoutExcluded(rs, excluded)
		if len(kept) == len(rs) {
			continue
		}
		for _, r := range rs {
			if r.UserID != nil && excluded[*r.UserID] {
				pre.Excluded[name] = append(pre.Excluded[name], r)
			}
		}
		pre.ByName[name] = kept
	}
	return pre, nil
}
