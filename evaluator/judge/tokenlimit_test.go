package judge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
)

// TestSentCapIsWhatIsSent: SentCap says the cap each token limit sends,
// and the request body carries exactly that number under that limit's
// name, so the runner's limiter and the launch estimate, which read
// SentCap, count what the endpoint is asked to allow.
func TestSentCapIsWhatIsSent(t *testing.T) {
	tests := []struct {
		name  string
		limit TokenLimit
		asked int
		want  int
	}{
		{"default name, cap", "", 300, 300},
		{"max_tokens, cap", TokenLimitMaxTokens, 30, 30},
		{"max_tokens, no cap", TokenLimitMaxTokens, 0, 0},
		{"reasoning, cap", TokenLimitMaxCompletionTokens, 30, 30 + ReasoningAllowance},
		{"reasoning, G-Eval's 5", TokenLimitMaxCompletionTokens, 5, 25005},
		{"reasoning, no cap", TokenLimitMaxCompletionTokens, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.limit.SentCap(tt.asked); got != tt.want {
				t.Fatalf("SentCap(%d) under %q = %d, want %d", tt.asked, tt.limit, got, tt.want)
			}
			ep := newReasoningEndpoint(t, simjudge.Reasoning{})
			cfg := Config{BaseURL: ep.srv.URL + "/v1", Model: "m", TokenLimit: tt.limit, DefaultSamplingOnly: tt.limit == TokenLimitMaxCompletionTokens, MaxAttempts: 1}
			if got := cfg.SentCap(tt.asked); got != tt.want {
				t.Fatalf("Config.SentCap(%d) = %d, want %d", tt.asked, got, tt.want)
			}
			_, _ = mustNew(t, cfg).Complete(context.Background(), Request{Messages: []evaluator.Message{{Role: "user", Content: "hi"}}, MaxTokens: tt.asked})
			calls := ep.calls()
			if len(calls) != 1 {
				t.Fatalf("%d calls, want 1", len(calls))
			}
			name := string(TokenLimitMaxTokens)
			other := string(TokenLimitMaxCompletionTokens)
			if tt.limit == TokenLimitMaxCompletionTokens {
				name, other = other, name
			}
			if _, ok := calls[0][other]; ok {
				t.Errorf("body has %s: %s", other, calls[0][other])
			}
			raw, ok := calls[0][name]
			if tt.want == 0 {
				if ok {
					t.Errorf("no cap asked, body has %s: %s", name, raw)
				}
				return
			}
			var sent int
			if err := json.Unmarshal(raw, &sent); err != nil || sent != tt.want {
				t.Errorf("body has %s = %s, want %d (SentCap)", name, raw, tt.want)
			}
		})
	}
}

// TestAnswerGuess: the answer tokens reckoned for a call before it is sent
// are the cap it sends; with no cap, the caller's guess, plus the
// reasoning's room for a reasoning judge (whose hidden reasoning is billed
// as completion tokens with or without a cap; before, it was guessed a
// plain answer's 256).
func TestAnswerGuess(t *testing.T) {
	for _, tc := range []struct {
		limit         TokenLimit
		effort        ReasoningEffort
		cap, uncapped int
		want          int
	}{
		{TokenLimitMaxTokens, "", 300, 256, 300},
		{TokenLimitMaxTokens, "", 0, 256, 256},
		{"", "", 0, 256, 256},
		{TokenLimitMaxCompletionTokens, "", 300, 256, 300 + ReasoningAllowance},
		{TokenLimitMaxCompletionTokens, "", 5, 256, 5 + ReasoningAllowance},
		{TokenLimitMaxCompletionTokens, "", 0, 256, 256 + ReasoningAllowance},
		// A reasoning effort sent with max_tokens (OpenRouter's reasoning
		// models): with no cap, the reasoning's room too (it was 256);
		// with one, the cap bounds the reasoning.
		{TokenLimitMaxTokens, ReasoningEffortHigh, 0, 256, 256 + ReasoningAllowance},
		{"", ReasoningEffortLow, 0, 256, 256 + ReasoningAllowance},
		{TokenLimitMaxTokens, ReasoningEffortMedium, 300, 256, 300},
		{TokenLimitMaxCompletionTokens, ReasoningEffortHigh, 0, 256, 256 + ReasoningAllowance},
		{TokenLimitMaxCompletionTokens, ReasoningEffortHigh, 300, 256, 300 + ReasoningAllowance},
	} {
		if got := tc.limit.AnswerGuess(tc.cap, tc.uncapped, tc.effort); got != tc.want {
			t.Errorf("%q, effort %q, cap %d, uncapped guess %d: %d, want %d", tc.limit, tc.effort, tc.cap, tc.uncapped, got, tc.want)
		}
	}
}
