package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/models"
)

// TestJudgeLastTestKeepsItsHintWhole: when Test connection adds a hint to
// the endpoint's error (the closest listed model), the outcome kept with
// the judge shortens the endpoint's own text and keeps the hint whole, so
// the launch form's "last test failed" warning still says what to fix.
// Before, the whole line was cut at the length kept, and a long provider
// message cut the hint off ("did you mean" never reached the form). A
// short message is kept whole.
func TestJudgeLastTestKeepsItsHintWhole(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		env.demo()
		const hint = `The endpoint's model list has no model named “gpt-4o-mnii”: did you mean “gpt-4o-mini”? Correct the model on the judge's page`
		for _, tc := range []struct {
			name      string
			message   string
			wholeText bool // the provider's text is kept whole
		}{
			{"long provider message", "The model does not exist or you do not have access to it. " + strings.Repeat("Learn more about models and access tiers in the documentation. ", 5), false},
			{"short provider message", "The model does not exist.", true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					switch r.URL.Path {
					case "/v1/models":
						fmt.Fprint(w, `{"object":"list","data":[{"id":"gpt-4o"},{"id":"gpt-4o-mini"},{"id":"o3"}]}`)
					case "/v1/chat/completions":
						w.WriteHeader(http.StatusNotFound)
						fmt.Fprintf(w, `{"error":{"message":%q,"code":"model_not_found"}}`, tc.message)
					default:
						http.NotFound(w, r)
					}
				}))
				t.Cleanup(srv.Close)
				j := models.Judge{WorkspaceID: env.ws.ID, Name: "Hint " + tc.name, BaseURL: srv.URL + "/v1", Model: "gpt-4o-mnii", TimeoutSeconds: 5,
					Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
				must(t, env.db.SaveJudge(context.Background(), &j))
				if rec := env.postForm(fmt.Sprintf("/judges/%d/test", j.ID), nil); rec.Code != http.StatusSeeOther {
					t.Fatalf("test: status %d", rec.Code)
				}
				stored, err := env.db.FindJudge(context.Background(), env.ws.ID, j.ID)
				must(t, err)
				kept := stored.LastTestError
				if n := utf8.RuneCountInString(kept); n > maxTestErrorLength {
					t.Errorf("kept %d characters, more than the %d kept with a judge", n, maxTestErrorLength)
				}
				if !strings.Contains(kept, "404") || !strings.HasSuffix(kept, hint) {
					t.Errorf("kept %q: want the 404 and the whole hint at its end", kept)
				}
				if strings.Contains(kept, "..") {
					t.Errorf("kept %q: the hint follows a doubled full stop", kept)
				}
				if got := strings.Contains(kept, strings.TrimSpace(tc.message)); got != tc.wholeText {
					t.Errorf("provider's text kept whole = %v, want %v: %q", got, tc.wholeText, kept)
				}
				form := env.get(fmt.Sprintf("/projects/%d/runs/new?judge=%d", env.project.ID, j.ID)).Body.String()
				if !strings.Contains(form, `data-testid="launch-judge-test"`) || !strings.Contains(form, templ.EscapeString(hint)) {
					t.Errorf("the launch form's warning lacks the hint %q", hint)
				}
			})
		}
	})
}
