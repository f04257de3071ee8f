package judge

import (
	"context"
	"testing"
)

// TestBilledUnusableAnswersAreCounted: a 200 answer that carries usage but
// no choices is retried as malformed, and its usage, which the provider
// billed, is no longer dropped (regression): a retry that works carries it
// in its Response's tokens, a call that fails for good in its Error's
// (BilledOf), summed over the attempts.
func TestBilledUnusableAnswersAreCounted(t *testing.T) {
	const maxAttempts = 4 // testConfig's
	empty := reply{status: 200, body: `{"id":"x","choices":[],"usage":{"prompt_tokens":70,"completion_tokens":3,"total_tokens":73}}`}
	bare := reply{status: 200, body: `{"id":"x","choices":[]}`}
	tests := []struct {
		name                  string
		replies               []reply
		wantErr               bool
		wantPrompt, wantCompl int // beyond the successful answer's own usage
	}{
		{"usage without choices, then 200", []reply{empty, ok}, false, 70, 3},
		{"twice, then 200", []reply{empty, empty, ok}, false, 140, 6},
		{"no usage, no choices, then 200", []reply{bare, ok}, false, 0, 0},
		{"always usage without choices", []reply{empty}, true, 70 * maxAttempts, 3 * maxAttempts},
	}
	base := func(t *testing.T) (int, int) {
		f := newFake(t, ok)
		resp, err := mustNew(t, testConfig(f)).Complete(context.Background(), simpleRequest())
		if err != nil {
			t.Fatal(err)
		}
		return resp.PromptTokens, resp.CompletionTokens
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.replies...)
			resp, err := mustNew(t, testConfig(f)).Complete(context.Background(), simpleRequest())
			if tt.wantErr {
				e := judgeError(t, err)
				if e.Kind != KindMalformed {
					t.Errorf("kind %q, want malformed", e.Kind)
				}
				if p, c := BilledOf(err); p != tt.wantPrompt || c != tt.wantCompl {
					t.Errorf("billed %d+%d tokens, want %d+%d", p, c, tt.wantPrompt, tt.wantCompl)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p0, c0 := base(t)
			if resp.PromptTokens != p0+tt.wantPrompt || resp.CompletionTokens != c0+tt.wantCompl {
				t.Errorf("tokens %d+%d, want %d+%d (the answer's %d+%d and the unusable ones')",
					resp.PromptTokens, resp.CompletionTokens, p0+tt.wantPrompt, c0+tt.wantCompl, p0, c0)
			}
		})
	}
}
