package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestShareLinksOpenOnlyTheirReport walks every registered route as the
// visitor of a comparison link and of an experiment link (the route
// matrix walks a run's link): the link's own pages show its runs and never
// a third run of the same workspace, a sample of another dataset of the
// workspace is not found, and every route but the public ones refuses the
// visitor. Then each link, and a run's, is revoked through one server
// process and stops at once in another sharing the database, every one of
// its addresses.
func TestShareLinksOpenOnlyTheirReport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		i := func(n int64) string { return strconv.FormatInt(n, 10) }
		// Made while the server is in local mode (the fixture adds accounts).
		third := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 60*time.Second)
		f := newMatrixFixture(t, env)
		otherDS := env.topicDataset()
		for id, name := range map[int64]string{f.run.ID: "Scope run A", f.other.ID: "Scope run B", third.ID: "Scope run C"} {
			must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", id).Update("name", name).Error)
		}
		// A sample of another dataset of the same workspace.
		otherRows, err := env.db.ListDatasetRows(ctx, otherDS.ID, 0, 1)
		must(t, err)
		if otherDS.ID == f.dataset.ID || len(otherRows) == 0 {
			t.Fatalf("want a second dataset with rows (%d, %d rows)", otherDS.ID, len(otherRows))
		}
		// The experiment holds runs A and B, not C.
		must(t, env.db.SetRunExperiment(ctx, env.ws.ID, f.other.ID, f.experiment.ID))
		links := map[string]models.NewShareLink{
			"run":        {WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: f.run.ID},
			"comparison": {WorkspaceID: env.ws.ID, Kind: models.ShareCompare, RunID: f.run.ID, OtherRunID: f.other.ID},
			"experiment": {WorkspaceID: env.ws.ID, Kind: models.ShareExperiment, ExperimentID: f.experiment.ID},
		}
		tokens, ids := map[string]string{}, map[string]int64{}
		for kind, n := range links {
			l, token, err := env.db.CreateShareLink(ctx, n)
			must(t, err)
			tokens[kind], ids[kind] = token, l.ID
		}
		table := map[string]Access{}
		for _, r := range env.h.routes() {
			table[r.Method+" "+r.Path] = r.Access
		}
		send := func(e http.Handler, req *http.Request) *httptest.ResponseRecorder {
			return serveWalk(ctx, e, req)
		}
		for _, kind := range []string{"comparison", "experiment"} {
			token := tokens[kind]
			for _, r := range env.e.Routes() {
				key := r.Method + " " + r.Path
				req, _ := f.request(r.Method, r.Path)
				req.URL.Path = strings.Replace(req.URL.Path, "no-such-link-token", token, 1)
				rec := send(env.e, req)
				body := rec.Body.String()
				switch table[key] {
				case Public:
				case Scraper:
					if rec.Code != http.StatusForbidden {
						t.Errorf("%s as the %s link's visitor: %d, want 403", key, kind, rec.Code)
					}
				case Shared:
					if strings.Contains(body, "Scope run C") {
						t.Errorf("%s as the %s link's visitor shows run C, which it does not share", key, kind)
					}
				default:
					if rec.Code != http.StatusUnauthorized {
						t.Errorf("%s as the %s link's visitor: %d, want 401", key, kind, rec.Code)
					}
				}
			}
			for _, p := range []string{"/s/" + token, "/s/" + token + "?a=" + i(third.ID) + "&b=" + i(third.ID) + "&criterion=0&page=2"} {
				rec := send(env.e, httptest.NewRequest(http.MethodGet, p, nil))
				if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, "Scope run A") || !strings.Contains(body, "Scope run B") || strings.Contains(body, "Scope run C") {
					t.Errorf("GET %s: %d, want runs A and B and never C", p, rec.Code)
				}
			}
			// Only the comparison has sample pages, of its runs' dataset.
			if rec := send(env.e, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/s/%s/samples/%d", token, otherRows[0].ID), nil)); rec.Code != http.StatusNotFound {
				t.Errorf("the %s link, a sample of another dataset of the workspace: %d, want 404", kind, rec.Code)
			}
		}

		// Revoked through this process, every address of each link stops
		// in another process at once (nothing kept in a process's memory).
		_, other := newTestHandlers(t, env.db, env.runner, env.ws, env.sim.URL)
		addresses := func(kind, token string) []string {
			base := "/s/" + token
			switch kind {
			case "run":
				return []string{base, fmt.Sprintf("%s/samples/%d", base, f.rowID), base + "/report.html"}
			case "comparison":
				return []string{base, fmt.Sprintf("%s/samples/%d", base, f.rowID)}
			}
			return []string{base, base + "/report.html"}
		}
		for kind, token := range tokens {
			for _, p := range addresses(kind, token) {
				if rec := send(other, httptest.NewRequest(http.MethodGet, p, nil)); rec.Code != http.StatusOK {
					t.Fatalf("the other process, %s link %s before revoking: %d", kind, p, rec.Code)
				}
			}
			rec := env.send(http.MethodPost, "/shares/"+i(ids[kind])+"/revoke", url.Values{}, "", env.sessionCookie(mustUser(t, env, f.editor.ID)))
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("revoke the %s link: %d %.300s", kind, rec.Code, rec.Body.String())
			}
			for _, p := range addresses(kind, token) {
				for _, head := range []bool{false, true} {
					method := http.MethodGet
					if head {
						method = http.MethodHead
					}
					rec := send(other, httptest.NewRequest(method, p, nil))
					if rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "Scope run") {
						t.Errorf("the other process, revoked %s link, %s %s: %d, want 404 showing nothing", kind, method, p, rec.Code)
					}
				}
			}
		}
	})
}
