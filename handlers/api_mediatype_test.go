package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestAPIRefusesOtherMediaTypes: a JSON endpoint's body sent as
// text/plain, or with no Content-Type, is refused 415 naming the type to
// send; it was read as JSON and the project made. A body an endpoint may
// leave out needs no Content-Type when left out; the upload takes
// multipart only; the web forms are not checked.
func TestAPIRefusesOtherMediaTypes(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	a := newAPIClient(t, env)
	a.invalidRequests = true
	run := env.storedRun(env.ratedDataset("d", 2), "r", []float64{1, 2}, nil)
	body := []byte(`{"name":"sent as JSON"}`)
	for _, tc := range []struct {
		name, method, path, ctype string
		body                      []byte
		want                      int
		says                      string
	}{
		{"text/plain", http.MethodPost, "/api/v1/projects", "text/plain", body, http.StatusUnsupportedMediaType, `Content-Type is "text/plain": POST /api/v1/projects takes application/json`},
		{"no Content-Type", http.MethodPost, "/api/v1/projects", "", body, http.StatusUnsupportedMediaType, "no Content-Type: POST /api/v1/projects takes application/json"},
		{"a form", http.MethodPost, "/api/v1/projects", echo.MIMEApplicationForm, []byte("name=x"), http.StatusUnsupportedMediaType, "takes application/json"},
		{"JSON with a charset", http.MethodPost, "/api/v1/projects", "application/json; charset=utf-8", body, http.StatusCreated, ""},
		{"no Content-Type on a launch", http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID), "", []byte(`{"dataset_id":1,"rubric_id":1,"judge_id":1}`), http.StatusUnsupportedMediaType, "takes application/json"},
		{"PUT as text", http.MethodPut, "/api/v1/rubrics/1", "text/plain", []byte(`{}`), http.StatusUnsupportedMediaType, "PUT /api/v1/rubrics/{id} takes application/json"},
		{"JSON to the upload", http.MethodPost, fmt.Sprintf("/api/v1/projects/%d/uploads", env.project.ID), "application/json", body, http.StatusUnsupportedMediaType, "takes multipart/form-data"},
		{"an optional body left out", http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/continue", run.ID), "", nil, http.StatusConflict, ""},
		{"an optional body as text", http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/continue", run.ID), "text/plain", []byte(`{"spend_cap_usd":1}`), http.StatusUnsupportedMediaType, "takes application/json"},
		{"no body taken", http.MethodPost, fmt.Sprintf("/api/v1/runs/%d/cancel", run.ID), "", nil, http.StatusConflict, ""},
	} {
		rec := a.call(tc.method, tc.path, "", tc.body, tc.ctype)
		if rec.Code != tc.want {
			t.Errorf("%s: %d, want %d: %s", tc.name, rec.Code, tc.want, rec.Body)
			continue
		}
		if tc.want == http.StatusUnsupportedMediaType {
			if code := errorCode(t, rec); code != "unsupported_media_type" {
				t.Errorf("%s: code %q", tc.name, code)
			}
			if msg := decode[APIError](t, rec, tc.want).Error.Message; !strings.Contains(msg, tc.says) {
				t.Errorf("%s: %q does not say %q", tc.name, msg, tc.says)
			}
		}
	}
	if ps, _ := env.db.ListProjects(t.Context(), env.ws.ID); len(ps) != 2 {
		t.Errorf("%d projects, want the first and the one sent as JSON", len(ps))
	}
	// The web form still posts a form encoding.
	rec := env.postForm("/projects", url.Values{"name": {"from the page"}})
	if rec.Code == http.StatusUnsupportedMediaType || rec.Code >= 400 {
		t.Errorf("the web form's new project: %d", rec.Code)
	}
}
