package handlers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// A criterion whose rubric names no human rating column shows no
// agreement; the run page says why and what to do (edit the rubric,
// choose the column, launch again), linking to the rubric's editor. A
// criterion with ratings shows no such help.
func TestRunPageSaysHowToAddHumanRatings(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		cases := []struct {
			name     string
			unmap    bool
			wantHelp bool
		}{
			{"rubric without a human column", true, true},
			{"rubric with human columns", false, false},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				run := env.startRun(d.dataset, tc.name, models.MethodBatchEval, func(r *models.Run) {
					if !tc.unmap {
						return
					}
					for i := range r.RubricSnapshot.Criteria {
						r.RubricSnapshot.Criteria[i].HumanColumn = ""
						r.RubricSnapshot.Criteria[i].AnnotatorColumns = nil
					}
				})
				if got := env.waitRun(run.ID, 60*time.Second); got.Status != models.RunSucceeded {
					t.Fatalf("run %s (%s)", got.Status, got.Error)
				}
				body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				help := strings.Contains(body, `data-testid="no-human-help"`)
				if help != tc.wantHelp {
					t.Fatalf("help shown %v, want %v", help, tc.wantHelp)
				}
				if !tc.wantHelp {
					return
				}
				i := strings.Index(body, `data-testid="no-human-help"`)
				p := body[i : i+strings.Index(body[i:], "</p>")]
				for _, want := range []string{
					fmt.Sprintf(`href="/rubrics/%d/edit"`, d.rubric.ID),
					"Human rating column",
					"launch a new run",
					d.rubric.Criteria[0].Name,
				} {
					if !strings.Contains(p, want) {
						t.Errorf("the help lacks %q:\n%s", want, p)
					}
				}
				if strings.Contains(body, "mapped to this criterion") {
					t.Error("the page still says 'mapped to this criterion'")
				}
			})
		}
	})
}

// TestRunPageExplainsMissingRatingsOnce: a criterion without human
// ratings is explained once, by the help that says what to do; its
// reading line no longer repeats it ("This criterion has no human
// ratings..."; QA). A criterion with ratings keeps its reading.
func TestRunPageExplainsMissingRatingsOnce(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		run := env.startRun(d.dataset, "first unrated", models.MethodBatchEval, func(r *models.Run) {
			r.RubricSnapshot.Criteria[0].HumanColumn = ""
			r.RubricSnapshot.Criteria[0].AnnotatorColumns = nil
		})
		if got := env.waitRun(run.ID, 60*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("run %s (%s)", got.Status, got.Error)
		}
		body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		cards := strings.Split(body, `data-testid="criterion-card"`)[1:]
		if len(cards) < 2 {
			t.Fatalf("%d criterion cards, want at least 2", len(cards))
		}
		unrated, rated := cards[0], cards[1]
		if n := strings.Count(unrated, "cannot be compared with yours") + strings.Count(unrated, "has no human ratings"); n != 1 {
			t.Errorf("the unrated criterion's card explains the missing ratings %d times, want once", n)
		}
		if strings.Contains(unrated, `data-testid="reading"`) {
			t.Error("the unrated criterion still has a reading line")
		}
		if !strings.Contains(rated, `data-testid="reading"`) {
			t.Error("the rated criterion lost its reading line")
		}
	})
}
