package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/net/html"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// htmlRefs parses a page and returns its elements' names and every
// href/src/action value.
func htmlRefs(t *testing.T, body string) (tags map[string]int, refs []string) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse HTML: %v", err)
	}
	tags = map[string]int{}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			tags[n.Data]++
			for _, a := range n.Attr {
				switch strings.ToLower(a.Key) {
				case "href", "src", "action", "xlink:href", "srcset", "formaction", "poster", "data":
					refs = append(refs, a.Val)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return tags, refs
}

// getAs sends a GET with the given cookies (none: a logged-out browser).
func (env *testEnv) getAs(path string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Accept", "text/html")
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	env.e.ServeHTTP(rec, req)
	return rec
}

// createShareVia makes a link through the links page, as an editor would,
// and returns its address.
func (env *testEnv) createShareVia(form url.Values) string {
	env.t.Helper()
	rec := env.postForm("/shares", form)
	if rec.Code != http.StatusOK {
		env.t.Fatalf("create share %v: %d %s", form, rec.Code, rec.Body.String())
	}
	body := rec.Body.String()
	i := strings.Index(body, "/s/")
	if i < 0 {
		env.t.Fatalf("no share link shown: %s", body)
	}
	j := strings.IndexAny(body[i:], "<\" ")
	return body[i : i+j]
}

// TestShareLinks: a logged-out visitor with a run's link reads that run's
// report and samples, every link of those pages stays under the share
// link, nothing else opens, and revocation stops it at once.
func TestShareLinks(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		runA := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 60*time.Second)
		runB := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 60*time.Second)
		// Tell the runs apart by name on the pages.
		for _, r := range []struct {
			id   int64
			name string
		}{{runA.ID, "Alpha run"}, {runB.ID, "Bravo run"}} {
			if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", r.id).Update("name", r.name).Error; err != nil {
				t.Fatal(err)
			}
		}
		// Accounts exist, so nothing opens without a session but a link.
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		ownerCookie := env.sessionCookie(owner)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		editorCookie := env.sessionCookie(editor)
		postAs := func(path string, form url.Values, ck *http.Cookie) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
			req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			req.AddCookie(ck)
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			return rec
		}
		rec := postAs("/shares", url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(runA.ID, 10)}, "expires": {"7d"}, "label": {"for the manager"}}, editorCookie)
		if rec.Code != http.StatusOK {
			t.Fatalf("create: %d %s", rec.Code, rec.Body.String())
		}
		body := rec.Body.String()
		i := strings.Index(body, "/s/")
		link := body[i : i+strings.IndexAny(body[i:], "<\" ")]
		token := strings.TrimPrefix(link, "/s/")
		if len(token) != 43 {
			t.Fatalf("token %q: want 43 base64url characters (256 bits)", token)
		}

		// The report, logged out.
		rec = env.getAs(link)
		page := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(page, "Alpha run") || strings.Contains(page, "Bravo run") {
			t.Fatalf("shared report: %d, has A %v, has B %v", rec.Code, strings.Contains(page, "Alpha run"), strings.Contains(page, "Bravo run"))
		}
		for _, want := range []string{`data-testid="correlations"`, `data-testid="scatter"`, `data-testid="sample-row"`, "Pearson r"} {
			if !strings.Contains(page, want) {
				t.Errorf("shared report lacks %s", want)
			}
		}
		if rec.Header().Get("Referrer-Policy") != "no-referrer" || !strings.Contains(rec.Header().Get("Cache-Control"), "no-store") {
			t.Errorf("headers: %v", rec.Header())
		}
		if len(rec.Result().Cookies()) != 0 {
			t.Errorf("the share page set cookies: %v", rec.Result().Cookies())
		}
		checkSharedPage(t, "report", page, link)

		// A sample page reachable from the report, with analyses.
		rows, err := env.db.ListDatasetRows(ctx, runA.DatasetID, 0, 1)
		if err != nil || len(rows) == 0 {
			t.Fatal(err)
		}
		samplePath := fmt.Sprintf("%s/samples/%d", link, rows[0].ID)
		if !strings.Contains(page, samplePath) {
			t.Errorf("the report does not link to %s", samplePath)
		}
		rec = env.getAs(samplePath)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="analysis"`) {
			t.Fatalf("shared sample: %d %.300s", rec.Code, rec.Body.String())
		}
		checkSharedPage(t, "sample", rec.Body.String(), link)

		// The standalone file of the shared run.
		rec = env.getAs(link + "/report.html")
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get(echo.HeaderContentDisposition), "attachment") {
			t.Errorf("shared download: %d %v", rec.Code, rec.Header())
		}

		// Nothing else opens with the link: another workspace's sample, a
		// token of the right shape that is not this one, the dashboard.
		otherWS, err := env.db.CreateWorkspace(ctx, "B", owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		projB := models.Project{WorkspaceID: otherWS.ID, Name: "B's", CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if err := env.db.CreateProject(ctx, &projB); err != nil {
			t.Fatal(err)
		}
		dsB := models.Dataset{WorkspaceID: otherWS.ID, ProjectID: projB.ID, Name: "b", Columns: []string{"text"}, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
		if err := env.db.CreateDataset(ctx, &dsB, []models.DatasetRow{{ExternalID: "secret", Data: map[string]string{"text": "secret"}, Ratings: map[string]*float64{}}}); err != nil {
			t.Fatal(err)
		}
		rsB, err := env.db.ListDatasetRows(ctx, dsB.ID, 0, 1)
		if err != nil || len(rsB) != 1 {
			t.Fatalf("B's rows: %v", err)
		}
		bRow := rsB[0]
		refused := []string{
			fmt.Sprintf("%s/samples/%d", link, bRow.ID+1_000_000),
			"/s/" + strings.Repeat("A", 43),
			"/s/" + token[:42],
		}
		refused = append(refused, fmt.Sprintf("%s/samples/%d", link, bRow.ID))
		for _, p := range refused {
			rec := env.getAs(p)
			if rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "secret") {
				t.Errorf("GET %s with run A's link: %d, want 404", p, rec.Code)
			}
			checkSharedPage(t, "refused", rec.Body.String(), link)
		}
		for _, p := range []string{runURL(runA.ID), runURL(runB.ID), fmt.Sprintf("/runs/%d/report.html", runA.ID), "/shares", "/"} {
			if rec := env.getAs(p); rec.Code != http.StatusSeeOther {
				t.Errorf("GET %s logged out: %d, want a redirect to sign in", p, rec.Code)
			}
		}

		// A signed-in member of another workspace with the link sees the
		// shared report, not their own workspace's navigation.
		outsider := env.createUser(otherWS.ID, "outsider@b.test", models.RoleOwner)
		rec = env.getAs(link, env.sessionCookie(outsider))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Alpha run") {
			t.Errorf("link opened by a signed-in outsider: %d", rec.Code)
		}
		checkSharedPage(t, "report seen signed in", rec.Body.String(), link)

		// The links page: who made it, last opened; then revoke.
		rec = env.getAs("/shares", ownerCookie)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "editor") || strings.Contains(rec.Body.String(), `data-testid="share-last-opened">never`) ||
			!strings.Contains(rec.Body.String(), "for the manager") || strings.Contains(rec.Body.String(), token) {
			t.Errorf("links page: %d %s", rec.Code, rec.Body.String())
		}
		links, _ := env.db.ListShareLinks(ctx, env.ws.ID)
		if len(links) != 1 || links[0].LastOpenedAt == nil || links[0].CreatedBy == nil || *links[0].CreatedBy != editor.ID {
			t.Fatalf("stored links: %+v", links)
		}
		// A viewer cannot revoke; the owner can.
		viewer := env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)
		revoke := fmt.Sprintf("/shares/%d/revoke", links[0].ID)
		if rec := postAs(revoke, nil, env.sessionCookie(viewer)); rec.Code != http.StatusForbidden {
			t.Errorf("viewer revokes: %d", rec.Code)
		}
		if rec := postAs(revoke, nil, ownerCookie); rec.Code != http.StatusSeeOther {
			t.Fatalf("revoke: %d %s", rec.Code, rec.Body.String())
		}
		for _, p := range []string{link, samplePath, link + "/report.html"} {
			rec := env.getAs(p)
			if rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "Alpha run") || !strings.Contains(rec.Body.String(), "does not open anything") {
				t.Errorf("GET %s after revocation: %d, want 404", p, rec.Code)
			}
			checkSharedPage(t, "revoked", rec.Body.String(), link)
		}
		// Both events are in the audit log.
		evs, err := env.db.ListAudit(ctx, env.ws.ID, 0, 50)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		for _, e := range evs {
			seen[e.Action] = e.Actor + " " + e.Target
		}
		if !strings.Contains(seen[models.AuditShareCreated], "editor") || !strings.Contains(seen[models.AuditShareRevoked], "owner") ||
			!strings.Contains(seen[models.AuditShareCreated], fmt.Sprintf("run %d", runA.ID)) {
			t.Errorf("audit: %v", seen)
		}
	})
}

// checkSharedPage asserts a page seen through a share link holds no form,
// no script and no link outside the share link (but its stylesheet and
// in-page anchors).
func checkSharedPage(t *testing.T, what, page, link string) {
	t.Helper()
	tags, refs := htmlRefs(t, page)
	for _, tag := range []string{"form", "script", "input", "button", "iframe"} {
		if tags[tag] > 0 {
			t.Errorf("%s page has %d <%s>", what, tags[tag], tag)
		}
	}
	for _, r := range refs {
		if r == link || strings.HasPrefix(r, link+"/") || strings.HasPrefix(r, link+"?") || strings.HasPrefix(r, "#") ||
			(strings.HasPrefix(r, "/static/") && strings.HasSuffix(r, ".css")) {
			continue
		}
		t.Errorf("%s page links outside the share link: %q", what, r)
	}
	for _, nav := range []string{"nav-members", "workspace-switcher", "sign-out", `href="/runs"`, `href="/judges"`} {
		if strings.Contains(page, nav) {
			t.Errorf("%s page shows dashboard navigation %q", what, nav)
		}
	}
}

// TestShareExperimentAndComparison: the other two kinds of link show their
// report with no way out, and only the shared runs' samples.
func TestShareExperimentAndComparison(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		runA := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 60*time.Second)
		runB := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 60*time.Second)
		exp := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: runA.DatasetID, Name: "Shared experiment"}
		if err := env.db.CreateExperiment(ctx, &exp); err != nil {
			t.Fatal(err)
		}
		for _, r := range []int64{runA.ID, runB.ID} {
			if err := env.db.SetRunExperiment(ctx, env.ws.ID, r, exp.ID); err != nil {
				t.Fatal(err)
			}
		}
		expLink := env.createShareVia(url.Values{"kind": {"experiment"}, "experiment_id": {strconv.FormatInt(exp.ID, 10)}, "expires": {""}})
		rec := env.getAs(expLink)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Shared experiment") || strings.Count(rec.Body.String(), `data-testid="experiment-row"`) != 2 {
			t.Fatalf("shared experiment: %d %.500s", rec.Code, rec.Body.String())
		}
		checkSharedPage(t, "experiment", rec.Body.String(), expLink)
		// The experiment's one-file report, from the link and from the
		// dashboard.
		for _, p := range []string{expLink + "/report.html", fmt.Sprintf("/experiments/%d/report.html", exp.ID)} {
			rec := env.get(p)
			if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get(echo.HeaderContentDisposition), "attachment") {
				t.Fatalf("GET %s: %d %v", p, rec.Code, rec.Header())
			}
			tags := checkStandalone(t, rec.Body.String())
			if strings.Count(rec.Body.String(), `data-testid="experiment-row"`) != 2 || tags["svg"] != 1 {
				t.Errorf("%s: rows or chart missing (tags %v)", p, tags)
			}
		}
		if rec := env.getAs(expLink + "/samples/1"); rec.Code != http.StatusNotFound {
			t.Errorf("experiment link sample page: %d", rec.Code)
		}

		cmpLink := env.createShareVia(url.Values{"kind": {"compare"}, "run_id": {strconv.FormatInt(runA.ID, 10)},
			"other_run_id": {strconv.FormatInt(runB.ID, 10)}, "expires": {"1d"}})
		rec = env.getAs(cmpLink)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="compare-row"`) {
			t.Fatalf("shared comparison: %d %.500s", rec.Code, rec.Body.String())
		}
		checkSharedPage(t, "comparison", rec.Body.String(), cmpLink)
		if rec := env.get(cmpLink + "/report.html"); rec.Code != http.StatusNotFound {
			t.Errorf("comparison download: %d", rec.Code)
		}
		// Query parameters cannot swap the runs.
		runC := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 60*time.Second)
		if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", runC.ID).Update("name", "Charlie run").Error; err != nil {
			t.Fatal(err)
		}
		rec = env.getAs(fmt.Sprintf("%s?a=%d&b=%d", cmpLink, runC.ID, runC.ID))
		if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "Charlie run") {
			t.Errorf("comparison link with ?a=&b=: %d, shows C %v", rec.Code, strings.Contains(rec.Body.String(), "Charlie run"))
		}
		rows, err := env.db.ListDatasetRows(ctx, runA.DatasetID, 0, 1)
		if err != nil || len(rows) == 0 {
			t.Fatal(err)
		}
		rec = env.getAs(fmt.Sprintf("%s/samples/%d", cmpLink, rows[0].ID))
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="analysis"`) {
			t.Errorf("comparison sample: %d", rec.Code)
		}
		checkSharedPage(t, "comparison sample", rec.Body.String(), cmpLink)

		// Runs on different datasets make no comparison, so no link.
		other := env.topicDataset()
		elsewhere := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: other.ID, Name: "elsewhere",
			Method: models.MethodBatchEval, Status: models.RunQueued, Settings: runA.Settings, RubricSnapshot: runA.RubricSnapshot}
		if err := env.db.Gorm.Create(&elsewhere).Error; err != nil {
			t.Fatal(err)
		}
		before, _ := env.db.ListShareLinks(ctx, env.ws.ID)
		rec = env.postForm("/shares", url.Values{"kind": {"compare"}, "run_id": {strconv.FormatInt(runA.ID, 10)},
			"other_run_id": {strconv.FormatInt(elsewhere.ID, 10)}, "expires": {"1d"}})
		after, _ := env.db.ListShareLinks(ctx, env.ws.ID)
		if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "judged different datasets") || len(after) != len(before) {
			t.Errorf("comparison across datasets: %d, %d links before, %d after", rec.Code, len(before), len(after))
		}
		// An expiry not on the list is refused.
		if rec := env.postForm("/shares", url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(runA.ID, 10)}, "expires": {"100y"}}); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("unknown expiry: %d", rec.Code)
		}
	})
}

// TestSharePrincipalPassesNoOtherRule: a share visitor, should one ever
// reach a route of another rule, is refused by every rule but Public.
func TestSharePrincipalPassesNoOtherRule(t *testing.T) {
	h := &Handlers{}
	e := echo.New()
	for _, a := range []Access{SignedIn, Viewer, Editor, Owner} {
		req := httptest.NewRequest(http.MethodGet, "/runs/1", nil)
		link := models.ShareLink{ID: 1, WorkspaceID: 1, Kind: models.ShareRun}
		req = req.WithContext(context.WithValue(req.Context(), principalKey{}, Principal{Kind: ShareVisitor, Workspace: models.Workspace{ID: 1}, Share: &link}))
		rec := httptest.NewRecorder()
		c := e.NewContext(req, rec)
		called := false
		err := h.require(a)(func(echo.Context) error { called = true; return nil })(c)
		var he *echo.HTTPError
		if called || err == nil || !errorAs(err, &he) || he.Code != http.StatusForbidden {
			t.Errorf("rule %s with a share visitor: called %v, err %v", a, called, err)
		}
	}
}

func errorAs(err error, he **echo.HTTPError) bool {
	h, ok := err.(*echo.HTTPError)
	if ok {
		*he = h
	}
	return ok
}

// TestStandaloneReport: one self-contained file, no script, nothing
// fetched from anywhere, analyses folded in <details>, print rules inline.
func TestStandaloneReport(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := env.waitRun(env.launch(env.demo().launchForm("2", "10")), 60*time.Second)
		rec := env.get(fmt.Sprintf("/runs/%d/report.html", run.ID))
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get(echo.HeaderContentType), "text/html") ||
			!strings.Contains(rec.Header().Get(echo.HeaderContentDisposition), "report.html") {
			t.Fatalf("download: %d %v", rec.Code, rec.Header())
		}
		page := rec.Body.String()
		tags := checkStandalone(t, page)
		_, refs := htmlRefs(t, page)
		if tags["svg"] < 2 {
			t.Errorf("%d inline charts", tags["svg"])
		}
		rows, err := env.db.ListDatasetRows(context.Background(), run.DatasetID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(page, `data-testid="standalone-sample"`); got != len(rows) {
			t.Errorf("%d samples in the file, dataset has %d", got, len(rows))
		}
		if len(refs) < len(rows) {
			t.Errorf("%d in-page links for %d samples", len(refs), len(rows))
		}
		scores, err := env.db.ListScores(context.Background(), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Besides each chart's data table and the settings' explanations.
		if got := tags["details"] - strings.Count(page, `<details class="chart-data"`) - strings.Count(page, `data-testid="settings-help"`); got != len(rows)*len(run.RubricSnapshot.Criteria) {
			t.Errorf("%d <details>, want one per sample and criterion (%d)", got, len(rows)*len(run.RubricSnapshot.Criteria))
		}
		for _, s := range scores[:5] {
			if s.Analysis != "" && !strings.Contains(page, html.EscapeString(s.Analysis)) {
				t.Errorf("analysis %q missing", s.Analysis)
			}
		}
	})
}

// checkStandalone asserts a downloaded report is one self-contained file:
// no script, nothing loaded from anywhere, only in-page links that all
// land, the stylesheet with its print rules inline. It returns the tags.
func checkStandalone(t *testing.T, page string) map[string]int {
	t.Helper()
	tags, refs := htmlRefs(t, page)
	if tags["script"] > 0 || tags["link"] > 0 || tags["img"] > 0 || tags["iframe"] > 0 || tags["form"] > 0 {
		t.Errorf("tags: %v", tags)
	}
	for _, r := range refs {
		if !strings.HasPrefix(r, "#") {
			t.Errorf("reference outside the file: %q", r)
		} else if !strings.Contains(page, `id="`+strings.TrimPrefix(r, "#")+`"`) {
			t.Errorf("anchor %s has no target", r)
		}
	}
	if strings.Contains(page, "url(") || strings.Contains(page, "@import") {
		t.Error("the inline stylesheet fetches something")
	}
	if tags["style"] != 1 || !strings.Contains(page, "@media print") || !strings.Contains(page, "break-inside:avoid") {
		t.Error("no inline print stylesheet")
	}
	return tags
}

// TestPrintStylesheet: the live pages' stylesheet keeps charts with their
// headings, rows whole and hides navigation when printed.
func TestPrintStylesheet(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		rec := env.get("/static/app.css")
		css := rec.Body.String()
		i := strings.Index(css, "@media print")
		if rec.Code != http.StatusOK || i < 0 {
			t.Fatalf("no print rules: %d", rec.Code)
		}
		print := css[i:]
		for _, want := range []string{"header.top", "display:none", "svg.chart", "break-inside:avoid", "tr,", "break-after:avoid", "table-header-group"} {
			if !strings.Contains(print, want) {
				t.Errorf("print rules lack %q", want)
			}
		}
	})
}

// TestSharedPagesUseTheMethodsWords: a shared report of a method that
// judges each sample once has no rounds, no batch bias and no batches, as
// its run page has none; a shared BatchEval report keeps them. QA: a
// shared G-Eval sample read "Round 1: 1.29 as Sample1 in batch 1" and its
// report showed a table of rounds with batch bias.
func TestSharedPagesUseTheMethodsWords(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		tests := []struct {
			name        string
			form        url.Values
			wantBatches bool
		}{
			{"G-Eval", d.methodForm("geval", nil), false},
			{"LLM-Eval", d.methodForm("llmeval", nil), false},
			{"BatchEval", d.launchForm("2", "10"), true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				run := env.waitRun(env.launch(tt.form), 60*time.Second)
				if !run.Completed() {
					t.Fatalf("run %s (%s), want it complete", run.Status, run.Error)
				}
				rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 1)
				if err != nil || len(rows) == 0 {
					t.Fatalf("rows: %v (%d)", err, len(rows))
				}
				share := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
				report := env.getAs(share).Body.String()
				sample := env.getAs(fmt.Sprintf("%s/samples/%d", share, rows[0].ID)).Body.String()
				if got := strings.Contains(report, "<h3>Rounds</h3>") || strings.Contains(report, "Batch bias"); got != tt.wantBatches {
					t.Errorf("shared report shows rounds and batch bias: %v, want %v", got, tt.wantBatches)
				}
				if got := strings.Contains(sample, " in batch "); got != tt.wantBatches {
					t.Errorf("shared sample names a batch: %v, want %v", got, tt.wantBatches)
				}
				if got := strings.Contains(sample, "Round 1:"); got != tt.wantBatches {
					t.Errorf("shared sample names a round: %v, want %v", got, tt.wantBatches)
				}
				if !tt.wantBatches && !strings.Contains(sample, "Score: ") {
					t.Errorf("shared sample of a sample-wise method does not show its score as such")
				}
			})
		}
	})
}

// TestUnreadableRateInTheMethodsWords: the unreadable-answer rate counts
// "round scores" only for a method with rounds; a method that judges each
// sample once has scores, on its run page, its shared report and its
// standalone report alike. QA: a G-Eval run read "0 of 6 answered round
// scores".
func TestUnreadableRateInTheMethodsWords(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		tests := []struct {
			name string
			form url.Values
			want string
		}{
			{"G-Eval", d.methodForm("geval", nil), "answered scores ("},
			{"CloserLook", d.methodForm("closerlook", map[string]string{"samples": "2"}), "answered scores ("},
			{"BatchEval", d.launchForm("2", "10"), "answered round scores ("},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				run := env.waitRun(env.launch(tt.form), 60*time.Second)
				if !run.Completed() {
					t.Fatalf("run %s (%s), want it complete", run.Status, run.Error)
				}
				share := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
				pages := map[string]string{
					"run page":          env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String(),
					"shared report":     env.getAs(share).Body.String(),
					"standalone report": env.get(fmt.Sprintf("/runs/%d/report.html", run.ID)).Body.String(),
				}
				for name, body := range pages {
					if !strings.Contains(body, tt.want) {
						i := strings.Index(body, "Unreadable scores:")
						t.Errorf("%s: no %q in %q", name, tt.want, body[max(i, 0):min(max(i, 0)+200, len(body))])
					}
				}
			})
		}
	})
}

// TestSharedComparisonSaysUndefined: an agreement between two runs that
// cannot be measured (one run gave every sample the same score) reads
// "undefined" on the shared comparison, as on the dashboard's compare
// page; it read "—". A measurable one shows its figure.
func TestSharedComparisonSaysUndefined(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		runA := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		runB := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		runC := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		// Run B gave every sample the same score.
		must(t, env.db.Gorm.Exec(`UPDATE run_scores SET score = 3 WHERE run_id = ?`, runB.ID).Error)
		// Its stored report is rebuilt from those scores.
		must(t, env.db.Gorm.Exec(`DELETE FROM run_sample_results WHERE run_id = ?`, runB.ID).Error)
		must(t, env.db.Gorm.Exec(`DELETE FROM run_summaries WHERE run_id = ?`, runB.ID).Error)
		agreement := func(a, b models.Run) string {
			link := env.createShareVia(url.Values{"kind": {"compare"}, "run_id": {strconv.FormatInt(a.ID, 10)},
				"other_run_id": {strconv.FormatInt(b.ID, 10)}, "expires": {"1d"}})
			body := env.getAs(link).Body.String()
			m := regexp.MustCompile(`Between the two runs' final scores.*?<td>Pearson r</td><td class="num"[^>]*>([^<]*)<`).FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("the shared comparison shows no agreement between the runs")
			}
			return m[1]
		}
		if got := agreement(runA, runB); got != "undefined" {
			t.Errorf("agreement with a run of one score: %q, want \"undefined\"", got)
		}
		if got := agreement(runA, runC); got == "undefined" || got == "—" {
			t.Errorf("agreement of two judged runs: %q, want a figure", got)
		}
		// Nor does anything else in the rows of a measurable agreement say
		// "undefined": they showed a 95% interval column reading
		// "undefined" beside Pearson 0.814 over 48 samples, an interval
		// that is never computed for the agreement between two runs.
		link := env.createShareVia(url.Values{"kind": {"compare"}, "run_id": {strconv.FormatInt(runA.ID, 10)},
			"other_run_id": {strconv.FormatInt(runC.ID, 10)}, "expires": {"1d"}})
		body := env.getAs(link).Body.String()
		i := strings.Index(body, "Between the two runs' final scores")
		if i < 0 || !strings.Contains(body[i:], "</table>") {
			t.Fatalf("the shared comparison has no agreement table")
		}
		if table, _, _ := strings.Cut(body[i:], "</table>"); strings.Contains(table, "undefined") {
			t.Errorf("the agreement of two judged runs says \"undefined\": %s", table)
		}
	})
}

// TestSharedExperimentSaysBoldIsNoVerdict: the shared experiment and its
// standalone report have no headline testing the best run's lead, so they
// say that a bold figure is not a verdict. QA: a shared table bolded the
// best run of ten samples, with no word that the runs were tied.
func TestSharedExperimentSaysBoldIsNoVerdict(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		rec := env.postForm(fmt.Sprintf("/projects/%d/experiments", env.project.ID), d.launchForm("1", "10"))
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("launch all: %d %s", rec.Code, rec.Body)
		}
		var exp int64
		if _, err := fmt.Sscanf(rec.Header().Get("Location"), "/experiments/%d", &exp); err != nil {
			t.Fatalf("launch all went to %q", rec.Header().Get("Location"))
		}
		link := env.createShareVia(url.Values{"kind": {"experiment"}, "experiment_id": {strconv.FormatInt(exp, 10)}, "expires": {"7d"}})
		for name, body := range map[string]string{
			"shared experiment": env.getAs(link).Body.String(),
			"standalone report": env.getAs(link + "/report.html").Body.String(),
		} {
			if !strings.Contains(body, "A bold figure is only the highest as displayed: this report does not test whether it is more than chance") {
				t.Errorf("%s: no word that bold is not a verdict", name)
			}
		}
	})
}
