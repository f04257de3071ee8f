package models_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// teamRatedByRule counts the dataset's samples the team rated on the
// criterion's scale 1 to 5 from every stored review, by the rule the queue
// states: a reviewer's (an account, else a name typed) latest review of
// the sample holds a rating, and the account is not excluded.
func teamRatedByRule(t *testing.T, db *models.DB, wsID, datasetID int64, criterion string) int {
	t.Helper()
	ctx := context.Background()
	all, err := db.ListDatasetReviews(ctx, wsID, datasetID)
	mustTally(t, err)
	excluded, err := db.ExcludedRaters(ctx, wsID)
	mustTally(t, err)
	type key struct {
		row int64
		who string
	}
	latest := map[key]models.ReviewRating{}
	for _, r := range all {
		if r.Criterion != criterion || r.Lo != 1 || r.Hi != 5 {
			continue
		}
		k := key{row: r.RowID, who: "name:" + r.Reviewer}
		if r.UserID != nil {
			k.who = fmt.Sprint("user:", *r.UserID)
		}
		if old, ok := latest[k]; !ok || r.ID > old.ID {
			latest[k] = r
		}
	}
	rated := map[int64]bool{}
	for _, r := range latest {
		if r.Score != nil && (r.UserID == nil || !excluded[*r.UserID]) {
			rated[r.RowID] = true
		}
	}
	return len(rated)
}

// TestTeamRatedSamplesStaysRightUnderConcurrentChanges: the queue's team
// count, served from memory while the dataset's review version stands
// (reviewperf51), equals the count by the rule after rounds of concurrent
// ratings, withdrawals, deletions of reviews, exclusions and readmissions
// with views among them, and after each of a sequence of changes that each
// move the count (an exclusion, a readmission, a review edited in place or
// deleted, an excluded account deleted, a sample deleted); and views while nothing changed read no review (the handle's count of
// reads stays). Both databases.
func TestTeamRatedSamplesStaysRightUnderConcurrentChanges(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		mustTally(t, err)
		p := models.Project{WorkspaceID: ws.ID, Name: "p"}
		mustTally(t, db.CreateProject(ctx, &p))
		ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "d", Columns: []string{"text"},
			Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
		const samples = 12
		mustTally(t, db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
			for i := range samples {
				if err := put(models.DatasetRow{ExternalID: fmt.Sprint(i), Data: map[string]string{"text": "t"}, Ratings: map[string]*float64{}}); err != nil {
					return err
				}
			}
			return nil
		}))
		rows, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
		mustTally(t, err)
		var users []models.User
		for i := range 3 {
			u, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: fmt.Sprintf("u%d@x.test", i), Name: fmt.Sprint("U", i), Password: "correct horse battery"})
			mustTally(t, err)
			users = append(users, u)
		}
		served := func() int {
			t.Helper()
			n, err := db.TeamRatedSamples(ctx, ws.ID, ds.ID, "q", 1, 5, models.TeamRatedBound)
			mustTally(t, err)
			return n
		}
		check := func(when string) {
			t.Helper()
			want := teamRatedByRule(t, db, ws.ID, ds.ID, "q")
			fresh, err := db.CountTeamRatedSamples(ctx, ws.ID, ds.ID, "q", 1, 5, models.TeamRatedBound)
			mustTally(t, err)
			if got := served(); got != want || fresh != want {
				t.Fatalf("%s: served %d, counted afresh %d, by the rule %d", when, got, fresh, want)
			}
		}
		rate := func(rng *rand.Rand, who int) error {
			r := models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: rows[rng.IntN(samples)].ID, Criterion: "q", Lo: 1, Hi: 5}
			if who < len(users) {
				r.Reviewer, r.UserID = users[who].Email, &users[who].ID
			} else {
				r.Reviewer = fmt.Sprint("guest", who)
			}
			if rng.IntN(4) > 0 {
				v := float64(1 + rng.IntN(5))
				r.Score = &v
			} else {
				r.Comment = "withdrawn"
			}
			_, err := db.AddReviewRating(ctx, r)
			return err
		}
		check("no review yet")
		// Views while nothing changes read the reviews once.
		before := db.TeamRatedCounts()
		for range 5 {
			served()
		}
		if got := db.TeamRatedCounts() - before; got > 1 {
			t.Fatalf("5 views with nothing changed read the reviews %d times, want at most 1", got)
		}
		for round := range 6 {
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for w := range 5 { // raters: three accounts, two guests
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(round), uint64(w)))
					for range 6 {
						if err := rate(rng, w); err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Go(func() { // an owner excluding and readmitting
				rng := rand.New(rand.NewPCG(uint64(round), 99))
				for range 4 {
					u := users[rng.IntN(len(users))]
					if err := db.SetRatingsExcluded(ctx, ws.ID, u.ID, rng.IntN(2) == 0, "owner"); err != nil && models.ErrorCode(err) != models.ENotFound {
						errs <- err
					}
				}
			})
			wg.Go(func() { // reviews deleted
				for range 3 {
					if err := db.Gorm.Exec("DELETE FROM review_ratings WHERE id = (SELECT MIN(id) FROM review_ratings WHERE dataset_id = ? AND score IS NOT NULL)", ds.ID).Error; err != nil {
						errs <- err
					}
				}
			})
			wg.Go(func() { // views among them
				for range 8 {
					if _, err := db.TeamRatedSamples(ctx, ws.ID, ds.ID, "q", 1, 5, models.TeamRatedBound); err != nil {
						errs <- err
					}
				}
			})
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			check(fmt.Sprint("after round ", round))
		}
		// One by one, each change on a criterion only users[2] and a guest
		// rated: each moves the count, and the served count follows.
		solo := func() (served, want int) {
			t.Helper()
			n, err := db.TeamRatedSamples(ctx, ws.ID, ds.ID, "solo", 1, 5, models.TeamRatedBound)
			mustTally(t, err)
			return n, teamRatedByRule(t, db, ws.ID, ds.ID, "solo")
		}
		mustTally(t, db.SetRatingsExcluded(ctx, ws.ID, users[2].ID, false, "owner"))
		three := 3.0
		for i, who := range []int{2, 2, 2, -1} {
			r := models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: rows[i+1].ID, Criterion: "solo", Lo: 1, Hi: 5, Score: &three, Reviewer: "guest"}
			if who >= 0 {
				r.Reviewer, r.UserID = users[who].Email, &users[who].ID
			}
			_, err := db.AddReviewRating(ctx, r)
			mustTally(t, err)
		}
		steps := []struct {
			name string
			do   func() error
			want int
		}{
			{"rated", func() error { return nil }, 4},
			{"excluded", func() error { return db.SetRatingsExcluded(ctx, ws.ID, users[2].ID, true, "owner") }, 1},
			{"readmitted", func() error { return db.SetRatingsExcluded(ctx, ws.ID, users[2].ID, false, "owner") }, 4},
			{"a review edited in place", func() error {
				return db.Gorm.Exec("UPDATE review_ratings SET score = NULL WHERE criterion = 'solo' AND reviewer = 'guest'").Error
			}, 3},
			{"excluded again", func() error { return db.SetRatingsExcluded(ctx, ws.ID, users[2].ID, true, "owner") }, 0},
			{"the excluded account deleted", func() error { return db.Gorm.Exec("DELETE FROM users WHERE id = ?", users[2].ID).Error }, 3},
			{"a review deleted", func() error {
				return db.Gorm.Exec("DELETE FROM review_ratings WHERE criterion = 'solo' AND row_id = ?", rows[1].ID).Error
			}, 2},
			{"a sample deleted", func() error { return db.Gorm.Exec("DELETE FROM dataset_rows WHERE id = ?", rows[2].ID).Error }, 1},
		}
		for _, st := range steps {
			mustTally(t, st.do())
			if got, want := solo(); got != st.want || want != st.want {
				t.Fatalf("%s: served %d, by the rule %d, want %d", st.name, got, want, st.want)
			}
			check(st.name)
		}
	})
}
