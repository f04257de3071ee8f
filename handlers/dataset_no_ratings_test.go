package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A dataset imported without a human rating column says what to do about
// it (put the ratings in a column, upload again and tick "Human rating";
// or rate in the browser after a run), linking to the upload page; one
// with ratings shows their summary and no such help.
func TestDatasetWithoutRatingsSaysHowToAddThem(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		cases := []struct {
			name     string
			form     url.Values
			wantHelp bool
		}{
			{"no rating column", url.Values{"show_1": {"1"}, "label_1": {"Reply"}}, true},
			{"rating column ticked", url.Values{"show_1": {"1"}, "label_1": {"Reply"}, "rating_2": {"1"}}, false},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				token := env.uploadToken("replies.csv", "id,reply,rating\nr1,Yes we ship to Canada.,5\nr2,No.,2\n")
				form := tc.form
				form.Set("token", token)
				form.Set("name", tc.name)
				form.Set("id_column", "id")
				rec := env.postForm(env.mapPath(), form)
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("POST map = %d: %s", rec.Code, rec.Body)
				}
				body := env.get(rec.Header().Get("Location")).Body.String()
				i := strings.Index(body, `data-testid="no-ratings-help"`)
				if (i >= 0) != tc.wantHelp {
					t.Fatalf("help shown %v, want %v: %s", i >= 0, tc.wantHelp, body)
				}
				if !tc.wantHelp {
					if !strings.Contains(body, `data-testid="rating-summary"`) {
						t.Error("the ratings' summary is missing")
					}
					return
				}
				help := body[i : i+strings.Index(body[i:], "</p>")]
				for _, want := range []string{fmt.Sprintf(`href="/projects/%d/datasets/new"`, env.project.ID), "Human rating", "upload it again", "Review samples"} {
					if !strings.Contains(help, want) {
						t.Errorf("the help lacks %q: %s", want, help)
					}
				}
			})
		}
	})
}
