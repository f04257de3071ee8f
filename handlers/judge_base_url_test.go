package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/models"
)

// Test connection on a base URL with the usual slips says the fix: /v1
// left off (checked by asking the base URL with /v1 added), or the whole
// endpoint pasted (…/chat/completions), each keeping the base URL's query
// string. A base URL that is wrong some other way keeps the general 404
// advice with no made-up fix.
func TestJudgeTestNamesTheBaseURLFix(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		// An OpenAI-compatible server under /v1 only, as Ollama and vLLM are.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/chat/completions" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Float Scores: [Sample1:4]"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
		}))
		defer srv.Close()
		cases := []struct {
			name, base string
			want       string // "" for no fix named
			ok         bool
		}{
			{"without /v1", srv.URL, srv.URL + "/v1 answers: set the base URL to that (add /v1)", false},
			{"without /v1, trailing slash", srv.URL + "/", srv.URL + "/v1 answers", false},
			{"whole endpoint", srv.URL + "/v1/chat/completions", "The base URL ends in /chat/completions, which is added to it for every call: set the base URL to " + srv.URL + "/v1", false},
			// The query string (Azure's api-version) stays in the fix.
			{"whole endpoint with a query", srv.URL + "/v1/chat/completions?api-version=2024-10-21", "set the base URL to " + srv.URL + "/v1?api-version=2024-10-21", false},
			{"without /v1, with a query", srv.URL + "?api-version=2024-10-21", srv.URL + "/v1?api-version=2024-10-21 answers: set the base URL to that (add /v1)", false},
			{"right, with a query", srv.URL + "/v1?api-version=2024-10-21", "", true},
			{"wrong path", srv.URL + "/api/v1", "", false},
			{"right", srv.URL + "/v1", "", true},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				j := models.Judge{WorkspaceID: env.ws.ID, Name: "Local " + tc.name, BaseURL: tc.base, Model: "m", TimeoutSeconds: 5,
					Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
				if err := env.db.SaveJudge(context.Background(), &j); err != nil {
					t.Fatal(err)
				}
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
				req.Header.Set("X-Requested-With", "fetch")
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				body := rec.Body.String()
				if got := strings.Contains(body, "flash ok"); got != tc.ok {
					t.Fatalf("answered %v, want %v: %s", got, tc.ok, body)
				}
				if tc.ok {
					return
				}
				if !strings.Contains(body, "404") {
					t.Errorf("the 404 is not shown: %s", body)
				}
				named := strings.Contains(body, "set the base URL to")
				if tc.want == "" && named {
					t.Errorf("a fix named for a base URL with no known one: %s", body)
				}
				if tc.want != "" && !strings.Contains(body, templ.EscapeString(tc.want)) {
					t.Errorf("lacks %q: %s", tc.want, body)
				}
			})
		}
	})
}
