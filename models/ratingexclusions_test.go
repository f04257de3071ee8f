package models_test

import (
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRatingExclusions: a removed member's ratings still count and they
// are listed as a rater no longer a member; an owner's exclusion leaves
// their ratings out of what a report reads (HumanRatings) and moves every
// run of the workspace's human ratings version on, so no process keeps a
// report cached with them; counting them again restores them. Someone who
// never rated cannot be excluded.
func TestRatingExclusions(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, ds, rows := reviewDataset(t, db)
		crit := evaluator.Criterion{Name: "Coherence", Lo: 1, Hi: 5}
		user := func(email string) models.User {
			t.Helper()
			u, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: email, Name: email, Password: "correct horse battery"})
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		rita, rob, never := user("rita@x.test"), user("rob@x.test"), user("never@x.test")
		rate := func(u models.User, row int, v float64) {
			t.Helper()
			if _, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: rows[row].ID, Criterion: crit.Name,
				Reviewer: u.Email, UserID: &u.ID, Lo: 1, Hi: 5, Score: ptr(v)}); err != nil {
				t.Fatal(err)
			}
		}
		rate(rita, 0, 1)
		rate(rob, 0, 5)
		rate(rita, 1, 2)
		run := models.Run{WorkspaceID: ws.ID, ProjectID: ds.ProjectID, DatasetID: ds.ID, Name: "r", Method: "batcheval", Status: models.RunSucceeded}
		if err := db.Gorm.Create(&run).Error; err != nil {
			t.Fatal(err)
		}
		human := func(what string, want ...float64) {
			t.Helper()
			hs, err := db.HumanRatings(ctx, ws.ID, ds.ID, crit, models.HumansBrowser, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range want {
				got := hs[i].Score
				if (w < 0) != (got == nil) || (got != nil && *got != w) {
					t.Errorf("%s: row %d's human rating %v, want %v (negative: none)", what, i, fmtp(got), w)
				}
			}
		}
		if _, err := db.RemoveMember(ctx, ws.ID, rita.ID, false); err != nil {
			t.Fatal(err)
		}
		human("removed", 3, 2, -1)
		raters, err := db.ListRaters(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(raters) != 2 || raters[0].User.ID != rob.ID || raters[0].Role != models.RoleEditor || raters[1].User.ID != rita.ID || raters[1].Role != "" || raters[1].Ratings != 2 || raters[1].Excluded != nil {
			t.Fatalf("raters %+v: want Rob (editor), then Rita (no longer a member, 2 ratings, counted)", raters)
		}
		if err := db.SetRatingsExcluded(ctx, ws.ID, rita.ID, true, "owner"); err != nil {
			t.Fatal(err)
		}
		human("excluded", 5, -1, -1)
		var got models.Run
		if err := db.Gorm.First(&got, run.ID).Error; err != nil {
			t.Fatal(err)
		}
		if got.HumansVersion != run.HumansVersion+1 {
			t.Errorf("humans_version %d after the exclusion, want %d", got.HumansVersion, run.HumansVersion+1)
		}
		if ex, err := db.ExcludedRaters(ctx, ws.ID); err != nil || !ex[rita.ID] || ex[rob.ID] {
			t.Errorf("excluded raters %v (%v): want Rita alone", ex, err)
		}
		if err := db.SetRatingsExcluded(ctx, ws.ID, rita.ID, false, "owner"); err != nil {
			t.Fatal(err)
		}
		human("counted again", 3, 2, -1)
		if err := db.SetRatingsExcluded(ctx, ws.ID, never.ID, true, "owner"); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("excluding someone who never rated: %v, want not found", err)
		}
	})
}
