package handlers

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// A viewer reads a rubric on its page and chooses which criterion and
// dataset the prompt preview shows (QA review44: the page was an editable
// form headed "Edit rubric", and choosing another criterion posted the live
// preview to a route only editors may call, which put a whole "Forbidden"
// page where the prompt was; without script a viewer had no Preview at all).
// A viewer's page now names no field to send, its Preview reloads the page
// (GET) with the choice, and the live preview shows the rubric as stored,
// whatever the form holds; an editor's preview still shows their unsaved
// edits.
func TestRubricPageAndPreviewForViewer(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		rubric := env.rubrics()[0]
		if len(rubric.Criteria) < 2 {
			t.Fatalf("the demo rubric has %d criteria, the test needs 2", len(rubric.Criteria))
		}
		second := rubric.Criteria[1].Name
		ds := env.demoDataset()
		viewer := env.sessionCookie(env.createUser(env.ws.ID, "viewer@rubric.test", models.RoleViewer))
		editor := env.sessionCookie(env.createUser(env.ws.ID, "editor@rubric.test", models.RoleEditor))
		pagePath := fmt.Sprintf("/rubrics/%d/edit", rubric.ID)

		t.Run("page", func(t *testing.T) {
			tests := []struct {
				name    string
				cookie  *http.Cookie
				want    []string
				notWant []string
			}{
				{"viewer", viewer,
					[]string{"<h1>Rubric: " + rubric.Name + "</h1>", `<form method="get" id="rubric-form" action="` + pagePath + `#prompt-preview"`,
						`id="rubric-name" name="" value="` + rubric.Name + `" readonly`, `data-testid="rubric-preview-read"`, `name="preview_criterion"`, "<title>" + rubric.Name + " · "},
					[]string{"<h1>Edit rubric</h1>", `name="name"`, `name="task"`, `name="criteria[0].name"`, `name="criteria[1].description"`, `name="action"`, `name="revision"`}},
				{"editor", editor,
					[]string{"<h1>Edit rubric</h1>", `<form method="post" id="rubric-form" action="/rubrics/`, `name="criteria[0].name"`, `name="action" value="save"`, "<title>Edit " + rubric.Name},
					[]string{"readonly", `data-testid="rubric-preview-read"`}},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					rec := env.send(http.MethodGet, pagePath, nil, "", tt.cookie)
					if rec.Code != http.StatusOK {
						t.Fatalf("GET %s = %d", pagePath, rec.Code)
					}
					body := html.UnescapeString(rec.Body.String())
					if missing := bodyLacks(body, tt.want...); len(missing) > 0 {
						t.Errorf("the page lacks %q", missing)
					}
					for _, nw := range tt.notWant {
						if strings.Contains(body, nw) {
							t.Errorf("the page holds %q", nw)
						}
					}
				})
			}
		})

		t.Run("preview", func(t *testing.T) {
			tampered := url.Values{"rubric_id": {fmt.Sprint(rubric.ID)}, "project_id": {fmt.Sprint(env.project.ID)},
				"preview_dataset": {fmt.Sprint(ds.ID)}, "preview_criterion": {"1"},
				"name": {rubric.Name}, "criteria[0].name": {"Zeroth"}, "criteria[0].lo": {"1"}, "criteria[0].hi": {"5"},
				"criteria[1].name": {"Unsaved name"}, "criteria[1].lo": {"1"}, "criteria[1].hi": {"5"}}
			tests := []struct {
				name       string
				method     string
				path       string
				form       url.Values
				cookie     *http.Cookie
				wantStatus int
				want       []string
				notWant    []string
			}{
				// The live preview (script): the stored rubric for a viewer,
				// whatever the form says; the form for an editor.
				{"viewer, live", http.MethodPost, "/rubrics/preview", tampered, viewer, http.StatusOK,
					[]string{second, "Sample1:"}, []string{"Unsaved name", "<html", "Forbidden"}},
				{"editor, live", http.MethodPost, "/rubrics/preview", tampered, editor, http.StatusOK,
					[]string{"Unsaved name", "Sample1:"}, []string{"<html"}},
				// Without script: the viewer's Preview button loads the page
				// with the criterion chosen.
				{"viewer, no script", http.MethodGet, pagePath + fmt.Sprintf("?rubric_id=%d&preview_dataset=%d&preview_criterion=1", rubric.ID, ds.ID), nil, viewer, http.StatusOK,
					[]string{`<option value="1" selected>`, "criterion <strong>" + second + "</strong>", "Sample1:"}, nil},
				// Nothing a viewer could preview: no rubric named.
				{"viewer, no rubric", http.MethodPost, "/rubrics/preview", url.Values{"preview_dataset": {fmt.Sprint(ds.ID)}}, viewer, http.StatusUnprocessableEntity,
					[]string{"rubric_id is missing"}, nil},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					rec := env.send(tt.method, tt.path, tt.form, "", tt.cookie)
					if rec.Code != tt.wantStatus {
						t.Fatalf("%s %s = %d, want %d: %.300s", tt.method, tt.path, rec.Code, tt.wantStatus, rec.Body)
					}
					body := html.UnescapeString(rec.Body.String())
					if missing := bodyLacks(body, tt.want...); len(missing) > 0 {
						t.Errorf("the answer lacks %q:\n%.2000s", missing, body)
					}
					for _, nw := range tt.notWant {
						if strings.Contains(body, nw) {
							t.Errorf("the answer holds %q", nw)
						}
					}
				})
			}
		})
	})
}
