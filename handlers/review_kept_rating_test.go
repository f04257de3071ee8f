package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
)

// TestRatinglessReviewReadsItsSample: a review saved without a rating (a
// comment added later), from the browser's form or the API, keeps the
// reviewer's current rating of the sample; to find it, the save read every
// review of the criterion in the dataset. It now reads the reviews of that
// sample only, and keeps the same rating: the reviewer's latest on the
// criterion's scale, none after a withdrawal, none given on another scale,
// never another reviewer's.
func TestRatinglessReviewReadsItsSample(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		const rows = 40
		d := env.ratedDataset("Kept ratings", rows)
		run := env.storedRun(d, "reviewed", d.human, nil)
		ann := env.createUser(env.ws.ID, "ann@kept.test", models.RoleEditor)
		bob := env.createUser(env.ws.ID, "bob@kept.test", models.RoleEditor)
		_, annToken := env.apiToken(env.ws.ID, ann.ID)
		f := func(v float64) *float64 { return &v }
		review := func(who models.User, row int64, score *float64, lo, hi float64) {
			t.Helper()
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.ds.ID, RowID: row, Criterion: "Quality",
				HumanColumn: "q", Reviewer: who.Email, UserID: &who.ID, RunID: &run.ID, Score: score, Lo: lo, Hi: hi, Comment: "seeded"})
			must(t, err)
		}
		// Both rated the other samples: the reviews a save must not read.
		for i, row := range d.rowIDs[20:] {
			review(ann, row, f(float64(1+i%5)), 1, 5)
			review(bob, row, f(float64(1+(i+2)%5)), 1, 5)
		}
		// Each case is a sample of its own, among the first 20.
		cases := []struct {
			name string
			then func(row int64) // Ann's and Bob's later reviews of the sample
			want *float64        // the rating Ann's comment keeps
		}{
			{"her rating, after someone else's", func(row int64) { review(ann, row, f(3), 1, 5); review(bob, row, f(5), 1, 5) }, f(3)},
			{"her latest rating", func(row int64) { review(ann, row, f(2), 1, 5); review(ann, row, f(4.5), 1, 5) }, f(4.5)},
			{"none after she withdrew it", func(row int64) { review(ann, row, f(2), 1, 5); review(ann, row, nil, 1, 5) }, nil},
			{"none given on another scale", func(row int64) { review(ann, row, f(2), 1, 3) }, nil},
			{"none: someone else's", func(row int64) { review(bob, row, f(2), 1, 5) }, nil},
			{"her rating on the scale, not a later one off it", func(row int64) { review(ann, row, f(4), 1, 5); review(ann, row, f(1), 1, 3) }, f(4)},
		}

		// Rows of reviews read by the request.
		var mu sync.Mutex
		read := 0
		for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
			if g == nil {
				continue
			}
			const hook = "test:count_kept_rating_rows"
			must(t, g.Callback().Query().After("gorm:query").Register(hook, func(tx *gorm.DB) {
				if tx.Statement.Table == "review_ratings" && tx.Statement.Context != nil && tx.Statement.Context.Value(countedRequest{}) != nil {
					mu.Lock()
					read += int(tx.Statement.RowsAffected)
					mu.Unlock()
				}
			}))
			t.Cleanup(func() { _ = g.Callback().Query().Remove(hook) })
		}
		send := func(req *http.Request) (*httptest.ResponseRecorder, int) {
			mu.Lock()
			read = 0
			mu.Unlock()
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req.WithContext(context.WithValue(req.Context(), countedRequest{}, true)))
			mu.Lock()
			defer mu.Unlock()
			return rec, read
		}
		annCookie := env.sessionCookie(ann)
		savers := []struct {
			name string
			save func(row int64) (*httptest.ResponseRecorder, int)
		}{
			{"the review form", func(row int64) (*httptest.ResponseRecorder, int) {
				form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(row)}, "criterion": {"Quality"}, "score": {""},
					"comment": {"a comment, later"}, "back": {fmt.Sprintf("/datasets/%d/review", d.ds.ID)}}
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/datasets/%d/review", d.ds.ID), strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.AddCookie(annCookie)
				return send(req)
			}},
			{"the API", func(row int64) (*httptest.ResponseRecorder, int) {
				body := fmt.Sprintf(`{"run_id": %d, "criterion": "Quality", "row_id": %d, "comment": "a comment, later"}`, run.ID, row)
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/api/v1/datasets/%d/reviews", d.ds.ID), strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+annToken)
				return send(req)
			}},
		}
		next := 0
		for _, s := range savers {
			for _, tc := range cases {
				t.Run(s.name+": "+tc.name, func(t *testing.T) {
					row := d.rowIDs[next]
					next++
					tc.then(row)
					mine, err := env.db.ListRowsCriteriaReviews(ctx, env.ws.ID, d.ds.ID, []string{"Quality"}, []int64{row})
					must(t, err)
					ofSample := len(mine["Quality"])
					rec, n := s.save(row)
					if rec.Code != http.StatusSeeOther && rec.Code != http.StatusCreated {
						t.Fatalf("save: %d %.300s", rec.Code, rec.Body)
					}
					all, err := env.db.ListRowsCriteriaReviews(ctx, env.ws.ID, d.ds.ID, []string{"Quality"}, []int64{row})
					must(t, err)
					saved := all["Quality"][len(all["Quality"])-1]
					if saved.Comment != "a comment, later" || saved.UserID == nil || *saved.UserID != ann.ID {
						t.Fatalf("the last review of the sample is %+v, not Ann's comment", saved)
					}
					if got := fmtRating(saved.Score); got != fmtRating(tc.want) {
						t.Errorf("Ann's comment keeps the rating %s, want %s", got, fmtRating(tc.want))
					}
					if n > ofSample {
						t.Errorf("the save read %d reviews to find Ann's rating of a sample with %d (the dataset has more than %d)", n, ofSample, rows)
					}
				})
			}
		}
	})
}

// fmtRating is a rating as a test message shows it.
func fmtRating(v *float64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}
