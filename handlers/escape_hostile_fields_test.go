package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/batcheval/batcheval/models"
)

// TestHostileFieldsEscapedOnEveryPage puts hostileText, through the
// product's own ways in (an uploaded file, the JSON API), in the fields
// TestPagesEscapeUntrustedText leaves as they are: a dataset's column
// names and their labels, a rubric's name, task and criterion (name,
// description, level texts), a project's description, a run's name, a
// review's reason, comment and tag, and a share link's label. Then it
// follows every link from the home page as the local user (every page,
// sample, batch and report download it reaches), and the share link's
// pages as its visitor: none may hold the text's element or a script
// address, and the pages that show the text show it escaped.
func TestHostileFieldsEscapedOnEveryPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		call := func(method, path, body string, into any) {
			t.Helper()
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			if rec.Code/100 != 2 {
				t.Fatalf("%s %s: %d %.300q", method, path, rec.Code, rec.Body.String())
			}
			if into != nil {
				must(t, json.Unmarshal(rec.Body.Bytes(), into))
			}
		}
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		csvCell := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
		column, rating := "text "+hostileText, "rating "+hostileText
		var file strings.Builder
		file.WriteString("id," + csvCell(column) + "," + csvCell(rating) + "\n")
		for i := 1; i <= 12; i++ {
			fmt.Fprintf(&file, "s%d,%s,%d\n", i, csvCell(fmt.Sprintf("sample %d %s", i, hostileText)), 1+i%5)
		}
		upload := env.uploadToken("hostile.csv", file.String())
		var ds struct{ ID int64 }
		call(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/datasets", env.project.ID), `{"upload_token":`+q(upload)+`,"name":`+q("dataset "+hostileText)+
			`,"mapping":{"id_column":"id","fields":[{"column":`+q(column)+`,"label":`+q("label "+hostileText)+`}],"rating_columns":[`+q(rating)+`]}}`, &ds)
		criterion := "criterion " + hostileText
		var rubric struct{ ID int64 }
		call(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/rubrics", env.project.ID), `{"name":`+q("rubric "+hostileText)+`,"task":`+q("task "+hostileText)+
			`,"fields":[{"column":`+q(column)+`,"label":`+q("label "+hostileText)+`}],"criteria":[{"name":`+q(criterion)+`,"description":`+q("description "+hostileText)+
			`,"lo":1,"hi":5,"levels":{"low":`+q("low "+hostileText)+`,"middle":`+q("middle "+hostileText)+`,"high":`+q("high "+hostileText)+`},"human_column":`+q(rating)+`}]}`, &rubric)
		var run struct{ ID int64 }
		call(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID), fmt.Sprintf(`{"dataset_id":%d,"rubric_id":%d,"judge_id":%d,"name":%s,"settings":{"rounds":1,"batch_size":6}}`,
			ds.ID, rubric.ID, env.simulatedJudge().ID, q("run "+hostileText)), &run)
		env.waitRun(run.ID, 60*time.Second)
		must(t, env.db.Gorm.Model(&models.Project{}).Where("id = ?", env.project.ID).Update("description", "description "+hostileText).Error)
		// A review (the local user names no reviewer, so it is stored as
		// the review form stores one): reviewer, reason, comment and tag.
		rows, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 1)
		must(t, err)
		score := 2.0
		_, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: ds.ID, RowID: rows[0].ID, Criterion: criterion,
			HumanColumn: rating, Reviewer: "reviewer " + hostileText, RunID: &run.ID, Score: &score, Lo: 1, Hi: 5,
			Comment: hostileText, Reason: hostileText, Agree: new(false), Tags: []string{`"'><i>injected</i>`}})
		must(t, err)
		var share struct{ URL string }
		call(http.MethodPost, "/api/v1/shares", fmt.Sprintf(`{"kind":"run","run_id":%d,"label":%s}`, run.ID, q("label "+hostileText)), &share)

		shown := map[string]bool{} // pages that show the text, escaped
		check := func(path string, rec *httptest.ResponseRecorder) []string {
			t.Helper()
			if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
				return nil
			}
			body := rec.Body.String()
			if strings.Contains(body, "&lt;i&gt;injected") {
				shown[path] = true
			}
			if i := strings.Index(body, "<i>"); i >= 0 {
				t.Errorf("%s holds the text's element unescaped: %.200q", path, body[max(0, i-120):])
			}
			_, refs := htmlRefs(t, body)
			doc, err := html.Parse(strings.NewReader(body))
			must(t, err)
			var walk func(n *html.Node)
			walk = func(n *html.Node) {
				for _, a := range n.Attr {
					if strings.HasPrefix(strings.ToLower(a.Key), "on") {
						t.Errorf("%s: <%s %s=%q> is an event handler", path, n.Data, a.Key, a.Val)
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(doc)
			for _, ref := range refs {
				if strings.HasPrefix(strings.ToLower(strings.TrimSpace(ref)), "javascript:") {
					t.Errorf("%s links a script address: %q", path, ref)
				}
			}
			return refs
		}
		crawl := func(start []string, within func(path string) bool, limit int) map[string]int {
			seen := map[string]int{}
			queue := start
			for len(queue) > 0 && len(seen) < limit {
				p := queue[0]
				queue = queue[1:]
				if _, ok := seen[p]; ok {
					continue
				}
				rec := serveWalk(ctx, env.e, httptest.NewRequest(http.MethodGet, p, nil))
				seen[p] = rec.Code
				if rec.Code >= 500 {
					t.Errorf("%s: %d", p, rec.Code)
				}
				for _, ref := range check(p, rec) {
					u, err := url.Parse(ref)
					if err != nil || u.Host != "" || u.Scheme != "" || !strings.HasPrefix(u.Path, "/") {
						continue
					}
					u.Fragment = ""
					if next := u.RequestURI(); within(u.Path) {
						queue = append(queue, next)
					}
				}
			}
			return seen
		}
		// Every page of the dashboard reached from the home page; sort and
		// page variants of the same list add nothing, so each address is
		// read once without its query, plus the queries the pages link.
		skip := []string{"/static/", "/favicon.ico", "/api/", "/s/"}
		seen := crawl([]string{"/", fmt.Sprintf("/runs/%d/report.html", run.ID)}, func(p string) bool {
			for _, s := range skip {
				if strings.HasPrefix(p, s) {
					return false
				}
			}
			return !strings.HasSuffix(p, "/events")
		}, 400)
		for _, want := range []string{fmt.Sprintf("/datasets/%d", ds.ID), fmt.Sprintf("/rubrics/%d/edit", rubric.ID), fmt.Sprintf("/runs/%d", run.ID),
			fmt.Sprintf("/runs/%d/report.html", run.ID), fmt.Sprintf("/projects/%d", env.project.ID)} {
			if code, ok := seen[want]; !ok || code != http.StatusOK {
				t.Errorf("the walk did not read %s (%d, read: %v)", want, code, ok)
			}
		}
		if len(shown) < 25 {
			t.Errorf("%d of %d pages read show the text: the walk proves too little", len(shown), len(seen))
		}
		// The share link's pages, as its visitor.
		u, err := url.Parse(share.URL)
		must(t, err)
		before := len(shown)
		sharedSeen := crawl([]string{u.Path, u.Path + "/report.html"}, func(p string) bool { return strings.HasPrefix(p, u.Path) }, 40)
		if len(sharedSeen) < 5 || len(shown)-before < 3 {
			t.Errorf("the share link's walk read %d pages, %d showing the text: want its samples too", len(sharedSeen), len(shown)-before)
		}
		t.Logf("%d dashboard pages read, %d share pages, %d show the text escaped", len(seen), len(sharedSeen), len(shown))
	})
}
