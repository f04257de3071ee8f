package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestReviewRatingErrorIsOneSentence: the browser's review form refused a
// rating that is not a number with "The rating must be a number from 1 to
// 3." and one off the scale with "the rating must be a number from 1 to 3"
// (the models' words, lower case, no full stop). Both say the one
// sentence, and the API the same words as its message.
func TestReviewRatingErrorIsOneSentence(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		queue := fmt.Sprintf("/datasets/%d/review", d.dataset.ID)
		place := fmt.Sprintf("%s?criterion=0&i=0&order=disagreement&run=%d&seed=1", queue, run.ID)
		rep, err := report.Build(ctx, env.db, env.ws.ID, run.ID)
		must(t, err)
		crit := d.rubric.Criteria[0]
		first := rep.Criteria[0].Samples[0]
		want := fmt.Sprintf("The rating must be a number from %g to %g.", crit.Lo, crit.Hi)
		problemOf := func(body string) string {
			_, p, _ := strings.Cut(body, `data-testid="flash">`)
			p, _, _ = strings.Cut(p, "<")
			return p
		}
		for _, score := range []string{"three", fmt.Sprint(crit.Hi + 5)} {
			form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(first.RowID)}, "criterion": {crit.Name},
				"back": {place}, "reviewer": {"Ann Lee"}, "score": {score}}
			// The queue comes back with the form as typed and the problem
			// beside it (TestRefusedReviewKeepsWhatWasTyped).
			rec := env.postForm(queue, form)
			if rec.Code != http.StatusUnprocessableEntity {
				t.Fatalf("rating %q: %d", score, rec.Code)
			}
			// Text that is not a number is named as typed, with how to
			// write decimals (review_decimal_comma_test.go), in one sentence.
			wantNow := want
			if score == "three" {
				wantNow = fmt.Sprintf("The rating “three” is not a number (write decimals with a dot or a comma, e.g. %g or %s, and no thousands separators); it must be a number from %g to %g.",
					crit.Lo+0.5, strings.Replace(fmt.Sprint(crit.Lo+0.5), ".", ",", 1), crit.Lo, crit.Hi)
			}
			if got := problemOf(rec.Body.String()); got != escapeText(wantNow) {
				t.Errorf("rating %q: the form says %q, want %q", score, got, wantNow)
			}
		}
		// The API's message is the same words (an API message has no
		// capital and no full stop, as its others).
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@rating.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		rec := a.json(http.MethodPost, fmt.Sprintf("/api/v1/datasets/%d/reviews", d.dataset.ID), tok,
			map[string]any{"run_id": run.ID, "criterion": crit.Name, "row_id": first.RowID, "rating": crit.Hi + 5})
		var e APIError
		must(t, json.Unmarshal(rec.Body.Bytes(), &e))
		if rec.Code != http.StatusUnprocessableEntity || upperFirst(e.Error.Message)+"." != want {
			t.Errorf("API: %d %q, want 422 %q", rec.Code, e.Error.Message, strings.TrimSuffix(strings.ToLower(want[:1])+want[1:], "."))
		}
	})
}
