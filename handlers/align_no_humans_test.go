package handlers

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
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

// TestAlignStartChoosesAnAlignableCriterion: the start form chose the
// run's first criterion whatever it was; when that one has no human
// ratings its option was both selected and disabled, which a browser
// does not send, so "Split and draft" on the form as shown answered
// "Criterion: choose one of the run's criteria". The form now starts on
// the first criterion with human ratings (a column or annotators' mean).
func TestAlignStartChoosesAnAlignableCriterion(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rated", 12)
		rubric := env.demo().rubric
		option := regexp.MustCompile(`<option value="(\d+)"([^>]*)>`)
		for _, tc := range []struct {
			name     string
			criteria []evaluator.Criterion
			want     string
		}{
			{"first without ratings", []evaluator.Criterion{{Name: "Fluent", Lo: 1, Hi: 5}, {Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}}, "1"},
			{"first annotators' mean", []evaluator.Criterion{{Name: "Fluent", Lo: 1, Hi: 5}, {Name: "Plain", Lo: 1, Hi: 5},
				{Name: "Quality", Lo: 1, Hi: 5, AnnotatorColumns: []string{"q"}}}, "2"},
			{"first with ratings", []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}, {Name: "Fluent", Lo: 1, Hi: 5}}, "0"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := env.storedRun(d, tc.name, d.human, func(r *models.Run) {
					r.RubricID = &rubric.ID
					r.RubricSnapshot.Criteria = tc.criteria
				})
				body := env.get(fmt.Sprintf("/runs/%d/align", run.ID)).Body.String()
				// What a browser sends: the selected option unless disabled.
				sent := ""
				for _, m := range option.FindAllStringSubmatch(body, -1) {
					if strings.Contains(m[2], "selected") && !strings.Contains(m[2], "disabled") {
						sent = m[1]
					}
				}
				if sent != tc.want {
					t.Errorf("the form sends criterion %q, want %q (options %q)", sent, tc.want, option.FindAllString(body, -1))
				}
			})
		}
	})
}
