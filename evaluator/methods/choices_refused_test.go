package methods

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
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

// TestRefusalOfSeveralChoicesIsRememberedPerRun: the refusal of n above 1
// is found out once per run, like G-Eval's logprobs probe (regression:
// every sample paid one refused call first; a llama.cpp CloserLook run of
// 16 samples and 3 answers made 64 calls instead of 49). The units of a
// run share its memo and run side by side; only the lead unit's first call
// is refused, and the units' counted calls add up to the calls sent.
func TestRefusalOfSeveralChoicesIsRememberedPerRun(t *testing.T) {
	rub := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 1, Hi: 3}}}
	var refusals atomic.Int32
	llamacpp := func(r judge.Request) (judge.Response, error) {
		if r.N > 1 {
			refusals.Add(1)
			return judge.Response{}, &judge.Error{Kind: judge.KindBadRequest, Status: http.StatusBadRequest, Attempts: 1, Message: "invalid_request_error: Only one completion choice is allowed"}
		}
		return judge.Response{Choices: []judge.Choice{{Text: "Fine.\nRating: 2"}}, Attempts: 1}, nil
	}
	const samples, answers = 16, 3
	for _, m := range []Method{CloserLook{}, GEval{}} {
		t.Run(m.Label(), func(t *testing.T) {
			refusals.Store(0)
			c := &completer{fn: llamacpp}
			ms := evaluator.DefaultMethodSettings()
			ms.Samples, ms.UseLogprobs = answers, false
			run := Run{Settings: evaluator.DefaultSettings(), MethodSettings: ms, Rubric: rub}
			if err := m.Prepare(&run); err != nil {
				t.Fatal(err)
			}
			memo := NewMemo(nil)
			memo.StartLead()
			outcomes := make([]Outcome, samples)
			var wg sync.WaitGroup
			for i := range samples {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if i == 0 {
						defer memo.EndLead()
					}
					outcomes[i] = m.Judge(context.Background(), c, Unit{Run: run, Criteria: []int{0}, Samples: []evaluator.Sample{{}}, Memo: memo, Lead: i == 0})
				}()
			}
			wg.Wait()
			want := int32(1 + samples*answers)
			if got := c.calls.Load(); got != want || refusals.Load() != 1 {
				t.Errorf("%d calls (%d refused), want %d (1 refused)", got, refusals.Load(), want)
			}
			counted := 0
			for i, o := range outcomes {
				counted += o.Calls
				if o.Failed || len(o.Scores) != 1 || o.Scores[0].Value == nil || o.Received != answers {
					t.Errorf("sample %d: failed %v, err %v, received %d: want a score from %d answers", i, o.Failed, o.Err, o.Received, answers)
				}
				if o.Details["one_answer_a_call"] != true {
					t.Errorf("sample %d: details %v, want one_answer_a_call", i, o.Details)
				}
			}
			if counted != int(want) {
				t.Errorf("the units counted %d calls, %d were sent", counted, want)
			}
			if got := memo.Known()[memoSeveralChoices]; got != choicesRefused {
				t.Errorf("memo %q = %q, want %q (stored with the run for a resume)", memoSeveralChoices, got, choicesRefused)
			}
			// A resume starts from what the run learned: no refused call.
			before := c.calls.Load()
			o := m.Judge(context.Background(), c, Unit{Run: run, Criteria: []int{0}, Samples: []evaluator.Sample{{}}, Memo: NewMemo(memo.Known()), Lead: true})
			if got := c.calls.Load() - before; got != answers || o.Calls != answers {
				t.Errorf("resumed unit: %d calls sent, %d counted, want %d", got, o.Calls, answers)
			}
		})
	}
}
