package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestWebhookQuotesNoJudgeDetails: a failed run's message gives its reason
// as a share link does, in the product's own words, both in the text and
// in run.error: a chat channel may be wider than the workspace.
// Regression: the message quoted the reason whole, with what the judge
// client quotes after it (the judge's private address, this server's
// network settings) and the raw text of an internal error (the database's
// host and address, file paths, SQL), to everyone in the channel.
func TestWebhookQuotesNoJudgeDetails(t *testing.T) {
	cases := []struct {
		name, stored, want string
		secrets            []string
	}{
		{"judge client's details",
			"the run stopped, since no call can succeed until the judge's settings are corrected: " +
				"this server does not call judges at that address. Details: connecting to 10.20.30.40:8000 is not allowed: " +
				"private-network addresses are off on this server (BATCHEVAL_JUDGE_ALLOW_PRIVATE or --judge-allow-private)",
			"this server does not call judges at that address (the judge's own message is on the run's page, for members of its workspace)",
			[]string{"10.20.30.40", "BATCHEVAL_JUDGE_ALLOW_PRIVATE"}},
		{"internal error",
			"load dataset rows: failed to connect to `host=db.internal user=batcheval database=batcheval`: dial error (dial tcp 10.1.2.3:5432: connect: connection refused)",
			"the run stopped on an internal error while reading its dataset",
			[]string{"db.internal", "10.1.2.3"}},
		{"a file and SQL",
			"open /var/lib/batcheval/uploads/ws-4/rubric-77.json: no such file or directory; SELECT * FROM rubrics WHERE id = 77",
			"the run stopped on an internal error",
			[]string{"/var/lib", "SELECT"}},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				run := models.Run{ID: 7, Name: "FED", Status: models.RunFailed, Error: tc.stored}
				m := env.jobs.runMessage(context.Background(), run, "https://eval.example.test")
				if !strings.Contains(m.Run.Error, tc.want) || !strings.Contains(m.Text, " failed: ") || !strings.Contains(m.Text, slackText(tc.want)) {
					t.Errorf("run.error %q / text %q: want the reason %q", m.Run.Error, m.Text, tc.want)
				}
				for _, secret := range tc.secrets {
					if strings.Contains(m.Text, secret) || strings.Contains(m.Run.Error, secret) {
						t.Errorf("the message quotes %q: text %q, run.error %q", secret, m.Text, m.Run.Error)
					}
				}
			})
		}
	})
}
