package models_test

import (
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRatersCountRatingsHeldNow: the members page's "Ratings" of a person,
// and the removal's "their N browser ratings still count", are the ratings
// they hold now, one per sample and criterion (QA review44: every
// submission was counted, so a sample rated again, or commented on later,
// counted twice, and a withdrawn rating still counted). Someone whose
// every rating was withdrawn is still listed (an owner may exclude what a
// report computed before still counts), with none.
func TestRatersCountRatingsHeldNow(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, ds, rows := reviewDataset(t, db)
		user := func(email string) models.User {
			t.Helper()
			u, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: email, Name: email, Password: "correct horse battery"})
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		review := func(u models.User, row int, criterion string, score *float64, comment string) {
			t.Helper()
			if _, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: rows[row].ID, Criterion: criterion,
				Reviewer: u.Email, UserID: &u.ID, Lo: 1, Hi: 5, Score: score, Comment: comment}); err != nil {
				t.Fatal(err)
			}
		}
		ann, bo, cy := user("ann@x.test"), user("bo@x.test"), user("cy@x.test")
		// Ann: row 0 rated, rated again, then a comment that keeps the
		// rating; row 1 rated then withdrawn; row 0 on a second criterion.
		review(ann, 0, "Coherence", ptr(2), "")
		review(ann, 0, "Coherence", ptr(3), "")
		review(ann, 0, "Coherence", ptr(3), "on second thought, fine")
		review(ann, 1, "Coherence", ptr(4), "")
		review(ann, 1, "Coherence", nil, "withdrawn: misread the sample")
		review(ann, 0, "Fluency", ptr(5), "")
		// Bo: one rating, withdrawn.
		review(bo, 2, "Coherence", ptr(1), "")
		review(bo, 2, "Coherence", nil, "wrong sample")
		// Cy: a comment only, never a rating: not a rater.
		review(cy, 2, "Coherence", nil, "hard to read")
		raters, err := db.ListRaters(ctx, ws.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, r := range raters {
			got[r.User.Email] = r.Ratings
		}
		want := map[string]int64{"ann@x.test": 2, "bo@x.test": 0}
		if len(got) != len(want) {
			t.Errorf("raters %v, want %v", got, want)
		}
		for email, n := range want {
			if g, ok := got[email]; !ok || g != n {
				t.Errorf("%s holds %d ratings (listed %v), want %d", email, g, ok, n)
			}
		}
	})
}
