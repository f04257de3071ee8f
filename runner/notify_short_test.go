package runner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestWebhookCountsShortScores: the run-end message carries the scores
// computed from fewer sampled answers than asked, as the run page and the
// API do: short_scores in its run object (0 included, as missing_scores)
// and a sentence in its text when there are any (regression: the webhook
// left them out, so a receiver read such a run as complete).
func TestWebhookCountsShortScores(t *testing.T) {
	cases := []struct {
		name     string
		short    int
		wantText string // "" when the text must not mention them
	}{
		{"three short scores", 3, " 3 scores were computed from fewer sampled answers than asked."},
		{"one short score", 1, " 1 score was computed from fewer sampled answers than asked."},
		{"none", 0, ""},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				run := models.Run{ID: 7, Name: "G-Eval", Method: models.MethodGEval, Status: models.RunSucceeded, ShortScores: tc.short}
				m := env.jobs.runMessage(context.Background(), run, "https://eval.example.test")
				b, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				var body struct {
					Run map[string]any `json:"run"`
				}
				if err := json.Unmarshal(b, &body); err != nil {
					t.Fatal(err)
				}
				if got, ok := body.Run["short_scores"].(float64); !ok || int(got) != tc.short {
					t.Errorf("run.short_scores = %v in %s, want %d", body.Run["short_scores"], b, tc.short)
				}
				if tc.wantText != "" && !strings.Contains(m.Text, tc.wantText) {
					t.Errorf("text %q does not say %q", m.Text, tc.wantText)
				}
				if tc.wantText == "" && strings.Contains(m.Text, "fewer") {
					t.Errorf("text %q mentions short scores the run does not have", m.Text)
				}
			})
		}
	})
}
