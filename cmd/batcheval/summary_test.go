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

// TestSummaryLinesCountTooFewScores: `batcheval run`'s and `batcheval
// resume`'s summary lines say how many scores were left missing for too
// few readable answers (Run.TooFewScores), beside the short scores
// (regression: they counted short scores only, so such scores read as
// plain missing ones, or not at all on `run`'s line).
func TestSummaryLinesCountTooFewScores(t *testing.T) {
	cases := []struct {
		name          string
		short, tooFew int
		want          string // the note's whole text
	}{
		{"two too few", 0, 2, "; 2 scores missing for too few readable answers"},
		{"one too few", 0, 1, "; 1 score missing for too few readable answers"},
		{"short and too few", 3, 1, "; 3 scores computed from fewer sampled answers than asked; 1 score missing for too few readable answers"},
		{"neither", 0, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := models.Run{ID: 4, Calls: 40, Simulated: true, MissingScores: tc.tooFew + 1, ShortScores: tc.short, TooFewScores: tc.tooFew}
			if got := shortScoresNote(run); got != tc.want {
				t.Errorf("note = %q, want %q", got, tc.want)
			}
			if line := runSummaryLine(run); !strings.HasSuffix(line, "(simulated judge)"+tc.want) {
				t.Errorf("summary line %q does not end with %q", line, tc.want)
			}
		})
	}
}
