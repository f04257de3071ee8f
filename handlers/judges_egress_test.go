package handlers

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestJudgeTestConnectionShowsNoBody: "Test connection" against whatever
// answers the judge's URL shows a parsed, escaped, short error and never
// the body of a service that is not a chat API; a redirect is reported,
// not followed, and its target is offered as the base URL only when this
// server would call it (regression: a redirect to the cloud metadata
// address was answered "use the address it redirects to as the base URL.
// Details: it points to http://169.254.169.254").
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
		case strings.HasPrefix(r.URL.Path, "/redirect-metadata"):
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
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
			{"/redirect/v1", []string{"HTTP 302", "never follow redirects", "use the address it redirects to"}, []string{secret}},
			{"/redirect-metadata/v1", []string{"HTTP 302", "the redirect is refused", "link-local"}, []string{"169.254.169.254", "use the address it redirects to"}},
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

// TestStoredKeyNeverShown: a stored key appears on no judge page, in no
// "Test connection" result (even when the endpoint echoes it back), in no
// log line, and not in the database column.
func TestStoredKeyNeverShown(t *testing.T) {
	const key = "sk-never-shown-91d7c2"
	echoing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"type":"invalid_api_key","message":"Incorrect API key provided: `+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")+`"}}`)
	}))
	defer echoing.Close()
	eachDB(t, func(t *testing.T, env *testEnv) {
		var logs bytes.Buffer
		env.h.Log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		form := judgeFormValues("Echoing", echoing.URL+"/v1", key, "")
		if rec := env.postForm("/judges", form); rec.Code != http.StatusSeeOther {
			t.Fatalf("POST /judges = %d: %s", rec.Code, rec.Body)
		}
		js, _ := env.db.ListJudges(context.Background(), env.ws.ID)
		j := js[len(js)-1]
		var raw string
		env.db.Gorm.Raw("SELECT api_key FROM judges WHERE id = ?", j.ID).Scan(&raw)
		if strings.Contains(raw, key) || !models.IsSealed(raw) {
			t.Errorf("the database column holds %q", raw)
		}
		var seen []string
		for _, path := range []string{"/judges", fmt.Sprintf("/judges/%d/edit", j.ID)} {
			seen = append(seen, env.get(path).Body.String())
		}
		for _, fetch := range []bool{true, false} {
			req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
			if fetch {
				req.Header.Set("X-Requested-With", "fetch")
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			seen = append(seen, rec.Body.String())
			next := httptest.NewRequest(http.MethodGet, "/judges", nil)
			for _, ck := range rec.Result().Cookies() {
				next.AddCookie(ck)
				seen = append(seen, ck.Value)
			}
			page := httptest.NewRecorder()
			env.e.ServeHTTP(page, next)
			seen = append(seen, page.Body.String())
		}
		if !strings.Contains(strings.Join(seen, "\n"), "[redacted]") {
			t.Errorf("the echoed key was not reported as redacted: %s", strings.Join(seen, "\n"))
		}
		seen = append(seen, logs.String())
		for i, s := range seen {
			if strings.Contains(s, key) {
				t.Errorf("output %d shows the key", i)
			}
		}
	})
}

// TestGenerateStepsUsesStoredKey: "Generate steps now" picks its judge from
// the list, where keys are still sealed; the call must carry the opened key.
func TestGenerateStepsUsesStoredKey(t *testing.T) {
	const key = "sk-steps-5151"
	var auth []string
	ep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"1. Read it.\n2. Score it."}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	defer ep.Close()
	eachDB(t, func(t *testing.T, env *testEnv) {
		auth = nil
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "Keyed", BaseURL: ep.URL + "/v1", Model: "m", APIKey: key, TimeoutSeconds: 5}
		if err := env.db.SaveJudge(context.Background(), &j); err != nil {
			t.Fatal(err)
		}
		d := env.demo()
		d.judge = j
		f := d.methodForm("geval", map[string]string{"steps_0": "", "steps_1": ""})
		rec := env.postForm(fmt.Sprintf("/projects/%d/runs/geval-steps", env.project.ID), f)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %.500s", rec.Code, rec.Body)
		}
		if len(auth) == 0 || auth[0] != "Bearer "+key {
			t.Errorf("the judge was called with Authorization %q, want the stored key", auth)
		}
	})
}
