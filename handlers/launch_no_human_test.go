package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// The launch form warns, without refusing, when none of the chosen
// criteria has a human rating column (QA: it said nothing, and the run
// could not measure agreement): beside the criteria when the rubric has
// none at all, else in the live estimate when the ticked criteria have
// none, each naming the criteria and how to add a column (the rubric's
// "Human rating column", linked). A criterion without a column is marked
// in the list.
func TestLaunchWarnsWithoutHumanColumns(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		rubric := func(name string, crits ...evaluator.Criterion) models.Rubric {
			r := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: name, Task: "A response to judge.", Criteria: crits}
			if err := env.db.SaveRubric(ctx, &r); err != nil {
				t.Fatal(err)
			}
			return r
		}
		helpful := evaluator.Criterion{Name: "Helpful", Description: "Helps.", Lo: 1, Hi: 5}
		clear := evaluator.Criterion{Name: "Clear", Description: "Reads well.", Lo: 1, Hi: 5}
		rated := evaluator.Criterion{Name: "Overall", Description: "Overall.", Lo: 1, Hi: 5, HumanColumn: "overall"}
		none := rubric("No ratings", helpful, clear)
		mixed := rubric("Mixed", rated, clear)
		form := func(r models.Rubric, criteria ...int) url.Values {
			f := d.launchForm("1", "10")
			f.Set("rubric", strconv.FormatInt(r.ID, 10))
			f.Set("criteria_of", strconv.FormatInt(r.ID, 10))
			f.Set("project_id", strconv.FormatInt(env.project.ID, 10))
			f.Del("criteria")
			for _, k := range criteria {
				f.Add("criteria", strconv.Itoa(k))
			}
			return f
		}
		fieldset := regexp.MustCompile(`(?s)<fieldset class="criteria".*?</fieldset>`)
		for _, tc := range []struct {
			name       string
			r          models.Rubric
			criteria   []int
			besideWarn string // names the warning beside the criteria lists, "" for none
			liveWarn   string // names the estimate's warning lists, "" for none
		}{
			// Said once, beside the criteria, whatever is ticked.
			{"rubric without human columns", none, []int{0, 1}, `“Helpful” and “Clear”`, ""},
			{"one unrated criterion chosen", none, []int{1}, `“Helpful” and “Clear”`, ""},
			{"rated criterion chosen", mixed, []int{0, 1}, "", ""},
			{"only the unrated criterion chosen", mixed, []int{1}, "", `“Clear”`},
			{"demo rubric", d.rubric, []int{0, 1}, "", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				editLink := fmt.Sprintf(`href="/rubrics/%d/edit"`, tc.r.ID)
				check := func(where, part, testid, names string) {
					t.Helper()
					i := strings.Index(part, `data-testid="`+testid+`"`)
					if (i >= 0) != (names != "") {
						t.Fatalf("%s: warning shown %v, want %v:\n%s", where, i >= 0, names != "", part)
					}
					if i < 0 {
						return
					}
					w := part[i : i+strings.Index(part[i:], "</p>")]
					for _, want := range []string{names, "Human rating column", editLink, "cannot measure"} {
						if !strings.Contains(w, want) {
							t.Errorf("%s: the warning lacks %q:\n%s", where, want, w)
						}
					}
				}
				// The form as shown (and shown again after a refused post).
				q := form(tc.r, tc.criteria...)
				page := html.UnescapeString(env.get(fmt.Sprintf("/projects/%d/runs/new?rubric=%d", env.project.ID, tc.r.ID)).Body.String())
				check("form", fieldset.FindString(page), "criteria-no-human", tc.besideWarn)
				// The live estimate of the ticked criteria.
				rec := env.postForm("/runs/estimate", q)
				if rec.Code != http.StatusOK {
					t.Fatalf("estimate: %d", rec.Code)
				}
				check("estimate", html.UnescapeString(rec.Body.String()), "estimate-no-human", tc.liveWarn)
			})
		}
		// The list marks the criterion without a column.
		page := env.get(fmt.Sprintf("/projects/%d/runs/new?rubric=%d", env.project.ID, mixed.ID)).Body.String()
		if !strings.Contains(fieldset.FindString(page), "Clear <span class=\"muted small\">(1 to 5; no human rating column)</span>") {
			t.Errorf("the criteria list does not mark Clear:\n%s", fieldset.FindString(page))
		}
		// A warning, not a refusal: the run launches.
		env.launch(form(none, 0, 1))
	})
}
