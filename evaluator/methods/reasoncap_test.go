package methods

import (
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// TestEstimateAnswerRoomIsTheCapSent: the longest call's answer room is
// the cap the judge is sent (judge.TokenLimit.SentCap): a run's own max
// tokens, plus judge.ReasoningAllowance for a reasoning judge; the
// expected answer when no cap is sent. Before, a reasoning judge's room
// was the run's cap alone, 25,000 tokens short of what the call may use.
func TestEstimateAnswerRoomIsTheCapSent(t *testing.T) {
	rubric := evaluator.Rubric{Task: "t", Criteria: []evaluator.Criterion{{Name: "Criterion", Lo: 1, Hi: 5}}}
	samples := []evaluator.Sample{{ID: "1"}}
	tests := []struct {
		name      string
		method    Method
		sends     judge.TokenLimit
		maxTokens int
		want      int
	}{
		{"batcheval plain, cap", BatchEval{}, judge.TokenLimitMaxTokens, 300, 300},
		{"batcheval reasoning, cap", BatchEval{}, judge.TokenLimitMaxCompletionTokens, 300, 300 + judge.ReasoningAllowance},
		{"batcheval reasoning, no cap", BatchEval{}, judge.TokenLimitMaxCompletionTokens, 0, batchTokensPerSample},
		{"llmeval plain, cap", LLMEval{}, "", 200, 200},
		{"llmeval reasoning, cap", LLMEval{}, judge.TokenLimitMaxCompletionTokens, 200, 200 + judge.ReasoningAllowance},
		{"closerlook reasoning, cap", CloserLook{}, judge.TokenLimitMaxCompletionTokens, 400, 400 + judge.ReasoningAllowance},
		{"closerlook plain, no cap", CloserLook{}, "", 0, closerLookTokens},
		{"geval plain", GEval{}, "", 0, gevalFormMaxTokens},
		{"geval reasoning", GEval{}, judge.TokenLimitMaxCompletionTokens, 0, gevalFormMaxTokens + judge.ReasoningAllowance},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Run{Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(), Rubric: rubric}
			r.Settings.BatchSize = 1
			r.Settings.MaxTokens = tt.maxTokens
			if err := tt.method.Prepare(&r); err != nil {
				t.Fatal(err)
			}
			e := tt.method.Estimate(EstimateInput{Run: r, Rows: 1, First: samples, Longest: samples, TokenLimit: tt.sends})
			if e.AnswerRoom != tt.want {
				t.Errorf("answer room %d, want %d", e.AnswerRoom, tt.want)
			}
		})
	}
}
