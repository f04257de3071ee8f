package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRunPageCountsWithdrawalsNotInReport: a reviewer rated a sample, the
// report was recomputed with the browser ratings, then the reviewer
// withdrew the rating. The run page kept saying nothing was pending,
// while its report still counted the withdrawn rating (reviewer40). It
// now says the withdrawal still counts until the next recompute, and
// stops saying so once recomputed.
func TestRunPageCountsWithdrawalsNotInReport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 2)
		must(t, err)
		ann := &http.Cookie{Name: reviewerCookie, Value: "Ann"}
		queue := fmt.Sprintf("/datasets/%d/review", d.dataset.ID)
		review := func(row int64, extra url.Values) {
			t.Helper()
			f := url.Values{"run": {strconv.FormatInt(run.ID, 10)}, "criterion": {run.RubricSnapshot.Criteria[0].Name},
				"row": {strconv.FormatInt(row, 10)}, "back": {queue}}
			for k, v := range extra {
				f[k] = v
			}
			if rec := env.send(http.MethodPost, queue, f, "", ann); rec.Code != http.StatusSeeOther {
				t.Fatalf("review %v: %d", extra, rec.Code)
			}
		}
		recompute := func() {
			t.Helper()
			if rec := env.postForm(fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}); rec.Code != http.StatusSeeOther {
				t.Fatalf("recompute: %d", rec.Code)
			}
		}
		withdraw := url.Values{"clear_rating": {"on"}, "comment": {"x"}}
		for _, step := range []struct {
			name            string
			do              func()
			pending, counts string // "" when the page must not say it
		}{
			{"rated", func() { review(rows[0].ID, url.Values{"score": {"2"}}) }, "1 browser rating is not in it yet", ""},
			{"recomputed", recompute, "", ""},
			{"withdrawn", func() { review(rows[0].ID, withdraw) }, "", "1 withdrawn rating still counts until you recompute"},
			{"another rated then withdrawn", func() {
				review(rows[1].ID, url.Values{"score": {"3"}})
				review(rows[1].ID, withdraw) // the report never read it
			}, "", "1 withdrawn rating still counts until you recompute"},
			{"recomputed again", recompute, "", ""},
		} {
			step.do()
			body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
			if i := strings.Index(body, `data-testid="human-source"`); i >= 0 {
				body = body[i:] // the panel, for a short message
			}
			for _, c := range []struct{ testid, want string }{{"human-source-pending", step.pending}, {"human-source-withdrawn", step.counts}} {
				has := strings.Contains(body, `data-testid="`+c.testid+`"`)
				switch {
				case c.want == "" && has:
					t.Errorf("%s: the run page says %s:\n%s", step.name, c.testid, pageText(body))
				case c.want != "" && !strings.Contains(pageText(body), c.want):
					t.Errorf("%s: the run page does not say %q:\n%s", step.name, c.want, pageText(body))
				}
			}
		}
	})
}
