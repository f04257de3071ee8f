package handlers

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReviewsFollowTheAccount: a signed-in reviewer's reviews are theirs by
// account (user id), not by the email stored with each: after the account's
// email changes, its reviews from before and after are one reviewer, named
// by the current email in the pages' review lists and by the account's
// display name (which no email change touches) in the report's
// annotators and the dataset export's column; one reviewer in
// the API's list and "you rated N". A review without a user id (a name
// typed without accounts) stays keyed by that name. On the old code the
// account was two annotators (ed@ and ed.new@), two export columns, and
// its queue said it had rated 2 of its 3 samples.
func TestReviewsFollowTheAccount(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		crit := d.rubric.Criteria[1] // Coherent, human column "coherent", 1..3
		ed := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		rate := func(who string, userID *int64, row int, score float64) {
			t.Helper()
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[row].ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: who, UserID: userID, RunID: &run.ID, Score: &score, Lo: 1, Hi: 3})
			must(t, err)
		}
		rate("Ann", nil, 0, 1)
		rate("Ann", nil, 1, 2)
		rate("ed@a.test", &ed.ID, 0, 3)
		rate("ed@a.test", &ed.ID, 2, 3) // rated only under the old email
		must(t, env.db.Gorm.Model(&models.User{}).Where("id = ?", ed.ID).Update("email", "ed.new@a.test").Error)
		rate("ed.new@a.test", &ed.ID, 1, 2)
		rate("ed.new@a.test", &ed.ID, 0, 2) // the account's current review of sample 0

		all, err := env.db.ListDatasetReviews(ctx, env.ws.ID, d.dataset.ID)
		must(t, err)
		for _, r := range all {
			if r.UserID != nil && r.Reviewer != "ed.new@a.test" {
				t.Errorf("review %d by the account is named %q, want its current email", r.ID, r.Reviewer)
			}
		}

		humans, err := env.db.HumanRatings(ctx, env.ws.ID, d.dataset.ID, crit, models.HumansBrowser, 0)
		must(t, err)
		keys := map[string]bool{}
		for _, h := range humans {
			for k := range h.Annotators {
				keys[k] = true
			}
		}
		var got []string
		for k := range keys {
			got = append(got, k)
		}
		sort.Strings(got)
		if want := []string{"coherent@browser:Ann", "coherent@browser:ed"}; !slices.Equal(got, want) {
			t.Errorf("annotators %q, want %q", got, want)
		}
		if h := humans[0]; h.Annotators["coherent@browser:ed"] != 2 || h.Score == nil || *h.Score != 1.5 {
			t.Errorf("sample 0: %+v, want the account's current 2 beside Ann's 1 (mean 1.5)", h)
		}

		// With accounts, local mode is over: the account reads the export.
		rec := env.send(http.MethodGet, fmt.Sprintf("/datasets/%d/export.csv", d.dataset.ID), nil, "", env.sessionCookie(ed))
		recs, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
		if err != nil || len(recs) != len(rows)+1 {
			t.Fatalf("export: %d records, %v", len(recs), err)
		}
		if slices.Contains(recs[0], "coherent@browser:ed@a.test") || slices.Contains(recs[0], "coherent@browser:ed.new@a.test") {
			t.Errorf("export header %q has a column named by the account's email", recs[0])
		}
		if i := slices.Index(recs[0], "coherent@browser:ed"); i < 0 {
			t.Errorf("export header %q lacks the account's column", recs[0])
		} else if recs[1][i] != "2" || recs[2][i] != "2" || recs[3][i] != "3" {
			t.Errorf("account's column: %q, %q, %q; want 2, 2, 3", recs[1][i], recs[2][i], recs[3][i])
		}

		queue := fmt.Sprintf("/datasets/%d/review?criterion=1&i=0&order=random&run=%d&seed=1", d.dataset.ID, run.ID)
		body := env.send(http.MethodGet, queue, nil, "", env.sessionCookie(ed)).Body.String()
		if !strings.Contains(body, `data-testid="review-rated">3<`) {
			t.Errorf("the account's queue: want 3 rated (before and after the change of email):\n%s", body)
		}
	})
}
