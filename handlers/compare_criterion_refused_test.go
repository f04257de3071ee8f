package handlers

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// A compare address whose runs can be compared but whose criterion= names
// no criterion they have (a typo, a number past the end) is not "These
// runs cannot be compared": the heading asks for a criterion, and the page
// links every criterion both runs judged (by name, as the comparison
// pairs them), keeping the rest of the address (the sample page's row).
func TestCompareUnknownCriterionListsTheSharedOnes(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rated", 12)
		crits := func(names ...string) func(*models.Run) {
			return func(r *models.Run) {
				r.RubricSnapshot.Criteria = nil
				for _, n := range names {
					r.RubricSnapshot.Criteria = append(r.RubricSnapshot.Criteria, evaluator.Criterion{Name: n, Lo: 1, Hi: 5, HumanColumn: "q"})
				}
			}
		}
		a := env.storedRun(d, "A", noisy(d.human, 0.4, 1), crits("Quality", "Fluent"))
		b := env.storedRun(d, "B", noisy(d.human, 0.8, 2), crits("Depth", "fluent ", "Quality"))
		heading := regexp.MustCompile(`<h1>([^<]*)</h1>`)
		list := regexp.MustCompile(`(?s)<ul data-testid="compare-criteria">.*?</ul>`)
		pair := fmt.Sprintf("a=%d&amp;b=%d", a.ID, b.ID)
		row := fmt.Sprintf("&amp;row=%d", d.rowIDs[0])
		for _, tc := range []struct {
			name, path, page, says, rest string
		}{
			{"a name neither has", fmt.Sprintf("/compare?a=%d&b=%d&criterion=Coherence", a.ID, b.ID), "/compare", "Criterion “Coherence” is neither", ""},
			{"a number past the end", fmt.Sprintf("/compare?a=%d&b=%d&criterion=5", a.ID, b.ID), "/compare", "Criterion number 5 does not exist", ""},
			{"one sample, a name neither has", fmt.Sprintf("/compare/sample?a=%d&b=%d&row=%d&criterion=Nope", a.ID, b.ID, d.rowIDs[0]), "/compare/sample",
				"Criterion “Nope” is neither", row},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.get(tc.path)
				body := rec.Body.String()
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d: %.300s", rec.Code, body)
				}
				if m := heading.FindStringSubmatch(body); m == nil || m[1] != "Choose a criterion both runs judged" {
					t.Errorf("heading %q, want %q", m, "Choose a criterion both runs judged")
				}
				if !strings.Contains(body, strings.ReplaceAll(tc.says, `"`, "&#34;")) {
					t.Errorf("the page does not say %q", tc.says)
				}
				ul := list.FindString(body)
				for _, want := range []string{
					fmt.Sprintf(`<a href="%s?%s&amp;criterion=0%s">Quality</a>`, tc.page, pair, tc.rest),
					fmt.Sprintf(`<a href="%s?%s&amp;criterion=1%s">Fluent</a>`, tc.page, pair, tc.rest),
				} {
					if !strings.Contains(ul, want) {
						t.Errorf("criteria list lacks %s: %q", want, ul)
					}
				}
				if strings.Contains(ul, "Depth") {
					t.Errorf("criteria list offers Depth, which run A did not judge: %q", ul)
				}
			})
		}

		// Runs that share no criterion name have none to offer, and say so.
		c := env.storedRun(d, "C", noisy(d.human, 0.8, 3), crits("Depth"))
		body := env.get(fmt.Sprintf("/compare?a=%d&b=%d&criterion=Coherence", a.ID, c.ID)).Body.String()
		if m := heading.FindStringSubmatch(body); m == nil || m[1] != "These runs judged no criterion of the same name" {
			t.Errorf("no shared criterion: heading %q", m)
		}
		if !strings.Contains(body, `data-testid="compare-criteria-none">Run A judged Quality, Fluent; run B judged Depth.`) || list.MatchString(body) {
			t.Errorf("no shared criterion: the page does not name each run's criteria")
		}
	})
}
