package dbtest

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// RatingsHistory is a dataset's browser-rating history made by
// MakeRatingsHistory, for tests that check a reading of the current
// ratings against a reading of every review.
type RatingsHistory struct {
	// Excluded is the account whose ratings an owner excluded.
	Excluded models.User
	// Deleted are the dataset rows deleted with their reviews.
	Deleted []int64
	// Review adds n more reviews of the same kinds (after a cut-off, say).
	Review func(n int)
}

// MakeRatingsHistory gives the dataset's first rows (up to 40) of the
// criteria a history of reviews by eleven reviewers: typed names,
// accounts, one whose email changes after they rated, two accounts
// sharing a display name, a typed name equal to an account's email, and an
// account whose ratings an owner excludes. About one review in six is on
// another scale (0 to 10), one in five withdraws a rating (a comment
// without one), and each sample is reviewed many times, so most ratings
// are overwritten. Then rows 30 to 35 (of the 40) are deleted with their
// reviews (later reviews rate the first 40 rows left). The same seed gives the same history.
func MakeRatingsHistory(t testing.TB, db *models.DB, wsID, datasetID int64, rows []models.DatasetRow, crits []evaluator.Criterion, seed uint64, n int) RatingsHistory {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	user := func(email, name string) models.User {
		t.Helper()
		u, err := db.CreateUser(ctx, wsID, models.RoleEditor, models.NewUser{Email: email, Name: name, Password: "correct horse battery"})
		must(err)
		return u
	}
	rita, rob, sam := user("rita@x.test", "Rita"), user("rob@x.test", "Rob"), user("sam@x.test", "Rita")
	type who struct {
		name   string
		userID *int64
	}
	people := []who{{"Ann", nil}, {"Bob", nil}, {"Cy", nil}, {"Di", nil}, {"Ed", nil}, {"Flo", nil}, {"Gus", nil},
		{"rita@x.test", nil}, {"rita@x.test", &rita.ID}, {"rob@x.test", &rob.ID}, {"sam@x.test", &sam.ID}}
	rated := rows[:min(len(rows), 40)]
	rnd := rand.New(rand.NewPCG(seed, 1))
	h := RatingsHistory{Excluded: rob}
	h.Review = func(n int) {
		t.Helper()
		for range n {
			p := people[rnd.IntN(len(people))]
			crit := crits[rnd.IntN(len(crits))]
			lo, hi := crit.Lo, crit.Hi
			if rnd.IntN(6) == 0 {
				lo, hi = 0, 10 // another scale
			}
			r := models.ReviewRating{WorkspaceID: wsID, DatasetID: datasetID, RowID: rated[rnd.IntN(len(rated))].ID, Criterion: crit.Name,
				HumanColumn: crit.HumanColumn, Reviewer: p.name, UserID: p.userID, Lo: lo, Hi: hi, Comment: "seen"}
			if rnd.IntN(5) != 0 { // else a comment that withdraws a rating
				v := lo + float64(rnd.IntN(int(hi-lo)+1))
				r.Score = &v
			}
			_, err := db.AddReviewRating(ctx, r)
			must(err)
		}
	}
	h.Review(n)
	must(db.Gorm.Model(&models.User{}).Where("id = ?", rita.ID).Update("email", "rita.new@x.test").Error)
	must(db.SetRatingsExcluded(ctx, wsID, rob.ID, true, "owner"))
	// Deleted rows take their reviews with them.
	if len(rated) >= 36 {
		for _, r := range rated[30:36] {
			h.Deleted = append(h.Deleted, r.ID)
		}
		must(db.Gorm.Exec("DELETE FROM review_ratings WHERE row_id IN ?", h.Deleted).Error)
		must(db.Gorm.Exec("DELETE FROM dataset_rows WHERE id IN ?", h.Deleted).Error)
		// Later reviews rate the first 40 rows left.
		left := make([]models.DatasetRow, 0, len(rows))
		for _, r := range rows {
			if !slices.Contains(h.Deleted, r.ID) {
				left = append(left, r)
			}
		}
		rated = left[:min(len(left), 40)]
	}
	return h
}
