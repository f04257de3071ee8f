package evaluator

import (
	"strings"
	"testing"
)

// TestReadScoreCheck: the answer to "Test connection"'s scoring request is
// read as a run reads a batch answer; a greeting, a bare number or a score
// outside the scale is no score.
func TestReadScoreCheck(t *testing.T) {
	tests := []struct {
		answer string
		want   float64
		ok     bool
	}{
		{"Float Scores: [Sample1:4.5]", 4.5, true},
		{"Sure.\nFloat Scores: [Sample1: 3]", 3, true},
		{"**Float Scores:** [Sample1:2.0] (simulated judge)", 2, true},
		{"Sample1: 5", 5, true},
		{"ok", 0, false},
		{"", 0, false},
		{"4", 0, false},
		{"Float Scores: [Sample1:9]", 0, false},
		{"Float Scores: [Sample1:<score>]", 0, false},
		{"I cannot help with that.", 0, false},
	}
	for _, tt := range tests {
		got, ok := ReadScoreCheck(tt.answer)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ReadScoreCheck(%q) = %v, %v; want %v, %v", tt.answer, got, ok, tt.want, tt.ok)
		}
	}
}

// TestScoreCheckPromptIsSmall: the prompt asks for the batch prompts'
// score-list template and stays a few dozen tokens, so a test of a judge
// costs next to nothing.
func TestScoreCheckPromptIsSmall(t *testing.T) {
	msgs := ScoreCheckMessages()
	if n := EstimateTokens(msgs); n > 100 {
		t.Errorf("the score check's prompt is about %d tokens, want at most 100", n)
	}
	last := msgs[len(msgs)-1].Content
	for _, want := range []string{"Float Scores: [Sample1:<score>]", "a float score within [1, 5]", "Sample1: "} {
		if !strings.Contains(last, want) {
			t.Errorf("the score check's prompt lacks %q:\n%s", want, last)
		}
	}
}
