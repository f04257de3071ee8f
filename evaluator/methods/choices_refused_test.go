package methods

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// TestSampledMethodsOnAnEndpointThatRefusesSeveralChoices: llama.cpp's
// server answers a request with n above 1 with HTTP 400 "Only one
// completion choice is allowed" (regression: every CloserLook sample, and
// every G-Eval sample without log-probabilities, failed with that error and
// the run failed). The methods then ask for one answer a call and score the
// sample; a refusal that is not about n (a prompt too long) is not hidden.
func TestSampledMethodsOnAnEndpointThatRefusesSeveralChoices(t *testing.T) {
	rub := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 1, Hi: 3}}}
	llamacpp := func(r judge.Request) (judge.Response, error) {
		if r.N > 1 {
			return judge.Response{}, &judge.Error{Kind: judge.KindBadRequest, Status: http.StatusBadRequest, Attempts: 1, Message: "invalid_request_error: Only one completion choice is allowed"}
		}
		return judge.Response{Choices: []judge.Choice{{Text: "Fine.\nRating: 2"}}, Attempts: 1, PromptTokens: 10, CompletionTokens: 3}, nil
	}
	tooLong := func(r judge.Request) (judge.Response, error) {
		return judge.Response{}, &judge.Error{Kind: judge.KindBadRequest, Status: http.StatusBadRequest, Attempts: 1, Message: "This model's maximum context length is 4096 tokens. However, your messages resulted in 5000 tokens."}
	}
	tests := []struct {
		name      string
		method    Method
		fn        func(judge.Request) (judge.Response, error)
		wantCalls int32
		wantScore bool
	}{
		{"CloserLook on llama.cpp", CloserLook{}, llamacpp, 1 + 4, true},
		{"G-Eval without logprobs on llama.cpp", GEval{}, llamacpp, 1 + 4, true},
		{"CloserLook, prompt too long", CloserLook{}, tooLong, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &completer{fn: tt.fn}
			ms := evaluator.DefaultMethodSettings()
			ms.Samples, ms.UseLogprobs = 4, false
			run := Run{Settings: evaluator.DefaultSettings(), MethodSettings: ms, Rubric: rub}
			if err := tt.method.Prepare(&run); err != nil {
				t.Fatal(err)
			}
			o := tt.method.Judge(context.Background(), c, Unit{Run: run, Criteria: []int{0}, Samples: []evaluator.Sample{{}}, Memo: NewMemo(nil)})
			if got := c.calls.Load(); got != tt.wantCalls {
				t.Errorf("%d calls, want %d", got, tt.wantCalls)
			}
			if !tt.wantScore {
				if !o.Failed || o.Err == nil || !strings.Contains(o.Err.Error(), "maximum context length") {
					t.Fatalf("failed %v, err %v: want the unit failed with the endpoint's own refusal", o.Failed, o.Err)
				}
				return
			}
			if o.Failed || o.Err != nil {
				t.Fatalf("failed %v, err %v, problems %q: want a score from one answer a call", o.Failed, o.Err, o.Problems)
			}
			if len(o.Scores) != 1 || o.Scores[0].Value == nil || *o.Scores[0].Value != 2 {
				t.Fatalf("scores %v, want 2", o.Scores)
			}
			if o.Received != 4 || o.Calls != 5 || o.Answered != 4 || o.Details["n_refused"] != true {
				t.Errorf("received %d, calls %d, answered %d, details %v; want 4 answers from 4 calls after 1 refused", o.Received, o.Calls, o.Answered, o.Details)
			}
			if len(o.Problems) == 0 || !strings.Contains(o.Problems[0], "one answer a call") {
				t.Errorf("problems %q, want the refusal said", o.Problems)
			}
		})
	}
}
