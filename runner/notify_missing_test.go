package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestWebhookCountsMissingScoresInWords: the run-end message of a run with
// one unreadable score said "1 scores could not be read." (the short
// scores' sentence beside it already had its singular).
func TestWebhookCountsMissingScoresInWords(t *testing.T) {
	cases := []struct {
		missing  int
		wantText string // "" when the text must not mention them
	}{
		{2, " 2 scores could not be read."},
		{1, " 1 score could not be read."},
		{0, ""},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range cases {
			run := models.Run{ID: 7, Name: "Gaps", Method: models.MethodBatchEval, Status: models.RunFinishedWithGaps, MissingScores: tc.missing}
			m := env.jobs.runMessage(context.Background(), run, "https://eval.example.test")
			if tc.wantText != "" && !strings.Contains(m.Text, tc.wantText) {
				t.Errorf("%d missing: text %q does not say %q", tc.missing, m.Text, tc.wantText)
			}
			if tc.wantText == "" && strings.Contains(m.Text, "could not be read") {
				t.Errorf("text %q mentions missing scores the run does not have", m.Text)
			}
		}
	})
}
