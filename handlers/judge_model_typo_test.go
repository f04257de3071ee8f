package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// Test connection on a model-name typo names the closest model of the
// endpoint's model list (QA: "404 Not Found: check the base URL and the
// model name" for "gpt-4o-mnii", while the product reads that list for
// the context window anyway). Only listed models are named: nothing close
// lists a short list or counts a long one, and without a list the general
// advice stays.
func TestJudgeTestNamesTheClosestModel(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		serve := func(list string) *httptest.Server {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch {
				case r.URL.Path == "/v1/models" && list != "":
					fmt.Fprint(w, list)
				case r.URL.Path == "/v1/chat/completions":
					w.WriteHeader(http.StatusNotFound)
					fmt.Fprint(w, `{"error":{"message":"The model does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}`)
				default:
					http.NotFound(w, r)
				}
			}))
			t.Cleanup(srv.Close)
			return srv
		}
		openai := serve(`{"object":"list","data":[{"id":"gpt-4o"},{"id":"gpt-4o-mini"},{"id":"o3"}]}`)
		many := `{"data":[`
		for i := range 12 {
			many += fmt.Sprintf(`{"id":"model-%02d"},`, i)
		}
		longList := serve(strings.TrimSuffix(many, ",") + `]}`)
		noList := serve("")
		for _, tc := range []struct {
			name, base, model string
			want              string // "" when no hint may be given
		}{
			{"typo", openai.URL + "/v1", "gpt-4o-mnii", `The endpoint's model list has no model named “gpt-4o-mnii”: did you mean “gpt-4o-mini”?`},
			{"nothing close, short list", openai.URL + "/v1", "claude-sonnet", `no model named “claude-sonnet”; it lists “gpt-4o”, “gpt-4o-mini” or “o3”`},
			{"nothing close, long list", longList.URL + "/v1", "claude-sonnet", `no model named “claude-sonnet”, nor one close to it (it lists 12 models)`},
			{"listed model", openai.URL + "/v1", "o3", `model list has “o3”, so the model name is right: check the base URL`},
			{"no model list", noList.URL + "/v1", "gpt-4o-mnii", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				j := models.Judge{WorkspaceID: env.ws.ID, Name: "Typo " + tc.name, BaseURL: tc.base, Model: tc.model, TimeoutSeconds: 5,
					Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
				if err := env.db.SaveJudge(context.Background(), &j); err != nil {
					t.Fatal(err)
				}
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
				req.Header.Set("X-Requested-With", "fetch")
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				body := html.UnescapeString(rec.Body.String())
				if !strings.Contains(body, "404 Not Found") {
					t.Fatalf("the 404 is not shown: %s", body)
				}
				if tc.want == "" {
					if strings.Contains(body, "model list has") || strings.Contains(body, "did you mean") {
						t.Errorf("a hint without a model list to read: %s", body)
					}
					return
				}
				if !strings.Contains(body, tc.want) {
					t.Errorf("lacks %q: %s", tc.want, body)
				}
			})
		}
	})
}
