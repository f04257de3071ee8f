package models_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestDuplicateDisplayNamesNumberedByFirstReview: two accounts both named
// "Ann" review a dataset. Each is the same annotator key on every
// criterion, whichever reviews a page or a report reads, numbered in the
// order they first reviewed in the workspace: the Ann who reviewed first
// keeps "Ann" when an older account named Ann starts reviewing (it is
// "Ann (2)"), so no one's past reviews change key. A third reviewer
// renamed to "Ann" afterwards is "Ann (3)", and one renamed "Ann (2)" does
// not take the second Ann's key, whatever its id's text sorts like
// ("user:11" before "user:2"). Before, the first two Anns' keys depended
// on which reviews were read (a criterion only one rated named her plain
// "Ann"), and otherwise on the text of their ids; a renamed account took
// "Ann (account)" from the person who had it.
func TestDuplicateDisplayNamesNumberedByFirstReview(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, ds, rows := reviewDataset(t, db)
		// Accounts until a later one's id reads before the first one's
		// ("10" < "9"): the first made is first, whatever the text says.
		mk := func(email, name string) models.User {
			t.Helper()
			u := models.User{Email: email, Name: name, PasswordHash: "x"}
			if err := db.Gorm.Create(&u).Error; err != nil {
				t.Fatal(err)
			}
			return u
		}
		var first, later models.User
		for i := 0; later.ID == 0; i++ {
			u := mk("u"+strconv.Itoa(i)+"@a.test", "filler "+strconv.Itoa(i))
			switch {
			case i > 2000:
				t.Fatal("no two account ids whose text sorts against their order")
			case first.ID == 0 && u.ID%10 != 0 && u.ID%10 >= 2:
				first = u
			case first.ID != 0 && strconv.FormatInt(u.ID, 10) < strconv.FormatInt(first.ID, 10):
				later = u
			}
		}
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(db.Gorm.Model(&models.User{}).Where("id IN ?", []int64{first.ID, later.ID}).Update("name", "Ann").Error)
		bob := mk("bob@a.test", "Bob")
		rate := func(u models.User, crit string, row int, v float64) {
			t.Helper()
			_, err := db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: rows[row].ID, Criterion: crit,
				Reviewer: u.Email, UserID: &u.ID, Score: &v, Lo: 1, Hi: 5})
			must(err)
		}
		// The later-made Ann reviews first (Coherence and Fluency).
		rate(later, "Coherence", 0, 4)
		rate(later, "Fluency", 0, 5)
		keys := func() map[string]map[int64]string { // by criterion, by account
			t.Helper()
			all, err := db.ListDatasetReviews(ctx, ws.ID, ds.ID)
			must(err)
			byCrit := map[string][]models.ReviewRating{}
			for _, r := range all {
				byCrit[r.Criterion] = append(byCrit[r.Criterion], r)
			}
			out := map[string]map[int64]string{}
			for crit, rs := range byCrit {
				_, keyOf := models.BrowserAnnotatorKeys(crit, rs, nil)
				out[crit] = map[int64]string{}
				for _, r := range rs {
					out[crit][*r.UserID] = keyOf[r.ReviewerKey()]
				}
			}
			// A report's read (ratings only) keys them the same.
			byCrit2, err := db.ListCriteriaRatings(ctx, ws.ID, ds.ID, []string{"Coherence", "Fluency"}, 0)
			must(err)
			for crit, rs := range byCrit2 {
				_, keyOf := models.BrowserAnnotatorKeys(crit, rs, nil)
				for _, r := range rs {
					if k := keyOf[r.ReviewerKey()]; k != out[crit][*r.UserID] {
						t.Errorf("%s: the report's read keys account %d %q, the dataset's %q", crit, *r.UserID, k, out[crit][*r.UserID])
					}
				}
			}
			return out
		}
		check := func(when string, want map[string]map[int64]string) {
			t.Helper()
			got := keys()
			for crit, byUser := range want {
				for id, k := range byUser {
					if got[crit][id] != k {
						t.Errorf("%s: %s: account %d is %q, want %q (all: %v)", when, crit, id, got[crit][id], k, got)
					}
				}
			}
		}
		check("one Ann", map[string]map[int64]string{
			"Coherence": {later.ID: "Coherence@browser:Ann"},
			"Fluency":   {later.ID: "Fluency@browser:Ann"},
		})
		// The account made first starts reviewing: she is the second Ann,
		// on every criterion, and the first Ann's key stays.
		rate(first, "Coherence", 2, 2)
		rate(bob, "Coherence", 1, 3)
		for range 3 { // the same keys read again: no map or reader order
			check("two Anns", map[string]map[int64]string{
				"Coherence": {first.ID: "Coherence@browser:Ann (2)", later.ID: "Coherence@browser:Ann", bob.ID: "Coherence@browser:Bob"},
				"Fluency":   {later.ID: "Fluency@browser:Ann"},
			})
		}
		// Bob becomes an Ann too: he is the third, and no one's key moves.
		must(db.Gorm.Model(&models.User{}).Where("id = ?", bob.ID).Update("name", "Ann").Error)
		check("Bob renamed Ann", map[string]map[int64]string{
			"Coherence": {first.ID: "Coherence@browser:Ann (2)", later.ID: "Coherence@browser:Ann", bob.ID: "Coherence@browser:Ann (3)"},
			"Fluency":   {later.ID: "Fluency@browser:Ann"},
		})
		// A display name that reads like a number given is still its own:
		// the second Ann keeps hers, though Bob's id sorts first as text.
		must(db.Gorm.Model(&models.User{}).Where("id = ?", bob.ID).Update("name", "Ann (2)").Error)
		if strconv.FormatInt(bob.ID, 10) > strconv.FormatInt(first.ID, 10) {
			t.Fatalf("the test needs Bob's id (%d) to read before the first Ann's (%d)", bob.ID, first.ID)
		}
		got := keys()["Coherence"]
		if got[first.ID] != "Coherence@browser:Ann (2)" || got[bob.ID] == got[first.ID] || got[later.ID] != "Coherence@browser:Ann" {
			t.Errorf("an account named %q took the second Ann's key: %v", "Ann (2)", got)
		}
	})
}
