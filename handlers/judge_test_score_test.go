package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestJudgeTestReadsAScore: "Test connection" sends one small scoring
// request in the batch prompts' score-list format and says whether a
// score could be read from the answer. An answer that holds none ("ok", a
// greeting, an empty answer cut off at the cap) is reported as such,
// quoted and escaped, and kept as the judge's last test, so the launch
// form warns; an answer with a score is reported with it. Before, any
// answer at all was "answered", though a run would read no score from it.
func TestJudgeTestReadsAScore(t *testing.T) {
	const echoedKey = "sk-echoed-5f0c1e"
	eachDB(t, func(t *testing.T, env *testEnv) {
		// The fake judge answers by model name; it records the max_tokens
		// and the number of each chat request.
		answers := map[string]struct{ content, finish string }{
			"says-ok":     {"ok", "stop"},
			"says-html":   {"<b>Hello</b> there, how can I help?", "stop"},
			"says-empty":  {"", "length"},
			"scores":      {"Float Scores: [Sample1:4.5]", "stop"},
			"echoes-key":  {"Your key is ", "stop"},     // followed by the key it was sent
			"echoes-part": {"Your key starts ", "stop"}, // followed by the key's first 12 characters and "..."
		}
		var mu sync.Mutex
		calls := map[string]int{}
		var maxTokens []int
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/chat/completions" {
				http.NotFound(w, r)
				return
			}
			var req struct {
				Model     string `json:"model"`
				MaxTokens int    `json:"max_tokens"`
			}
			if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			calls[req.Model]++
			maxTokens = append(maxTokens, req.MaxTokens)
			mu.Unlock()
			a := answers[req.Model]
			if req.Model == "echoes-key" {
				a.content += strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			}
			if req.Model == "echoes-part" {
				a.content += strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")[:12] + "..."
			}
			content, _ := json.Marshal(a.content)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":%q}],"usage":{"prompt_tokens":60,"completion_tokens":3,"total_tokens":63}}`,
				req.Model, content, a.finish)
		}))
		defer srv.Close()

		tests := []struct {
			model  string
			scored bool
			want   []string // in the fragment
			absent []string
		}{
			{"says-ok", false, []string{"flash warning", "answered, but no score could be read from its answer: “ok”", "A run would get no scores"}, []string{"flash ok"}},
			{"says-html", false, []string{"flash warning", "“&lt;b&gt;Hello&lt;/b&gt; there, how can I help?”"}, []string{"<b>Hello", "flash ok"}},
			{"says-empty", false, []string{"flash warning", "“” (cut off at the test&#39;s limit of 30 tokens)"}, []string{"flash ok"}},
			// The quoted answer is kept and shown to everyone who launches: never the key.
			{"echoes-key", false, []string{"flash warning", "“Your key is [redacted]”"}, []string{echoedKey}},
			// Nor a part of it (judge.RedactKey).
			{"echoes-part", false, []string{"flash warning", "“Your key starts [redacted]”"}, []string{echoedKey[:12], "echoed-5f"}},
			{"scores", true, []string{"flash ok", "with a score the product can read (4.5 on clarity, 1 to 5)"}, []string{"flash warning"}},
		}
		for _, tt := range tests {
			t.Run(tt.model, func(t *testing.T) {
				j := models.Judge{WorkspaceID: env.ws.ID, Name: "Judge " + tt.model, BaseURL: srv.URL + "/v1", Model: tt.model, TimeoutSeconds: 5,
					Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2, APIKey: echoedKey}
				if err := env.db.SaveJudge(context.Background(), &j); err != nil {
					t.Fatal(err)
				}
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
				req.Header.Set("X-Requested-With", "fetch")
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				body := rec.Body.String()
				if missing := bodyLacks(body, tt.want...); len(missing) > 0 {
					t.Errorf("the test's outcome lacks %q: %s", missing, body)
				}
				for _, a := range tt.absent {
					if strings.Contains(body, a) {
						t.Errorf("the test's outcome holds %q: %s", a, body)
					}
				}
				mu.Lock()
				n := calls[tt.model]
				mu.Unlock()
				if n != 1 {
					t.Errorf("the test sent %d chat requests, want 1", n)
				}

				// Kept as the last test: the judge's page and the launch form say so.
				stored, err := env.db.FindJudge(context.Background(), env.ws.ID, j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.HasPrefix(stored.LastTestError, web.JudgeAnsweredWithoutScore); got == tt.scored || stored.LastTestFailed() == tt.scored {
					t.Errorf("stored last test error %q; want one = %v", stored.LastTestError, !tt.scored)
				}
				launch := env.get(fmt.Sprintf("/projects/%d/runs/new?judge=%d", env.project.ID, j.ID)).Body.String()
				if got := strings.Contains(launch, `data-testid="launch-judge-test"`); got == tt.scored {
					t.Errorf("launch form warns = %v, want %v", got, !tt.scored)
				}
				if !tt.scored && !strings.Contains(launch, "At the last connection test of this judge (") {
					t.Errorf("the launch form's warning does not say the judge answered without a score")
				}
				page := env.get(fmt.Sprintf("/judges/%d/edit", j.ID)).Body.String()
				wantLast := "answered with a score that could be read."
				if !tt.scored {
					wantLast = web.JudgeAnsweredWithoutScore
				}
				if missing := bodyLacks(page, wantLast, `data-testid="judge-test-help"`, "so its cost is tiny"); len(missing) > 0 {
					t.Errorf("judge page lacks %q", missing)
				}
				if strings.Contains(page+launch, echoedKey) || strings.Contains(stored.LastTestError, echoedKey) {
					t.Errorf("the judge's key is shown or stored with the last test")
				}
				if strings.Contains(page, "failed: "+web.JudgeAnsweredWithoutScore) {
					t.Errorf("judge page says a judge that answered failed")
				}
			})
		}
		mu.Lock()
		defer mu.Unlock()
		for _, m := range maxTokens {
			if m != evaluator.ScoreCheckMaxTokens {
				t.Errorf("a test request asked for max_tokens %d, want %d", m, evaluator.ScoreCheckMaxTokens)
			}
		}
	})
}
