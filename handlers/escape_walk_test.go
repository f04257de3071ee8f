package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/batcheval/batcheval/models"
)

// hostileText is typed or uploaded text that breaks out of an attribute
// and opens an element, and reads as a script address where a link takes
// it.
const hostileText = `javascript:alert(1)//"'><i>injected</i>`

// TestPagesEscapeUntrustedText puts hostileText in everything people
// type or upload, or the judge writes, that the pages show: the names of
// the workspace, its people, projects, datasets, rubrics, judges, runs and
// experiments, a share link's label, dataset cells and sample ids, the
// judge's analyses, and a reviewer's name, reason, comment and tags. Then
// it reads every HTML page of the route table as the owner, and the shared
// run's pages and download with the link. No page may hold the text's
// element, nor an address (href, src, action) that is a script.
func TestPagesEscapeUntrustedText(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		f := newMatrixFixture(t, env)
		_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: f.run.ID, Label: hostileText})
		must(t, err)
		for _, table := range []string{"runs", "datasets", "rubrics", "judges", "experiments", "projects", "workspaces", "users"} {
			must(t, env.db.Gorm.Table(table).Where("1 = 1").Update("name", hostileText).Error)
		}
		must(t, env.db.Gorm.Table("run_scores").Where("1 = 1").Update("analysis", hostileText).Error)
		rows, err := env.db.ListDatasetRows(ctx, f.dataset.ID, 0, 0)
		must(t, err)
		for _, r := range rows {
			for k := range r.Data {
				r.Data[k] = hostileText
			}
			r.ExternalID = hostileText + strconv.Itoa(r.Position)
			must(t, env.db.Gorm.Model(&r).Select("external_id", "data").Updates(&r).Error)
		}
		for _, r := range rows[:3] {
			crit := f.rubric.Criteria[0]
			v := 2.0
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: f.dataset.ID, RowID: r.ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: hostileText, RunID: &f.run.ID, Score: &v, Lo: 1, Hi: 3,
				Comment: hostileText, Reason: hostileText, Agree: new(true), Tags: []string{"<i>tag</i>"}})
			must(t, err)
		}
		owner := env.sessionCookie(mustUser(t, env, f.owner.ID))
		shown := 0 // pages that show the text, escaped
		check := func(path string, rec *httptest.ResponseRecorder) {
			t.Helper()
			if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
				return
			}
			body := rec.Body.String()
			if strings.Contains(body, "&lt;i&gt;injected") {
				shown++
			}
			if i := strings.Index(body, "<i>"); i >= 0 {
				t.Errorf("%s holds the text's element unescaped: %.200q", path, body[max(0, i-120):])
			}
			doc, err := html.Parse(strings.NewReader(body))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			var walk func(n *html.Node)
			walk = func(n *html.Node) {
				for _, a := range n.Attr {
					switch a.Key {
					case "href", "src", "action", "formaction":
						if strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:") {
							t.Errorf("%s: <%s %s=%q> is a script address", path, n.Data, a.Key, a.Val)
						}
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(doc)
		}
		send := func(req *http.Request) *httptest.ResponseRecorder {
			return serveWalk(ctx, env.e, req)
		}
		pages := 0
		for _, r := range env.e.Routes() {
			if r.Method != http.MethodGet || strings.HasPrefix(r.Path, "/api/") || strings.HasPrefix(r.Path, "/s/") {
				continue
			}
			req, _ := f.request(r.Method, r.Path)
			req.AddCookie(owner)
			rec := send(req)
			if rec.Code == http.StatusOK {
				pages++
			}
			check(req.URL.String(), rec)
		}
		if pages < 40 {
			t.Errorf("only %d pages answered 200: the walk reads too little", pages)
		}
		// The shared run, its samples and its download, as the visitor.
		seen := map[string]bool{}
		queue := []string{"/s/" + token, "/s/" + token + "/report.html"}
		for len(queue) > 0 && len(seen) < 15 {
			p := queue[0]
			queue = queue[1:]
			if seen[p] {
				continue
			}
			seen[p] = true
			rec := send(httptest.NewRequest(http.MethodGet, p, nil))
			if rec.Code != http.StatusOK {
				t.Errorf("shared %s: %d", p, rec.Code)
			}
			check(p, rec)
			_, refs := htmlRefs(t, rec.Body.String())
			for _, ref := range refs {
				if u, err := url.Parse(ref); err == nil && strings.HasPrefix(u.Path, "/s/"+token+"/samples/") {
					queue = append(queue, u.RequestURI())
				}
			}
		}
		t.Logf("%d pages show the text escaped", shown)
		if shown < 40 {
			t.Errorf("only %d pages show the text: the walk proves too little", shown)
		}
		if len(seen) < 3 {
			t.Errorf("the shared run's walk read %d pages, want its samples too", len(seen))
		}
	})
}
