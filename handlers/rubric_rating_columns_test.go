package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// TestRubricRefusesUnknownRatingColumns: a human_column or an annotator
// column that is none of the project's datasets' rating columns (a
// hand-made post, a typo) is refused by the editor and by the API alike,
// naming the criterion and listing the rating columns there are; a project
// without datasets accepts any (its data may come later), and a column the
// datasets have saves.
func TestRubricRefusesUnknownRatingColumns(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		empty := models.Project{WorkspaceID: env.ws.ID, Name: "No data yet"}
		if err := env.db.CreateProject(context.Background(), &empty); err != nil {
			t.Fatal(err)
		}
		a := newAPIClient(t, env)
		u := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		_, tok := env.apiToken(env.ws.ID, u.ID)
		// Accounts exist now: the editor posts with the editor's session.
		cookie := env.sessionCookie(u)
		postForm := func(path string, form url.Values) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
			req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			req.AddCookie(cookie)
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			return rec
		}
		// The demo dataset's rating columns.
		listed := []string{`“coherent”`, `“engaging”`, `“overall”`}
		for _, tc := range []struct {
			name       string
			project    int64
			human      string
			annotators []string
			field      string   // the editor's input the message is shown next to, "" when saved
			want       []string // in the message, besides the listed columns
		}{
			{"made-up human column", env.project.ID, "made_up", nil, "criteria[0].human",
				[]string{`Criterion “Helpful”`, `“made_up” is in none of this project's datasets`}},
			{"made-up annotator columns", env.project.ID, "overall", []string{"coherent", "ann_x", "ann_y"}, "criteria[0].annotators",
				[]string{`Criterion “Helpful”`, `“ann_x” and “ann_y” are in none of this project's datasets`}},
			{"existing columns", env.project.ID, "overall", []string{"coherent", "engaging"}, "", nil},
			{"project without datasets", empty.ID, "made_up", []string{"ann_x"}, "", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				// The browser editor.
				form := rubricFormValues("save", "1", "5")
				form.Set("criteria[0].human", tc.human)
				for _, c := range tc.annotators {
					form.Add("criteria[0].annotators", c)
				}
				rec := postForm(fmt.Sprintf("/projects/%d/rubrics", tc.project), form)
				if tc.field == "" {
					if rec.Code != http.StatusSeeOther {
						t.Fatalf("editor: %d, want saved (303): %s", rec.Code, testidBlock(rec.Body.String(), "field-error-criteria[0].human"))
					}
				} else {
					if rec.Code != http.StatusUnprocessableEntity {
						t.Fatalf("editor: %d, want 422", rec.Code)
					}
					msg := html.UnescapeString(testidBlock(rec.Body.String(), "field-error-"+tc.field))
					for _, w := range append(append([]string{}, tc.want...), listed...) {
						if !strings.Contains(msg, w) {
							t.Errorf("editor: the message next to %s lacks %q: %q", tc.field, w, msg)
						}
					}
				}
				// The API, with the same rule.
				crit := map[string]any{"name": "Helpful", "lo": 1, "hi": 5, "human_column": tc.human}
				if tc.annotators != nil {
					crit["annotator_columns"] = tc.annotators
				}
				body, err := json.Marshal(map[string]any{"name": "Helpfulness " + tc.name, "task": "A question and the answer a bot gave.", "criteria": []any{crit}})
				if err != nil {
					t.Fatal(err)
				}
				rec = a.call(http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/rubrics", tc.project), tok, body, "application/json")
				if tc.field == "" {
					if rec.Code != http.StatusCreated {
						t.Fatalf("API: %d, want 201: %s", rec.Code, rec.Body)
					}
					return
				}
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("API: %d, want 422: %s", rec.Code, rec.Body)
				}
				msg := apiMessage(t, rec.Body.Bytes())
				for _, w := range append(append([]string{}, tc.want...), listed...) {
					if !strings.Contains(msg, w) {
						t.Errorf("API: the message lacks %q: %q", w, msg)
					}
				}
			})
		}
	})
}
