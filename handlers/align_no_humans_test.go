package handlers

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// A run none of whose criteria has a human rating column cannot be
// aligned with the humans: its page does not offer "Align the judge with
// the humans", the alignment page says why and what to do first instead
// of offering "Split and draft", and a posted draft is refused with that
// message (QA: both were offered, and the post failed with "choose one of
// the run's criteria"). A run with ratings keeps the link and the form.
func TestAlignNeedsHumanRatings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rated", 40)
		rubric := env.demo().rubric
		for _, tc := range []struct {
			name      string
			human     string
			wantAlign bool
		}{
			{"no human column", "", false},
			{"human column", "q", true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := env.storedRun(d, tc.name, noisy(d.human, 0.5, 4), func(r *models.Run) {
					r.RubricID = &rubric.ID
					r.RubricSnapshot.Criteria[0].HumanColumn = tc.human
				})
				runPage := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				if got := strings.Contains(runPage, `data-testid="align-link"`); got != tc.wantAlign {
					t.Errorf("run page offers alignment: %v, want %v", got, tc.wantAlign)
				}
				start := env.get(fmt.Sprintf("/runs/%d/align", run.ID))
				if start.Code != http.StatusOK {
					t.Fatalf("alignment page: %d", start.Code)
				}
				body := html.UnescapeString(start.Body.String())
				if got := strings.Contains(body, "Split and draft"); got != tc.wantAlign {
					t.Errorf("alignment page offers Split and draft: %v, want %v", got, tc.wantAlign)
				}
				post := env.postForm(fmt.Sprintf("/runs/%d/align", run.ID), url.Values{"criterion": {"0"}, "seed": {"1"}, "held_out_percent": {"30"}})
				if tc.wantAlign {
					if post.Code != http.StatusSeeOther {
						t.Errorf("draft on a run with ratings: %d %s", post.Code, post.Body)
					}
					return
				}
				if post.Code != http.StatusUnprocessableEntity {
					t.Fatalf("draft on a run without ratings: %d, want 422", post.Code)
				}
				posted := html.UnescapeString(post.Body.String())
				for _, page := range []string{body, posted} {
					for _, want := range []string{
						fmt.Sprintf("Run %d has no human ratings", run.ID),
						"Human rating column",
						fmt.Sprintf(`href="/rubrics/%d/edit"`, rubric.ID),
						"launch a new run",
					} {
						if !strings.Contains(page, want) {
							t.Errorf("the alignment page lacks %q", want)
						}
					}
				}
			})
		}
	})
}
