package report

import (
	"context"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestUsedRatingsKeyFollowsWhoRated: the key of the ratings a stored
// summary was computed with covers who rated by identity, not only the name
// shown. Reviews typed as "ed@a.test" without an account and the same
// reviews by the account ed@a.test read alike, but they are different
// annotators (models.BrowserAnnotatorKeys); a summary stored when an
// account and a typed name were merged into one annotator is not served
// after the fix. On the old code the two keys were equal.
func TestUsedRatingsKeyFollowsWhoRated(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		wsID, runID := synthRun(t, db, 12)
		run, err := db.FindRun(ctx, wsID, runID)
		must(t, err)
		rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(t, err)
		crit := run.RubricSnapshot.Criteria[0]
		var ids []int64
		for _, r := range rows[:3] {
			v := crit.Hi
			rv, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: wsID, DatasetID: run.DatasetID, RowID: r.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: "ed@a.test", Score: &v, Lo: crit.Lo, Hi: crit.Hi})
			must(t, err)
			ids = append(ids, rv.ID)
		}
		choice, err := db.SetRunHumanSource(ctx, wsID, runID, models.HumansBrowser, "tester")
		must(t, err)
		typed, err := usedRatingsKey(ctx, db, run, choice, nil)
		must(t, err)
		ed, err := db.CreateUser(ctx, wsID, models.RoleEditor, models.NewUser{Email: "ed@a.test", Name: "Ed", Password: "a long enough password"})
		must(t, err)
		must(t, db.Gorm.Model(&models.ReviewRating{}).Where("id IN ?", ids).Update("user_id", ed.ID).Error)
		account, err := usedRatingsKey(ctx, db, run, choice, nil)
		must(t, err)
		if typed == account {
			t.Error("the ratings of a typed name and of an account of the same text key the stored summary alike")
		}
	})
}
