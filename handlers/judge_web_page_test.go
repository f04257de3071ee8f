package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestJudgeTestSaysAWebPageAnsweredFor403: Test connection behind a proxy
// that answers 403 with its own web page says that a page from something
// in front of the API answered, with the page's title escaped (regression:
// it said "check the API key has access to this model", and the key was
// not at fault).
func TestJudgeTestSaysAWebPageAnsweredFor403(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<!DOCTYPE html><html><head><title>Blocked &lt;img src=x onerror=alert(1)&gt; by policy</title></head><body>Access denied</body></html>`)
		}))
		defer srv.Close()
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "Behind a proxy", BaseURL: srv.URL + "/v1", Model: "m", TimeoutSeconds: 5,
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
		if err := env.db.SaveJudge(context.Background(), &j); err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
		req.Header.Set("X-Requested-With", "fetch")
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		body := rec.Body.String()
		if strings.Contains(body, "flash ok") || strings.Contains(body, "check the API key") {
			t.Fatalf("want the call failed, not blamed on the key: %s", body)
		}
		for _, want := range []string{"HTTP 403", "web page", "in front of the API", "Blocked &lt;img src=x onerror=alert(1)&gt; by policy"} {
			if !strings.Contains(body, want) {
				t.Errorf("lacks %q: %s", want, body)
			}
		}
		if strings.Contains(body, "<img") {
			t.Errorf("the page's title is shown unescaped: %s", body)
		}
	})
}
