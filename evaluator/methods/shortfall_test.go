package methods

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// TestSampledShortfallOutcome: a sampled unit (G-Eval without
// log-probabilities, CloserLook) whose top-up call fails after the first
// answered part of the asked answers (regression: the error was dropped
// and the unit looked whole). With at least half the answers the score is
// kept, the shortfall recorded and the error kept in Err, so that a stop
// of the whole run (a long rate limit) leaves the unit for the resume
// instead of storing it short; with fewer than half the unit fails.
func TestSampledShortfallOutcome(t *testing.T) {
	rub := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 1, Hi: 3}}}
	rateLimited := &judge.Error{Kind: judge.KindRateLimited, Status: http.StatusTooManyRequests, Attempts: 1, Message: "slow down"}
	server := &judge.Error{Kind: judge.KindServer, Status: http.StatusBadGateway, Attempts: 1, Message: "bad gateway"}
	tests := []struct {
		name       string
		method     Method
		first      int // choices of the first call, of 20 asked
		topUp      error
		wantFailed bool
	}{
		{"G-Eval, 12 of 20, server error", GEval{}, 12, server, false},
		{"G-Eval, 12 of 20, rate limited", GEval{}, 12, rateLimited, false},
		{"G-Eval, 10 of 20", GEval{}, 10, server, false},
		{"G-Eval, 9 of 20", GEval{}, 9, server, true},
		{"CloserLook, 12 of 20", CloserLook{}, 12, server, false},
		{"CloserLook, 5 of 20, rate limited", CloserLook{}, 5, rateLimited, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &completer{fn: func(r judge.Request) (judge.Response, error) {
				if r.N != 20 {
					return judge.Response{}, tt.topUp
				}
				var ch []judge.Choice
				for range tt.first {
					ch = append(ch, judge.Choice{Text: "Fine.\nRating: 2"})
				}
				return judge.Response{Choices: ch, Attempts: 1, PromptTokens: 10, CompletionTokens: tt.first}, nil
			}}
			ms := evaluator.DefaultMethodSettings()
			ms.Samples, ms.UseLogprobs = 20, false
			run := Run{Settings: evaluator.DefaultSettings(), MethodSettings: ms, Rubric: rub}
			if err := tt.method.Prepare(&run); err != nil {
				t.Fatal(err)
			}
			o := tt.method.Judge(context.Background(), c, Unit{Run: run, Criteria: []int{0}, Samples: []evaluator.Sample{{}}, Memo: NewMemo(nil)})
			if o.Asked != 20 || o.Received != tt.first || o.Details["asked"] != 20 || o.Details["answered"] != tt.first {
				t.Errorf("asked %d, received %d, details %v; want 20 and %d", o.Asked, o.Received, o.Details, tt.first)
			}
			if !errors.Is(o.Err, tt.topUp) {
				t.Errorf("Err %v, want the top-up's error %v", o.Err, tt.topUp)
			}
			if o.Failed != tt.wantFailed {
				t.Fatalf("failed %v, want %v (problems %q)", o.Failed, tt.wantFailed, o.Problems)
			}
			if tt.wantFailed {
				if len(o.Scores) != 0 {
					t.Errorf("a failed unit has scores %v", o.Scores)
				}
				return
			}
			if len(o.Scores) != 1 || o.Scores[0].Value == nil || *o.Scores[0].Value != 2 {
				t.Errorf("scores %v, want 2 from the answers that came", o.Scores)
			}
			if o.Answered != 1 || o.Calls != 2 || o.PromptTokens != 10 {
				t.Errorf("%d calls, %d answered, %d prompt tokens; want 2, 1, 10", o.Calls, o.Answered, o.PromptTokens)
			}
		})
	}
}

// TestFailedCallsCountBilledTokens: a call that failed for good after
// answers the endpoint billed but that could not be used (a 200 with usage
// and no choices) adds their tokens to the unit, and G-Eval's steps call
// returns them to be counted on the run (regression: they were dropped).
func TestFailedCallsCountBilledTokens(t *testing.T) {
	billed := &judge.Error{Kind: judge.KindMalformed, Status: http.StatusOK, Attempts: 4, PromptTokens: 280, CompletionTokens: 12}
	c := &completer{fn: func(judge.Request) (judge.Response, error) { return judge.Response{}, billed }}
	rub := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 1, Hi: 3}}}
	run := Run{Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(), Rubric: rub}
	for _, m := range []Method{BatchEval{}, LLMEval{}, CloserLook{}} {
		r := run
		if err := m.Prepare(&r); err != nil {
			t.Fatal(err)
		}
		o := m.Judge(context.Background(), c, Unit{Run: r, Criteria: []int{0}, Samples: []evaluator.Sample{{}}, Memo: NewMemo(nil)})
		if !o.Failed || o.PromptTokens != 280 || o.CompletionTokens != 12 || o.Attempts != 4 {
			t.Errorf("%s: failed %v, %d+%d tokens, %d attempts; want failed with 280+12 billed tokens and 4 attempts", m.Name(), o.Failed, o.PromptTokens, o.CompletionTokens, o.Attempts)
		}
	}
	res, err := GEval{}.Setup(context.Background(), c, &run, []int{0})
	if err == nil || res.PromptTokens != 280 || res.CompletionTokens != 12 {
		t.Errorf("G-Eval steps: %d+%d tokens (%v); want 280+12 billed tokens and the error", res.PromptTokens, res.CompletionTokens, err)
	}
}

// TestCallsThatNeverReachedTheJudgeAreNotCounted: a unit whose call failed
// without its request ever being written out (nothing listened at the
// judge's address, judge.Error.NeverSent) counts its attempts but no call
// (regression: a judge that was down added a call per unit to the run's
// "Judge calls"); a call that reached the judge and failed is counted, by
// a unit and by G-Eval's steps call alike.
func TestCallsThatNeverReachedTheJudgeAreNotCounted(t *testing.T) {
	rub := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 1, Hi: 3}}}
	run := Run{Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(), Rubric: rub}
	for _, tc := range []struct {
		name  string
		err   *judge.Error
		calls int
	}{
		{"nothing listened", &judge.Error{Kind: judge.KindNetwork, Attempts: 3, NeverSent: true}, 0},
		{"the judge failed", &judge.Error{Kind: judge.KindServer, Status: http.StatusBadGateway, Attempts: 3}, 1},
	} {
		c := &completer{fn: func(judge.Request) (judge.Response, error) { return judge.Response{}, tc.err }}
		for _, m := range []Method{BatchEval{}, LLMEval{}, CloserLook{}} {
			r := run
			if err := m.Prepare(&r); err != nil {
				t.Fatal(err)
			}
			o := m.Judge(context.Background(), c, Unit{Run: r, Criteria: []int{0}, Samples: []evaluator.Sample{{}}, Memo: NewMemo(nil)})
			if !o.Failed || o.Calls != tc.calls || o.Attempts != 3 {
				t.Errorf("%s, %s: failed %v, %d calls, %d attempts; want failed, %d calls, 3 attempts", tc.name, m.Name(), o.Failed, o.Calls, o.Attempts, tc.calls)
			}
		}
		// G-Eval's steps call: counted when it reached the judge
		// (regression: a failed one was never counted).
		r := run
		res, err := GEval{}.Setup(context.Background(), c, &r, []int{0})
		if err == nil || res.Calls != tc.calls {
			t.Errorf("%s, G-Eval steps: %d calls (%v), want %d and the error", tc.name, res.Calls, err, tc.calls)
		}
	}
}
