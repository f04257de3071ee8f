package handlers

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestReportKeepsAnnotatorsWhoReadAlikeApart: an account reviewing as
// ed@a.test (display name "ed", which reports name it by) and a reviewer
// who typed "ed" as their name without an account (before the workspace had accounts) are two annotators in the
// downloaded report, the shared report and the dataset's export: the
// human ceiling counts three annotators (Ann, the account, the typed name),
// the report lists the typed name apart, and the export writes two columns.
// On the old code the two were merged by the name shown: two annotators in
// the ceiling, one export column holding whichever rating came last.
func TestReportKeepsAnnotatorsWhoReadAlikeApart(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		crit := d.rubric.Criteria[1] // Coherent, human column "coherent", 1..3
		ed := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		owner := env.sessionCookie(env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner))
		for i := range 6 {
			for _, r := range []struct {
				who   string
				user  *int64
				score int
			}{{"Ann", nil, 1 + i%3}, {"ed", nil, 1 + (i+1)%3}, {"ed@a.test", &ed.ID, 3 - i%3}} {
				v := float64(r.score)
				_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[i].ID,
					Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: r.who, UserID: r.user, RunID: &run.ID, Score: &v, Lo: 1, Hi: 3})
				must(t, err)
			}
		}
		rec := env.send(http.MethodPost, fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"browser"}}, "", owner)
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
		}
		for _, page := range []string{fmt.Sprintf("/runs/%d", run.ID), fmt.Sprintf("/runs/%d/report.html", run.ID), link, link + "/report.html"} {
			rec := env.getAs(page, owner)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s: %d", page, rec.Code)
			}
			if body := rec.Body.String(); !strings.Contains(body, "<dt>Annotators</dt><dd>3</dd>") {
				t.Errorf("%s: want a human ceiling over 3 annotators", page)
			}
		}
		// What produced the figures names the annotators, the typed name
		// apart from the account.
		annotators := "Coherent=coherent (annotators coherent@browser:Ann, coherent@browser:ed, coherent@browser:ed (typed name))"
		if body := env.getAs(fmt.Sprintf("/runs/%d", run.ID), owner).Body.String(); !strings.Contains(body, htmlText(annotators)) {
			t.Errorf("run page lacks %q", annotators)
		}

		rec = env.send(http.MethodGet, fmt.Sprintf("/datasets/%d/export.csv", d.dataset.ID), nil, "", owner)
		recs, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
		if err != nil || len(recs) != len(rows)+1 {
			t.Fatalf("export: %d records, %v", len(recs), err)
		}
		for col, want := range map[string]string{"coherent@browser:ed": "3", "coherent@browser:ed (typed name)": "2"} {
			if i := slices.Index(recs[0], col); i < 0 {
				t.Errorf("export header %q lacks %q", recs[0], col)
			} else if recs[1][i] != want {
				t.Errorf("export %q of the first sample: %q, want %s", col, recs[1][i], want)
			}
		}
	})
}

// htmlText is s as templ writes it in a page's text.
func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}
