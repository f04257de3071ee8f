package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestReviewFormOffersTheWordedMiddle: a rubric's criterion on 0 to 1
// (Topical-Chat's understandability) words its middle ("0.5: partly"),
// and the review form showed that line above radios for 0 and 1 only, so
// a reviewer could not give the rating the form had just explained (the
// API took it). The form now offers the middle too, with no key; a scale
// whose middle is a whole number, or whose middle is not worded, is as
// before.
func TestReviewFormOffersTheWordedMiddle(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("understandable", 6)
		for _, tc := range []struct {
			lo, hi       float64
			middle       string
			want, absent []string
		}{
			{0, 1, "partly", []string{`name="score" value="0"`, `name="score" value="0.5" data-review-key=""`, `name="score" value="1"`, "no key rates 0.5"}, nil},
			{1, 4, "fair", []string{`name="score" value="2.5" data-review-key=""`, `name="score" value="4"`}, nil},
			{1, 5, "fair", []string{`name="score" value="3" data-review-key="3"`}, []string{`value="2.5"`, "no key rates"}},
			{0, 1, "", []string{`name="score" value="1"`}, []string{`value="0.5"`}},
		} {
			t.Run(fmt.Sprintf("%g to %g, middle %q", tc.lo, tc.hi, tc.middle), func(t *testing.T) {
				run := env.storedRun(d, fmt.Sprintf("%g-%g %s", tc.lo, tc.hi, tc.middle), d.human, func(r *models.Run) {
					c := &r.RubricSnapshot.Criteria[0]
					c.Lo, c.Hi = tc.lo, tc.hi
					c.Levels.Low, c.Levels.Middle, c.Levels.High = "no", tc.middle, "yes"
				})
				queue := fmt.Sprintf("/datasets/%d/review?criterion=0&i=0&order=random&run=%d&seed=1", d.ds.ID, run.ID)
				body := env.get(queue).Body.String()
				for _, w := range tc.want {
					if !strings.Contains(body, w) {
						t.Errorf("the form lacks %s", w)
					}
				}
				for _, w := range tc.absent {
					if strings.Contains(body, w) {
						t.Errorf("the form has %s", w)
					}
				}
				if tc.middle == "" || tc.lo != 0 {
					return
				}
				// The middle it offers is saved as given.
				form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(d.rowIDs[0])}, "criterion": {"Quality"},
					"back": {queue}, "score": {"0.5"}, "reviewer": {"Ann"}}
				if rec := env.postForm(fmt.Sprintf("/datasets/%d/review", d.ds.ID), form); rec.Code != http.StatusSeeOther {
					t.Fatalf("rating 0.5: %d", rec.Code)
				}
				all, err := env.db.ListReviewRatings(ctx, env.ws.ID, d.ds.ID, "Quality", 0)
				must(t, err)
				if len(all) != 1 || all[0].Score == nil || *all[0].Score != 0.5 {
					t.Errorf("stored %+v, want one 0.5", all)
				}
			})
		}
	})
}
