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

	"github.com/batcheval/batcheval/models"
)

// TestSharedReportNamesNoReviewer: a share link's page and its downloaded
// report name each browser reviewer among the annotators "reviewer 1",
// "reviewer 2"..., the same number on every criterion, where the
// workspace's own run page names them by account display name or typed name
// (regression: anyone holding the link read "coherent@browser:ed@a.test",
// a reviewer's email, on the shared page, while the shared sample page and
// the missing-value reasons name no reviewer).
func TestSharedReportNamesNoReviewer(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		ed := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		owner := env.sessionCookie(env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner))
		for _, crit := range d.rubric.Criteria[:2] {
			for i := range 6 {
				for _, r := range []struct {
					who  string
					user *int64
				}{{"Zoë <b>typed</b>", nil}, {"ed@a.test", &ed.ID}} {
					v := float64(1 + i%3)
					_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[i].ID,
						Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: r.who, UserID: r.user, RunID: &run.ID, Score: &v, Lo: 1, Hi: 3})
					must(t, err)
				}
			}
		}
		rec := env.send(http.MethodPost, fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}, "", owner)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
		}
		own := env.getAs(fmt.Sprintf("/runs/%d", run.ID), owner).Body.String()
		if !strings.Contains(own, htmlText("@browser:ed")) {
			t.Fatalf("the workspace's run page does not name the reviewer: the test shows nothing")
		}
		c0, c1 := d.rubric.Criteria[0].HumanColumn, d.rubric.Criteria[1].HumanColumn
		for _, page := range []string{link, link + "/report.html"} {
			rec := env.getAs(page) // no session: anyone with the link
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", page, rec.Code)
			}
			body := rec.Body.String()
			for _, name := range []string{"ed@a.test", "Zoë", "typed"} {
				if strings.Contains(body, name) {
					t.Errorf("%s names the reviewer %q to anyone with the link", page, name)
				}
			}
			// Numbered by their order on the page, alike on both criteria.
			for _, want := range []string{c0 + "@browser:reviewer 1, " + c0 + "@browser:reviewer 2", c1 + "@browser:reviewer 1, " + c1 + "@browser:reviewer 2"} {
				if !strings.Contains(body, htmlText(want)) {
					t.Errorf("%s lacks %q", page, want)
				}
			}
		}
	})
}
