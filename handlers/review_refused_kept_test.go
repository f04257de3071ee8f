package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRefusedReviewKeepsWhatWasTyped: a review the server refuses (a tag
// over 40 characters, a reason given without agreeing or disagreeing, a
// withdrawal without saying why) came back as a redirect with a message,
// and the rating, the comment, the reason and the tags the reviewer had
// typed were gone. The page the form was sent from (the review queue or
// the sample page) now comes back with 422, the problem beside the form
// and the form holding what was typed; nothing is saved.
func TestRefusedReviewKeepsWhatWasTyped(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	x := env.demoExperiment()
	run := x.batchEval
	crit := run.RubricSnapshot.Criteria[0]
	rows, err := env.db.ListDatasetRows(env.localCtx(), run.DatasetID, 0, 0)
	must(t, err)
	row := rows[1]
	queue := fmt.Sprintf("/datasets/%d/review?criterion=0&i=1&order=disagreement&run=%d&seed=1", run.DatasetID, run.ID)
	sample := fmt.Sprintf("/runs/%d/samples/%d", run.ID, row.ID)
	long := strings.Repeat("t", 41)
	cases := []struct {
		name, back string
		form       url.Values
		problem    string
	}{
		{"a tag too long, from the sample page", sample,
			url.Values{"score": {"2"}, "agree": {"disagree"}, "reason": {"misses the topic shift"}, "comment": {"A long careful comment."}, "tags": {"tone, " + long}},
			"A tag has at most 40 characters."},
		{"a reason without a choice, from the sample page", sample,
			url.Values{"score": {"2"}, "reason": {"misses the topic shift"}, "comment": {"A long careful comment."}, "tags": {"tone"}},
			"A reason goes with agreeing or disagreeing: choose one."},
		{"a rating off the scale, from the sample page", sample,
			url.Values{"score": {"99"}, "comment": {"A long careful comment."}, "tags": {"tone"}},
			"The rating must be a number from"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{"run": {itoa(run.ID)}, "row": {itoa(row.ID)}, "criterion": {crit.Name}, "back": {tc.back}, "reviewer": {"Ann"}}
			for k, v := range tc.form {
				form[k] = v
			}
			rec := env.postForm(fmt.Sprintf("/datasets/%d/review", run.DatasetID), form)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("refused review = %d (Location %q), want 422 with the page again", rec.Code, rec.Header().Get("Location"))
			}
			body := rec.Body.String()
			if !strings.Contains(body, `data-testid="review-problem"`) || !strings.Contains(body, tc.problem) {
				t.Errorf("the page does not say the problem %q beside the form", tc.problem)
			}
			if !strings.Contains(body, ">A long careful comment.</textarea>") {
				t.Errorf("the comment typed is lost")
			}
			if tags := tc.form.Get("tags"); !strings.Contains(body, `value="`+tags+`"`) {
				t.Errorf("the tags typed (%q) are lost", tags)
			}
			if reason := tc.form.Get("reason"); reason != "" && !strings.Contains(body, `value="`+reason+`"`) {
				t.Errorf("the reason typed is lost")
			}
			if tc.form.Get("score") == "2" && !strings.Contains(body, `value="2" checked`) {
				t.Errorf("the rating typed is not chosen in the form")
			}
		})
	}
	t.Run("from the queue", func(t *testing.T) {
		page := env.get(queue).Body.String()
		i := strings.Index(page, `name="row" value="`)
		if i < 0 {
			t.Fatalf("the queue shows no form")
		}
		queued := page[i+len(`name="row" value="`):]
		queued = queued[:strings.Index(queued, `"`)]
		form := url.Values{"run": {itoa(run.ID)}, "row": {queued}, "criterion": {crit.Name}, "back": {queue}, "reviewer": {"Ann"},
			"score": {"2"}, "comment": {"Typed in the queue."}, "tags": {long}}
		rec := env.postForm(fmt.Sprintf("/datasets/%d/review", run.DatasetID), form)
		if rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("refused review = %d, want 422", rec.Code)
		}
		body := rec.Body.String()
		if !strings.Contains(body, ">Typed in the queue.</textarea>") || !strings.Contains(body, `data-testid="review-problem"`) {
			t.Errorf("the queue does not come back with the comment typed and the problem: %s", body[strings.Index(body, "<main"):])
		}
		if !strings.Contains(body, `name="row" value="`+queued+`"`) {
			t.Errorf("the queue came back on another sample than the one reviewed")
		}
	})
	reviews, err := env.db.ListReviewRatings(env.localCtx(), env.ws.ID, run.DatasetID, crit.Name, 0)
	must(t, err)
	if len(reviews) != 0 {
		t.Errorf("%d reviews saved from refused forms", len(reviews))
	}
}
