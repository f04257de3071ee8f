package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestReviewFormReadsDecimalComma: a rating typed on a scale without
// levels reads a decimal comma as every other form of the product does
// ("2,5" is 2.5), and text that is not a number is refused with what was
// typed, the scale and how to write it, storing nothing. The field is a
// text input with a decimal keyboard: a number input sent "" for "2,5",
// and an empty rating keeps the reviewer's previous one (the field's
// markup: TestReviewKeysHelpIsTrue in web).
func TestReviewFormReadsDecimalComma(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.ratedDataset("Comma ratings", 8)
		run := env.storedRun(d, "reviewed", d.human, nil)
		ann := env.createUser(env.ws.ID, "ann@comma.test", models.RoleEditor)
		cookie := env.sessionCookie(ann)
		queue := fmt.Sprintf("/datasets/%d/review", d.ds.ID)
		sample := func(row int64) string { return fmt.Sprintf("/runs/%d/samples/%d", run.ID, row) }
		cases := []struct {
			typed   string
			want    *float64 // stored; nil: refused
			problem string   // on the refused form
		}{
			{"2,5", ptrFloat(2.5), ""},
			{" 4.25 ", ptrFloat(4.25), ""},
			{"3", ptrFloat(3), ""},
			{"lots", nil, "“lots” is not a number"},
			{"1,000", nil, "could be 1000 with a thousands separator or 1.000 with a decimal comma"},
		}
		for i, tc := range cases {
			t.Run(tc.typed, func(t *testing.T) {
				row := d.rowIDs[i]
				form := url.Values{"run": {fmt.Sprint(run.ID)}, "row": {fmt.Sprint(row)}, "criterion": {"Quality"},
					"score": {tc.typed}, "back": {sample(row)}}
				req := httptest.NewRequest(http.MethodPost, queue, strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.AddCookie(cookie)
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				all, err := env.db.ListRowsCriteriaReviews(ctx, env.ws.ID, d.ds.ID, []string{"Quality"}, []int64{row})
				must(t, err)
				if tc.want == nil {
					if rec.Code == http.StatusSeeOther {
						t.Fatalf("%q was saved, want it refused", tc.typed)
					}
					body := rec.Body.String()
					for _, want := range []string{escapeText(tc.problem), "from 1 to 5.", "Not saved yet"} {
						if !strings.Contains(body, want) {
							t.Errorf("refused form lacks %q: %.2000s", want, body)
						}
					}
					if len(all["Quality"]) != 0 {
						t.Errorf("%d reviews stored for a refused rating", len(all["Quality"]))
					}
					return
				}
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("save %q: %d %.500s", tc.typed, rec.Code, rec.Body)
				}
				if n := len(all["Quality"]); n != 1 || fmtRating(all["Quality"][0].Score) != fmtRating(tc.want) {
					t.Errorf("%q stored %d reviews, the last rating %v; want one of %v", tc.typed, n, all["Quality"], *tc.want)
				}
			})
		}
	})
}

func ptrFloat(v float64) *float64 { return &v }
