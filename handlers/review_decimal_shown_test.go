package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestReviewFormShowsTheReviewersDecimalRating (teamtry48): on a scale
// rated with buttons (1 to 3), a rating between them (2.5, typed with a
// decimal comma, or 2.25 sent through the API) was saved and counted but
// the form came back with no button checked: the reviewer could not see
// their own rating in the queue or on the sample page, and a save picking
// a button replaced it unseen. The form now offers the saved rating as a
// choice of its own, checked (no key rates it); a rating that is one of
// the buttons checks that button, as before, and a withdrawn one checks
// nothing.
func TestReviewFormShowsTheReviewersDecimalRating(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("decimal", 4)
		run := env.storedRun(d, "1 to 3", d.human, func(r *models.Run) {
			c := &r.RubricSnapshot.Criteria[0]
			c.Lo, c.Hi = 1, 3
		})
		row := d.rowIDs[0]
		editor := env.sessionCookie(env.createUser(env.ws.ID, "ann@decimal48.test", models.RoleEditor))
		queue := fmt.Sprintf("/datasets/%d/review?criterion=0&i=0&order=random&run=%d&seed=1&sample=%d", d.ds.ID, run.ID, row)
		samplePage := fmt.Sprintf("/runs/%d/samples/%d", run.ID, row)
		rate := func(score string, withdraw bool) {
			t.Helper()
			form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(row)}, "criterion": {"Quality"},
				"back": {queue}, "score": {score}}
			if withdraw {
				form.Set("clear_rating", "on")
				form.Set("comment", "rated the wrong sample")
			}
			if rec := env.send(http.MethodPost, fmt.Sprintf("/datasets/%d/review", d.ds.ID), form, "", editor); rec.Code != http.StatusSeeOther {
				t.Fatalf("rating %q: %d %.500s", score, rec.Code, rec.Body)
			}
		}
		for _, tc := range []struct {
			name     string
			score    string
			withdraw bool
			checked  string   // the checked choice's value; "" none
			choices  []string // every choice the form offers, in order
		}{
			{"a decimal comma between two buttons", "2,5", false, "2.5", []string{"1", "2", "2.5", "3"}},
			{"a quarter", "2.25", false, "2.25", []string{"1", "2", "2.25", "3"}},
			{"a button's rating, as before", "3", false, "3", []string{"1", "2", "3"}},
			{"the low end with decimals", "1.0", false, "1", []string{"1", "2", "3"}},
			{"withdrawn", "", true, "", []string{"1", "2", "3"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				rate(tc.score, tc.withdraw)
				for _, path := range []string{queue, samplePage} {
					rec := env.send(http.MethodGet, path, nil, "", editor)
					body := rec.Body.String()
					if rec.Code != http.StatusOK {
						t.Fatalf("GET %s = %d", path, rec.Code)
					}
					var got []string
					checked := ""
					for _, part := range strings.Split(body, `<input type="radio" name="score" value="`)[1:] {
						v, rest, _ := strings.Cut(part, `"`)
						got = append(got, v)
						tag, _, _ := strings.Cut(rest, ">")
						if strings.Contains(tag, " checked") {
							if checked != "" {
								t.Errorf("%s: two choices checked, %s and %s", path, checked, v)
							}
							checked = v
						}
					}
					if strings.Join(got, " ") != strings.Join(tc.choices, " ") {
						t.Errorf("%s offers %q, want %q", path, got, tc.choices)
					}
					if checked != tc.checked {
						t.Errorf("%s checks %q, want %q", path, checked, tc.checked)
					}
				}
			})
		}
	})
}
