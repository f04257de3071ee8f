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

// TestFiguresNameAccountReviewersByDisplayName: ratings an account made in
// the browser are one annotator of the report named by the account's
// display name, "coherent@browser:Edith Tor", never by its email, on the
// run page, the compare page, the CSV and JSON exports and the dataset
// export's column; a share link's run and compare pages and the
// downloaded report (a file sent on) name her neither way ("reviewer 1"). Only the dataset export's
// column of who rated, read by members, gives her email beside her name.
// Before, every figure, export and key said "coherent@browser:edith@a.test".
func TestFiguresNameAccountReviewersByDisplayName(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		a := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		b := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		runLink := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(a.ID, 10)}, "expires": {"7d"}})
		cmpLink := env.createShareVia(url.Values{"kind": {"compare"}, "run_id": {strconv.FormatInt(a.ID, 10)}, "other_run_id": {strconv.FormatInt(b.ID, 10)}, "expires": {"7d"}})
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		crit := d.rubric.Criteria[1] // Coherent, human column "coherent", 1..3
		edith, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleEditor, models.NewUser{Email: "edith@a.test", Name: "Edith Tor", Password: testPassword})
		must(t, err)
		owner := env.sessionCookie(env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner))
		for i := range 6 {
			v := float64(1 + i%3)
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[i].ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: edith.Email, UserID: &edith.ID, RunID: &a.ID, Score: &v, Lo: 1, Hi: 3})
			must(t, err)
		}
		for _, run := range []models.Run{a, b} {
			if rec := env.send(http.MethodPost, fmt.Sprintf("/runs/%d/humans", run.ID), url.Values{"source": {"both"}}, "", owner); rec.Code != http.StatusSeeOther {
				t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
			}
		}
		key := crit.HumanColumn + "@browser:Edith Tor"
		for _, tc := range []struct {
			page, path string
			shared     bool
			want       string // "" : the page need not name the annotators
		}{
			{"run page", fmt.Sprintf("/runs/%d", a.ID), false, htmlText(key)},
			{"compare page", fmt.Sprintf("/compare?a=%d&b=%d", a.ID, b.ID), false, ""},
			// A file that is sent on, numbered as on a share link.
			{"downloaded report", fmt.Sprintf("/runs/%d/report.html", a.ID), false, htmlText(crit.HumanColumn + "@browser:reviewer 1")},
			{"CSV export", fmt.Sprintf("/runs/%d/export.csv", a.ID), false, key},
			{"JSON export", fmt.Sprintf("/runs/%d/export.json", a.ID), false, key},
			{"shared run page", runLink, true, htmlText(crit.HumanColumn + "@browser:reviewer 1")},
			{"shared report", runLink + "/report.html", true, htmlText(crit.HumanColumn + "@browser:reviewer 1")},
			{"shared compare page", cmpLink, true, ""},
		} {
			var rec = env.getAs(tc.path, owner)
			if tc.shared {
				rec = env.getAs(tc.path) // anyone with the link
			}
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: GET %s: %d", tc.page, tc.path, rec.Code)
			}
			body := rec.Body.String()
			if strings.Contains(body, "edith@a.test") {
				i := strings.Index(body, "edith@a.test")
				t.Errorf("%s names the reviewer by email: …%s…", tc.page, body[max(i-120, 0):min(i+40, len(body))])
			}
			if tc.want != "" && !strings.Contains(body, tc.want) {
				i := strings.Index(body, "@browser:")
				t.Errorf("%s lacks %q: …%s", tc.page, tc.want, body[max(i-100, 0):min(max(i, 0)+100, len(body))])
			}
			if tc.shared && strings.Contains(body, "Edith") {
				t.Errorf("%s names the reviewer to anyone with the link", tc.page)
			}
		}
		rec := env.send(http.MethodGet, fmt.Sprintf("/datasets/%d/export.csv", d.dataset.ID), nil, "", owner)
		head, _, _ := strings.Cut(rec.Body.String(), "\n")
		if !strings.Contains(head, key) || strings.Contains(head, "edith@a.test") {
			t.Errorf("dataset export header %q: want the column %q, no email", head, key)
		}
	})
}
