package web

import (
	"strings"
	"testing"
)

// TestWebhookPageStatesTheAttempts: the webhook page says how many times
// a delivery is tried, from the view (the runner's setting), not a number
// of its own (regression: it said "three times" while deliveries were
// tried 8 times).
func TestWebhookPageStatesTheAttempts(t *testing.T) {
	for _, n := range []int{8, 3} {
		html := renderString(t, WebhookPage(WebhookView{Attempts: n}))
		want := "tried up to " + map[int]string{8: "8", 3: "3"}[n] + " times"
		if !strings.Contains(html, want) || strings.Contains(html, "three times") {
			t.Errorf("Attempts %d: the page does not say %q", n, want)
		}
	}
}
