package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// TestTokenLimitReservesTheCapSent: a judge's shared tokens-per-minute
// limit reserves, before a call goes, its prompt and the answer's cap as
// the request sends it. A reasoning judge (max_completion_tokens) is sent
// the run's cap plus judge.ReasoningAllowance, and may use all of it:
// reserving only the run's cap (as before) let its calls past a shared
// limit by 25,000 tokens each, and the endpoint answered 429.
func TestTokenLimitReservesTheCapSent(t *testing.T) {
	t.Parallel()
	const tpm = 10_000_000 // room for every call at once: no wait
	prompt := strings.Repeat("word ", 80)
	promptTokens := len(prompt) / 4
	tests := []struct {
		name      string
		sends     string // the run's judge snapshot's token limit
		effort    string // and its reasoning effort
		maxTokens int
		want      int
	}{
		{"plain judge, cap", "", "", 300, promptTokens + 300},
		{"plain judge, no cap", "", "", 0, promptTokens + defaultAnswerTokens},
		{"reasoning judge, cap", string(judge.TokenLimitMaxCompletionTokens), "", 300, promptTokens + 300 + judge.ReasoningAllowance},
		{"reasoning judge, G-Eval's cap of 5", string(judge.TokenLimitMaxCompletionTokens), "", 5, promptTokens + 5 + judge.ReasoningAllowance},
		// No cap sent: the reasoning is billed all the same, so the
		// guess keeps its room (it was 256 alone).
		{"reasoning judge, no cap", string(judge.TokenLimitMaxCompletionTokens), "", 0, promptTokens + defaultAnswerTokens + judge.ReasoningAllowance},
		// A reasoning effort sent with max_tokens: with no cap its
		// reasoning is billed too (it reserved 256 alone); a cap bounds it.
		{"reasoning effort with max_tokens, no cap", "", "high", 0, promptTokens + defaultAnswerTokens + judge.ReasoningAllowance},
		{"reasoning effort with max_tokens, cap", "", "low", 300, promptTokens + 300},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				judgeID := limitedJudge(t, env, "http://judge.test/v1", models.JudgeLimits{TokensPerMinute: tpm})
				run := models.Run{ID: 1, JudgeID: &judgeID, JudgeSnapshot: models.JudgeSnapshot{
					BaseURL: "http://judge.test/v1", Model: "fake-judge", MaxConcurrency: 1, TokenLimit: tt.sends, ReasoningEffort: tt.effort}}
				b, err := env.jobs.budgetFor(ctx, run)
				if err != nil {
					t.Fatal(err)
				}
				defer b.close()
				req := judge.Request{Messages: []evaluator.Message{{Role: "user", Content: prompt}}, MaxTokens: tt.maxTokens}
				release, est, err := b.acquire(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				release()
				if est != tt.want {
					t.Errorf("reserved %d tokens, want %d (prompt %d + the cap sent)", est, tt.want, promptTokens)
				}
				// What the shared bucket lost is that reservation.
				lim, err := env.db.FindJudgeLimits(ctx, judgeID)
				if err != nil {
					t.Fatal(err)
				}
				full := int64(tpm) * 1000 / 60
				if took := (full - lim.TokenMilli) / 1000; took != int64(tt.want) {
					t.Errorf("the judge's bucket gave %d tokens, want %d", took, tt.want)
				}
			})
		}
	})
}
