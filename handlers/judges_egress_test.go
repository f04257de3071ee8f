package handlers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestJudgeTestConnectionShowsNoBody: "Test connection" against whatever
// answers the judge's URL shows a parsed, escaped, short error and never
// the body of a service that is not a chat API; a redirect is reported,
// not followed.
func TestJudgeTestConnectionShowsNoBody(t *testing.T) {
	const secret = "internal-admin-secret-7731"
	var followed int
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		followed++
		io.WriteString(w, secret)
	}))
	defer target.Close()
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/plain"):
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "root:x:0:0 "+secret)
		case strings.HasPrefix(r.URL.Path, "/json"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"error":{"type":"invalid_request_error","message":"<script>alert(1)</script> `+strings.Repeat("x", 500)+`"}}`)
		case strings.HasPrefix(r.URL.Path, "/redirect"):
			http.Redirect(w, r, target.URL+"/v1/chat/completions", http.StatusFound)
		}
	}))
	defer internal.Close()
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range []struct {
			path        string
			want, avoid []string
		}{
			{"/plain/v1", []string{"HTTP 500"}, []string{secret, "root:x"}},
			{"/json/v1", []string{"HTTP 400", "invalid_request_error: &lt;script&gt;", "…"}, []string{"<script>alert", strings.Repeat("x", 301)}},
			{"/redirect/v1", []string{"HTTP 302", "never follow redirects"}, []string{secret}},
		} {
			j := models.Judge{WorkspaceID: env.ws.ID, Name: "Probe " + tc.path, BaseURL: internal.URL + tc.path, Model: "m", TimeoutSeconds: 5}
			if err := env.db.SaveJudge(context.Background(), &j); err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
			req.Header.Set("X-Requested-With", "fetch")
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			got := rec.Body.String()
			if missing := bodyLacks(got, tc.want...); len(missing) > 0 {
				t.Errorf("%s: the result lacks %q: %s", tc.path, missing, got)
			}
			for _, a := range tc.avoid {
				if strings.Contains(got, a) {
					t.Errorf("%s: the result shows %q: %s", tc.path, a, got)
				}
			}
		}
		if followed != 0 {
			t.Errorf("the redirect was followed %d times", followed)
		}
	})
}
