package models_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestReviewerRatedRowsAsFromEveryReview: the samples one reviewer rates
// now, read by ListReviewerRatedRows from their own reviews, are exactly
// those the review queue counted from every review of the dataset before
// (OnScale, CurrentReviews, the reviewer's key, a rating held), on a mixed
// history: typed names and accounts (one whose email changed, one typed
// name equal to an account's email, an excluded account), ratings
// withdrawn and given again, ratings on another scale, two criteria, and
// another dataset's reviews by the same people.
func TestReviewerRatedRowsAsFromEveryReview(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, ds, _ := reviewDataset(t, db)
		mk := func(name string) (models.Dataset, []models.DatasetRow) {
			t.Helper()
			d := models.Dataset{WorkspaceID: ws.ID, ProjectID: ds.ProjectID, Name: name, Columns: []string{"id", "text"}, RatingColumns: []string{},
				Fields: []evaluator.Field{{Column: "text", Label: "Text"}}}
			var rows []models.DatasetRow
			for i := range 30 {
				rows = append(rows, models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprint(i), Data: map[string]string{"text": fmt.Sprint("t", i)}, Ratings: map[string]*float64{}})
			}
			if err := db.CreateDataset(ctx, &d, rows); err != nil {
				t.Fatal(err)
			}
			stored, err := db.ListDatasetRows(ctx, d.ID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			return d, stored
		}
		main, rows := mk("mixed")
		other, otherRows := mk("other")
		user := func(email string) models.User {
			t.Helper()
			u, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: email, Name: email, Password: "correct horse battery"})
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		rita, rob := user("rita@x.test"), user("rob@x.test")
		type who struct {
			names  []string // the reviewer text its reviews carry, in turn
			userID *int64
		}
		people := []who{{names: []string{"Ann"}}, {names: []string{"Bob"}}, {names: []string{"rita@x.test"}},
			{names: []string{"rita@x.test", "rita.new@x.test"}, userID: &rita.ID}, {names: []string{"rob@x.test"}, userID: &rob.ID}}
		crits := []string{"Coherence", "Fluency"}
		scales := []evaluator.Scale{{Lo: 1, Hi: 5}, {Lo: 0, Hi: 5}}
		rnd := rand.New(rand.NewPCG(45, 89))
		for i := range 600 {
			p := people[rnd.IntN(len(people))]
			d, rs := main, rows
			if i%7 == 0 {
				d, rs = other, otherRows
			}
			sc := scales[0]
			if rnd.IntN(5) == 0 {
				sc = scales[1]
			}
			r := models.ReviewRating{WorkspaceID: ws.ID, DatasetID: d.ID, RowID: rs[rnd.IntN(12)].ID, Criterion: crits[rnd.IntN(2)],
				Reviewer: p.names[rnd.IntN(len(p.names))], UserID: p.userID, Lo: sc.Lo, Hi: sc.Hi, Comment: "seen"}
			if rnd.IntN(4) != 0 {
				r.Score = ptr(float64(1 + rnd.IntN(5)))
			}
			if _, err := db.AddReviewRating(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.SetRatingsExcluded(ctx, ws.ID, rob.ID, true, "owner"); err != nil {
			t.Fatal(err)
		}
		all, err := db.ListCriteriaRatings(ctx, ws.ID, main.ID, crits, 0)
		if err != nil {
			t.Fatal(err)
		}
		nonEmpty := 0
		for _, p := range people {
			for _, crit := range crits {
				for _, sc := range scales {
					// The queue's reading before: every review, then the
					// reviewer's current one on the scale, rated.
					key := models.ReviewerKeyOf(p.names[0], p.userID)
					var want []int64
					for _, r := range models.CurrentReviews(models.OnScale(all[crit], sc)) {
						if r.ReviewerKey() == key && r.Score != nil {
							want = append(want, r.RowID)
						}
					}
					for _, name := range p.names {
						got, err := db.ListReviewerRatedRows(ctx, ws.ID, main.ID, crit, name, p.userID, sc.Lo, sc.Hi)
						if err != nil {
							t.Fatal(err)
						}
						slices.Sort(got)
						slices.Sort(want)
						if !slices.Equal(got, want) {
							t.Errorf("%s (user %v) on %s %v..%v: rated rows %v, every review says %v", name, p.userID != nil, crit, sc.Lo, sc.Hi, got, want)
						}
					}
					if len(want) > 0 {
						nonEmpty++
					}
				}
			}
		}
		if nonEmpty < 15 {
			t.Fatalf("only %d of 20 reviewer, criterion and scale cases rate anything: the history does not test much", nonEmpty)
		}
	})
}
