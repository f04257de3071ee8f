package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestPreviewFragmentsAreMarked: the live previews' answers carry
// X-Batcheval-Fragment, which static/app.js requires before it pastes an
// answer; a whole page does not, nor a refusal before the preview's
// handler (a role, a session that ended), so the script shows its plain
// message instead of pasting a page inside the page (QA: after a session
// expired, the error page appeared inside the prompt preview). A refusal
// of the preview itself (an unknown rubric, a viewer's request without
// rubric_id, an unknown project) is the server's sentence as a marked
// fragment, with its 4xx status: the script showed its generic "could not
// be loaded" for it, which said nothing of what to change.
func TestPreviewFragmentsAreMarked(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		ds := env.demoDataset()
		owner := env.sessionCookie(env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner))
		viewer := env.sessionCookie(env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer))
		rubric := rubricFormValues("", "1", "5")
		rubric.Set("preview_dataset", fmt.Sprint(ds.ID))
		rubric.Set("project_id", fmt.Sprint(env.project.ID)) // as the editor's form sends it
		unknown := rubricFormValues("", "1", "5")
		unknown.Set("rubric_id", "999999")
		launch := d.launchForm("5", "10")
		launch.Set("project_id", strconv.FormatInt(env.project.ID, 10))
		elsewhere := d.launchForm("5", "10")
		elsewhere.Set("project_id", "999999")
		page := rubricFormValues("preview", "1", "5")
		page.Set("preview_dataset", fmt.Sprint(ds.ID))
		tests := []struct {
			name   string
			path   string
			form   url.Values
			who    *http.Cookie
			status int
			marked bool
			want   string // in the answer, escaped as sent
		}{
			{"rubric preview", "/rubrics/preview", rubric, owner, http.StatusOK, true, `data-testid="prompt-message"`},
			{"run estimate", "/runs/estimate", launch, owner, http.StatusOK, true, ""},
			{"rubric preview of an unknown rubric", "/rubrics/preview", unknown, owner, http.StatusNotFound, true,
				`<p class="error-text" role="alert" data-testid="preview-refused">rubric 999999 does not exist`},
			{"a viewer's rubric preview without rubric_id", "/rubrics/preview", url.Values{"preview_dataset": {fmt.Sprint(ds.ID)}}, viewer, http.StatusUnprocessableEntity, true,
				`data-testid="preview-refused">rubric_id is missing: as viewer you preview a saved rubric`},
			{"run estimate of an unknown project", "/runs/estimate", elsewhere, owner, http.StatusNotFound, true,
				`data-testid="preview-refused">project 999999 does not exist`},
			{"run estimate refused to a viewer (its route's role)", "/runs/estimate", launch, viewer, http.StatusForbidden, false, "<html"},
			{"rubric preview signed out", "/rubrics/preview", rubric, nil, http.StatusUnauthorized, false, "<html"},
			{"no-JS preview button (a whole page)", fmt.Sprintf("/projects/%d/rubrics", env.project.ID), page, owner, http.StatusOK, false, "<html"},
		}
		// The launch form reloaded by its selects' script (a GET with
		// X-Requested-With: fetch): a refusal is the sentence, marked; the
		// same address opened as a page keeps the error page.
		for _, fetched := range []bool{true, false} {
			req := httptest.NewRequest(http.MethodGet, "/projects/999999/runs/new", nil)
			if fetched {
				req.Header.Set("X-Requested-With", "fetch")
			}
			req.AddCookie(owner)
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			body := rec.Body.String()
			marked := rec.Header().Get(fragmentHeader) == "1"
			if rec.Code != http.StatusNotFound || marked != fetched || strings.Contains(body, "<html") == fetched ||
				!strings.Contains(body, "project 999999 does not exist") {
				t.Errorf("launch form of an unknown project, fetched=%v: %d, marked=%v: %.500s", fetched, rec.Code, marked, body)
			}
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				rec := env.send(http.MethodPost, tt.path, tt.form, "", tt.who)
				body := rec.Body.String()
				if rec.Code != tt.status {
					t.Fatalf("POST %s = %d, want %d: %.500s", tt.path, rec.Code, tt.status, body)
				}
				if got := rec.Header().Get(fragmentHeader) == "1"; got != tt.marked {
					t.Errorf("POST %s: %s header %q, want marked=%v", tt.path, fragmentHeader, rec.Header().Get(fragmentHeader), tt.marked)
				}
				if !strings.Contains(body, tt.want) {
					t.Errorf("POST %s: the answer does not hold %q: %.1000s", tt.path, tt.want, body)
				}
				if tt.marked && strings.Contains(body, "<html") {
					t.Errorf("POST %s: a marked answer holds a whole page: %.1000s", tt.path, body)
				}
			})
		}
	})
}
