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

// /compare?criterion= takes a criterion's name as well as its number (QA:
// criterion=Helpful answered 422 "is not a criterion number"): the exact
// name first, else the name in any case; numbers work as before, and an
// unknown name says which criteria run A has.
func TestCompareTakesCriterionName(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rated", 30)
		two := func(r *models.Run) {
			r.RubricSnapshot.Criteria = []evaluator.Criterion{
				{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"},
				{Name: "Helpful", Lo: 1, Hi: 5, HumanColumn: "q"},
			}
		}
		a := env.storedRun(d, "A", noisy(d.human, 0.4, 1), two)
		b := env.storedRun(d, "B", noisy(d.human, 0.8, 2), two)
		chosen := regexp.MustCompile(`<option value="(\d+)" selected>`)
		for _, tc := range []struct {
			query    string
			status   int
			selected string // the criterion number the selector shows chosen
			errText  string
		}{
			{"Helpful", http.StatusOK, "1", ""},
			{"helpful", http.StatusOK, "1", ""},
			{" HELPFUL ", http.StatusOK, "1", ""},
			{"Quality", http.StatusOK, "0", ""},
			{"1", http.StatusOK, "1", ""},
			{"0", http.StatusOK, "0", ""},
			{"", http.StatusOK, "0", ""},
			{"Fluency", http.StatusUnprocessableEntity, "", `“Quality” and “Helpful”`},
			{"7", http.StatusUnprocessableEntity, "", "Criterion number 7 does not exist"},
		} {
			t.Run(tc.query, func(t *testing.T) {
				rec := env.get(fmt.Sprintf("/compare?a=%d&b=%d&criterion=%s", a.ID, b.ID, url.QueryEscape(tc.query)))
				body := html.UnescapeString(rec.Body.String())
				if rec.Code != tc.status {
					t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, body)
				}
				if tc.errText != "" {
					if !strings.Contains(body, tc.errText) {
						t.Errorf("the error lacks %q: %s", tc.errText, body)
					}
					return
				}
				sel := regexp.MustCompile(`(?s)<select id="criterion".*?</select>`).FindString(body)
				m := chosen.FindStringSubmatch(sel)
				if m == nil || m[1] != tc.selected {
					t.Errorf("criterion chosen %v, want %s:\n%s", m, tc.selected, sel)
				}
			})
		}
		// The API reads the same parameter.
		rec := env.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d&criterion=helpful", a.ID, b.ID))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"Helpful"`) {
			t.Errorf("API compare by name: %d %s", rec.Code, rec.Body)
		}
	})
}
