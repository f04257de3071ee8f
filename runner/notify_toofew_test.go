package runner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestWebhookCountsTooFewScores: the run-end message counts the scores
// left missing for too few readable answers (Run.TooFewScores) apart from
// the unreadable ones, as the run page and the API do: too_few_scores in
// its run object and its own sentence in the text (regression: they were
// said to be scores that "could not be read", and the field was absent).
func TestWebhookCountsTooFewScores(t *testing.T) {
	cases := []struct {
		name            string
		missing, tooFew int
		want, notWant   []string
	}{
		{"all too few", 3, 3, []string{" 3 scores are missing for too few readable answers."}, []string{"could not be read"}},
		{"one too few, one unreadable", 2, 1, []string{" 1 score could not be read.", " 1 score is missing for too few readable answers."}, nil},
		{"unreadable only", 2, 0, []string{" 2 scores could not be read."}, []string{"too few"}},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				run := models.Run{ID: 7, Name: "CloserLook", Method: models.MethodCloserLook, Status: models.RunFinishedWithGaps, MissingScores: tc.missing, TooFewScores: tc.tooFew}
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
				if got, ok := body.Run["too_few_scores"].(float64); !ok || int(got) != tc.tooFew {
					t.Errorf("run.too_few_scores = %v in %s, want %d", body.Run["too_few_scores"], b, tc.tooFew)
				}
				for _, w := range tc.want {
					if !strings.Contains(m.Text, w) {
						t.Errorf("text %q does not say %q", m.Text, w)
					}
				}
				for _, w := range tc.notWant {
					if strings.Contains(m.Text, w) {
						t.Errorf("text %q says %q", m.Text, w)
					}
				}
			})
		}
	})
}
