package handlers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestJudgeTestWarnsOllamaCutsLongPrompts: Test connection on an Ollama
// judge without a context window said nothing of it (Ollama's model list
// states no window), though Ollama cuts a prompt longer than its context
// length without an error and the judge then scores text it never read
// (found testing an Ollama-like fake from the judge form). It now says so
// and where to find the length, for an Ollama server (its root answers
// "Ollama is running") and only while the judge has no window set.
func TestJudgeTestWarnsOllamaCutsLongPrompts(t *testing.T) {
	fake := func(root string) string {
		sim := simjudge.NewHandler(simjudge.Options{Seed: 1, Model: "llama3.1:8b"})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				if root == "" {
					http.NotFound(w, r)
					return
				}
				if r.Header.Get("Authorization") != "" {
					t.Errorf("the root was asked with the key")
				}
				io.WriteString(w, root)
			case "/v1/models":
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"object":"list","data":[{"id":"llama3.1:8b","object":"model","created":1733000000,"owned_by":"library"}]}`)
			default:
				sim.ServeHTTP(w, r)
			}
		}))
		t.Cleanup(srv.Close)
		return srv.URL + "/v1"
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		window := 8192
		for _, tc := range []struct {
			name, root string
			window     *int
			want       bool
		}{
			{"Ollama, no window", "Ollama is running", nil, true},
			{"Ollama, window set", "Ollama is running", &window, false},
			{"another server, no window", "", nil, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				j := models.Judge{WorkspaceID: env.ws.ID, Name: tc.name, BaseURL: fake(tc.root), Model: "llama3.1:8b", APIKey: "k-123",
					TimeoutSeconds: 5, Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2, ContextTokens: tc.window}
				must(t, env.db.SaveJudge(context.Background(), &j))
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
				req.Header.Set("X-Requested-With", "fetch")
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				body := rec.Body.String()
				if !strings.Contains(body, "flash ok") {
					t.Fatalf("the test failed: %.600s", body)
				}
				if got := strings.Contains(body, "cuts a prompt longer than the model"); got != tc.want {
					t.Errorf("Ollama's warning shown %v, want %v: %.900s", got, tc.want, body)
				}
				if tc.want && !strings.Contains(body, "ollama show MODEL") {
					t.Errorf("the warning does not say where to find the length: %.900s", body)
				}
			})
		}
	})
}
