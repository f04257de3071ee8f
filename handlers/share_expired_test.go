package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestShareLinkPastItsEndOpensNothing: a link past its expiry, and a link
// whose run or experiment was moved to the trash, open neither the report
// nor a sample page nor the download, for each kind of link; a link still
// open is the control that shows the addresses work.
func TestShareLinkPastItsEndOpensNothing(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		rows, err := env.db.ListDatasetRows(ctx, x.batchEval.DatasetID, 0, 1)
		must(t, err)
		i := func(n int64) string { return strconv.FormatInt(n, 10) }
		forms := map[string]url.Values{
			"run":        {"kind": {"run"}, "run_id": {i(x.batchEval.ID)}, "expires": {"7d"}},
			"comparison": {"kind": {"compare"}, "run_id": {i(x.batchEval.ID)}, "other_run_id": {i(x.gEval.ID)}, "expires": {"7d"}},
			"experiment": {"kind": {"experiment"}, "experiment_id": {i(x.exp.ID)}, "expires": {"7d"}},
		}
		// The addresses of a link that answer while it is open.
		addresses := func(kind, link string) []string {
			switch kind {
			case "run":
				return []string{link, fmt.Sprintf("%s/samples/%d", link, rows[0].ID), link + "/report.html"}
			case "comparison":
				return []string{link, fmt.Sprintf("%s/samples/%d", link, rows[0].ID)}
			}
			return []string{link, link + "/report.html"}
		}
		open := func(what string, kind, link string, want int) {
			t.Helper()
			for _, p := range addresses(kind, link) {
				rec := env.getAs(p)
				if rec.Code != want {
					t.Errorf("%s %s link, GET %s: %d, want %d", what, kind, p, rec.Code, want)
				}
				if want == http.StatusNotFound && (strings.Contains(rec.Body.String(), "Methods on the") || strings.Contains(rec.Body.String(), "BatchEval &lt;default&gt;")) {
					t.Errorf("%s %s link, GET %s shows the report", what, kind, p)
				}
				// The visitor is told why, in words for someone outside
				// the workspace (QA review44: "run 7 does not exist (or
				// is not in this workspace)", with nothing to do).
				if what == "a trashed object's" {
					body := html.UnescapeString(rec.Body.String())
					wantWhy := map[string]string{"run": "the run it shows was deleted", "comparison": "a run it compares was deleted",
						"experiment": "the experiment it shows was deleted"}[kind]
					for _, w := range []string{wantWhy, "Ask the person who sent you the link"} {
						if !strings.Contains(body, w) {
							t.Errorf("%s %s link, GET %s does not say %q: %.400s", what, kind, p, w, body)
						}
					}
					if strings.Contains(body, "workspace") || strings.Contains(body, "does not exist") {
						t.Errorf("%s %s link, GET %s speaks of a workspace: %.400s", what, kind, p, body)
					}
				}
			}
		}
		for kind, form := range forms {
			live := env.createShareVia(form)
			open("an open", kind, live, http.StatusOK)
			expired := env.createShareVia(form)
			must(t, env.db.Gorm.Model(&models.ShareLink{}).Where("id = (SELECT MAX(id) FROM share_links)").
				Update("expires_at", time.Now().Add(-time.Second)).Error)
			open("an expired", kind, expired, http.StatusNotFound)
			open("an open", kind, live, http.StatusOK)
		}
		// The shared objects in the trash: every link to them stops.
		links := map[string]string{}
		for kind, form := range forms {
			links[kind] = env.createShareVia(form)
		}
		// (The experiment goes to the trash with its runs.)
		if _, _, err := env.db.Trash(ctx, env.ws.ID, models.KindExperiment, x.exp.ID, models.Actor{Label: "test"}); err != nil {
			t.Fatal(err)
		}
		if _, err := env.db.FindRun(ctx, env.ws.ID, x.batchEval.ID); models.ErrorCode(err) != models.ENotFound {
			t.Fatalf("the experiment's run is not in the trash with it: %v", err)
		}
		for kind, link := range links {
			open("a trashed object's", kind, link, http.StatusNotFound)
		}
	})
}
