package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestReviewFormShowsTheCriterion: the review form, in the queue and on the
// sample page, says what the criterion means and what its scale's ends and
// middle stand for, as the run's rubric gives them to the judge, so that a
// reviewer rates what the judge was asked to rate; in blind mode too (it
// says nothing of the judge's answer). Before, the form named the criterion
// and its range only ("Your rating of Engaging (1 to 3)").
func TestReviewFormShowsTheCriterion(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		crit := run.RubricSnapshot.Criteria[0]
		if crit.Description == "" || crit.Levels.Low == "" || crit.Levels.Middle == "" || crit.Levels.High == "" {
			t.Fatalf("the demo's %s has no description or levels: the test proves nothing", crit.Name)
		}
		lo, mid, hi := crit.Lo, (crit.Lo+crit.Hi)/2, crit.Hi
		want := []string{`data-testid="review-description">` + htmlText(crit.Description) + "<",
			fmt.Sprintf("<strong>%g</strong>: %s<", lo, htmlText(crit.Levels.Low)),
			fmt.Sprintf("<strong>%g</strong>: %s<", mid, htmlText(crit.Levels.Middle)),
			fmt.Sprintf("<strong>%g</strong>: %s<", hi, htmlText(crit.Levels.High))}
		rows, err := env.db.ListDatasetRows(t.Context(), d.dataset.ID, 0, 0)
		must(t, err)
		for _, page := range []string{
			fmt.Sprintf("/datasets/%d/review?criterion=0&order=disagreement&run=%d&seed=1", d.dataset.ID, run.ID),           // blind
			fmt.Sprintf("/datasets/%d/review?blind=off&criterion=0&order=disagreement&run=%d&seed=1", d.dataset.ID, run.ID), // judge shown
			fmt.Sprintf("/runs/%d/samples/%d", run.ID, rows[0].ID),
		} {
			rec := env.get(page)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", page, rec.Code)
			}
			body := rec.Body.String()
			i := strings.Index(body, `data-testid="review-scale"`)
			if i < 0 {
				t.Fatalf("%s has no review form", page)
			}
			for _, w := range want {
				if !strings.Contains(body[i:], w) {
					t.Errorf("%s: the form lacks %q", page, w)
				}
			}
		}
	})
}
