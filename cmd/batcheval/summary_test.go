package main

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestRunSummaryLineCountsShortScores: `batcheval run`'s summary line says
// how many scores were computed from fewer sampled answers than asked, as
// the run page, the API and the webhook do (regression: it left them out,
// so a G-Eval run with a shortfall read as complete on the command line).
func TestRunSummaryLineCountsShortScores(t *testing.T) {
	cases := []struct {
		short int
		want  string // "" when the line must not mention them
	}{
		{3, "; 3 scores computed from fewer sampled answers than asked"},
		{1, "; 1 score computed from fewer sampled answers than asked"},
		{0, ""},
	}
	for _, tc := range cases {
		run := models.Run{ID: 4, Calls: 40, PromptTokens: 900, CompletionTokens: 80, Simulated: true, ShortScores: tc.short}
		line := runSummaryLine(run)
		if !strings.HasPrefix(line, "run 4: 40 judge calls, 0 judge retries, 900 prompt + 80 completion tokens, cost $0 (simulated judge)") {
			t.Errorf("%d short: summary line %q lost its figures", tc.short, line)
		}
		if tc.want != "" && !strings.HasSuffix(line, tc.want) {
			t.Errorf("%d short: summary line %q does not end with %q", tc.short, line, tc.want)
		}
		if tc.want == "" && strings.Contains(line, "fewer") {
			t.Errorf("summary line %q mentions short scores the run does not have", line)
		}
	}
}
