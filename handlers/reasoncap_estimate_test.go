package handlers

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/judge"
)

// TestLaunchEstimateCountsTheReasoningCap: the launch form's longest call
// counts the answer's cap as the judge is sent it (methods'
// TestEstimateAnswerRoomIsTheCapSent covers a run's own max tokens). A reasoning judge
// (max_completion_tokens) is sent max tokens plus judge.ReasoningAllowance
// and may use all of it, so its longest call is that much longer than a
// plain judge's and says why; a call sent no cap gets the expected answer
// on both. Before, the reasoning judge's estimate counted the run's cap
// alone, 25,000 tokens short of what the context window must hold.
func TestLaunchEstimateCountsTheReasoningCap(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		judgeWith := func(name, tokenLimit string) int64 {
			f := judgeFormValues(name, "http://127.0.0.1:9/v1", "", "")
			f.Set("context_tokens", "1000000")
			f.Set("token_limit", tokenLimit)
			if rec := env.postForm("/judges", f); rec.Code != http.StatusSeeOther {
				t.Fatalf("save judge %s: status %d: %s", name, rec.Code, rec.Body.String())
			}
			j, ok := env.judgeNamed(name)
			if !ok {
				t.Fatalf("judge %s not saved", name)
			}
			return j.ID
		}
		plain := judgeWith("Plain", "max_tokens")
		reasoning := judgeWith("Reasoning", "max_completion_tokens")
		longestRe := regexp.MustCompile(`data-testid="estimate-longest">~([0-9,]+)<`)
		estimate := func(judgeID int64, method, maxTokens string) (int, string) {
			f := d.launchForm("1", "5")
			f.Set("method", method)
			f.Set("max_tokens", maxTokens)
			f.Set("judge", strconv.FormatInt(judgeID, 10))
			f.Set("project_id", strconv.FormatInt(env.project.ID, 10))
			rec := env.postForm("/runs/estimate", f)
			if rec.Code != http.StatusOK {
				t.Fatalf("estimate: status %d", rec.Code)
			}
			body := rec.Body.String()
			m := longestRe.FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no longest call in the estimate:\n%s", body)
			}
			n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
			return n, body
		}
		// The form sets no max tokens (the API does): BatchEval's and
		// LLM-Eval's calls are sent no cap, G-Eval's form answer always
		// its 5 tokens.
		tests := []struct {
			method, maxTokens string
			// extra is what the reasoning judge's longest call adds.
			extra int
		}{
			{"batcheval", "", 0},
			{"llmeval", "", 0},
			{"geval", "", judge.ReasoningAllowance},
		}
		for _, tt := range tests {
			t.Run(tt.method+"/max_tokens="+tt.maxTokens, func(t *testing.T) {
				p, pbody := estimate(plain, tt.method, tt.maxTokens)
				r, rbody := estimate(reasoning, tt.method, tt.maxTokens)
				if r-p != tt.extra {
					t.Errorf("longest call: reasoning judge %d tokens, plain %d: differ by %d, want %d", r, p, r-p, tt.extra)
				}
				if got, want := strings.Contains(rbody, `data-testid="estimate-reasoning-room"`), tt.extra > 0; got != want {
					t.Errorf("reasoning judge: the note on the reasoning's room shown %v, want %v:\n%s", got, want, rbody)
				}
				if strings.Contains(pbody, "estimate-reasoning") {
					t.Errorf("plain judge: a note on reasoning is shown")
				}
				// The reasoning billed as completion tokens is said,
				// whatever the method.
				if !strings.Contains(rbody, `data-testid="estimate-reasoning"`) {
					t.Errorf("reasoning judge: no note that its reasoning is billed beyond the completion tokens:\n%s", rbody)
				}
			})
		}
	})
}
