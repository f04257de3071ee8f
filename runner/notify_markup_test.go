package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestWebhookTextEscapesSlackMarkup: a run's name and error reach the
// message's text as the characters typed, never as Slack markup (a
// mention of the whole channel, of a person, or a link of its own under
// any label); the one link in the text is the run's, and the structured
// run.name keeps the name as it is. Regression: a run named "<!channel>"
// notified everyone in the channel, and one named
// "<https://elsewhere.example|Open the run>" put a second link to another
// site in the message.
func TestWebhookTextEscapesSlackMarkup(t *testing.T) {
	cases := []struct {
		name     string
		run      models.Run
		wantText string // the escaped part the text must hold
	}{
		{"mention of the channel in the name",
			models.Run{ID: 7, Name: "<!channel> look", Status: models.RunSucceeded},
			"“&lt;!channel&gt; look”"},
		{"link under another label in the name",
			models.Run{ID: 7, Name: "Q&A <https://elsewhere.example/login|Open the run>", Status: models.RunSucceeded},
			"“Q&amp;A &lt;https://elsewhere.example/login|Open the run&gt;”"},
		{"mention in a criterion's name in the error",
			models.Run{ID: 7, Name: "FED", Status: models.RunFailed,
				Error: `every batch of "<@U024BE7LH> <!here>" failed, even when tried again: the judge is not answering usefully (see the batches for its errors)`},
			"failed: every batch of \"&lt;@U024BE7LH&gt; &lt;!here&gt;\" failed"},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				m := env.jobs.runMessage(context.Background(), tc.run, "https://eval.example.test")
				if !strings.Contains(m.Text, tc.wantText) {
					t.Errorf("text %q does not hold %q", m.Text, tc.wantText)
				}
				// The only markup left is the run's own link, at the end.
				link := "<https://eval.example.test/runs/7|Open the run>"
				if !strings.HasSuffix(m.Text, link) {
					t.Fatalf("text %q does not end with the run's link", m.Text)
				}
				if rest := strings.TrimSuffix(m.Text, link); strings.ContainsAny(rest, "<>") {
					t.Errorf("text %q holds markup besides the run's link", m.Text)
				}
				if m.Run.Name != tc.run.Name {
					t.Errorf("run.name = %q, want the name as typed %q", m.Run.Name, tc.run.Name)
				}
			})
		}
	})
	// Criterion names come from the run's report; they go through the same
	// escaping.
	if got, want := slackText("Fluent <!everyone> & <b>"), "Fluent &lt;!everyone&gt; &amp; &lt;b&gt;"; got != want {
		t.Errorf("slackText = %q, want %q", got, want)
	}
}

// TestWebhookLinkEscapesTheDashboardAddress: the dashboard's address an
// owner set reaches Slack's <url|label> link with "&", "<" and ">" as
// entities and "|" percent-encoded, so the link is the one address and
// its label stays "Open the run". Regression: the address went in as
// typed; "https://eval.example.test/x|<!channel>" ended the URL at "|"
// and put a mention of the whole channel in the label, and an "&" in a
// query was read as the start of an entity.
func TestWebhookLinkEscapesTheDashboardAddress(t *testing.T) {
	cases := []struct {
		name, base, wantLink string
	}{
		{"bar and mention", "https://eval.example.test/x|<!channel>",
			"<https://eval.example.test/x%7C&lt;!channel&gt;/runs/7|Open the run>"},
		{"ampersand in a query-like path", "https://eval.example.test/a&b=c",
			"<https://eval.example.test/a&amp;b=c/runs/7|Open the run>"},
		{"closing bracket", "https://eval.example.test/p>q",
			"<https://eval.example.test/p&gt;q/runs/7|Open the run>"},
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				run := models.Run{ID: 7, Name: "FED", Status: models.RunSucceeded}
				m := env.jobs.runMessage(context.Background(), run, tc.base)
				if !strings.HasSuffix(m.Text, " "+tc.wantLink) {
					t.Fatalf("text %q does not end with the link %q", m.Text, tc.wantLink)
				}
				// One "|" in the text: the one between the link's URL and label.
				if n := strings.Count(m.Text, "|"); n != 1 {
					t.Errorf("text %q holds %d \"|\", want the link's one", m.Text, n)
				}
				if rest := strings.TrimSuffix(m.Text, tc.wantLink); strings.ContainsAny(rest, "<>") {
					t.Errorf("text %q holds markup besides the run's link", m.Text)
				}
				// The structured field keeps the address as it is.
				if want := tc.base + "/runs/7"; m.Run.URL != want {
					t.Errorf("run.url = %q, want %q", m.Run.URL, want)
				}
			})
		}
	})
}
