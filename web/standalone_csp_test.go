package web

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/a-h/templ"
)

// TestStandaloneReportsCarryTheirCSP: every downloadable report (a run's,
// streamed or whole, and an experiment's) says in its own head, before
// anything it loads or styles, that it runs no script and fetches
// nothing, and sends no Referer when a link is followed. A downloaded
// report is opened from disk or a mail, where the server's
// Content-Security-Policy header never reaches: it had none, so markup in
// it (were dataset or judge text ever written unescaped) could run a
// script or load an address telling a third party who opened the file.
func TestStandaloneReportsCarryTheirCSP(t *testing.T) {
	csp := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`)
	for _, tc := range []struct {
		name string
		c    templ.Component
	}{
		{"run report", StandaloneRunReport(StandaloneRunView{})},
		{"streamed run report", StandaloneRunFrame(StandaloneRunView{}, templ.NopComponent, templ.NopComponent)},
		{"experiment report", StandaloneExperimentReport(ExperimentView{}, time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC))},
	} {
		var buf bytes.Buffer
		if err := tc.c.Render(context.Background(), &buf); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		page := buf.String()
		head, _, _ := strings.Cut(page, "</head>")
		m := csp.FindStringSubmatchIndex(head)
		if m == nil {
			t.Errorf("%s: no Content-Security-Policy meta in its head:\n%.600s", tc.name, head)
			continue
		}
		policy := strings.ReplaceAll(head[m[2]:m[3]], "&#39;", "'")
		if policy != StandaloneCSP || !strings.Contains(policy, "default-src 'none'") || strings.Contains(policy, "script-src") {
			t.Errorf("%s: policy %q, want %q (no script, nothing fetched)", tc.name, policy, StandaloneCSP)
		}
		if style := strings.Index(head, "<style"); style >= 0 && style < m[0] {
			t.Errorf("%s: the policy comes after the style it should govern", tc.name)
		}
		if !strings.Contains(head, `<meta name="referrer" content="no-referrer">`) {
			t.Errorf("%s: no referrer policy in its head", tc.name)
		}
		if strings.Contains(page, "<script") {
			t.Errorf("%s: holds a script, which its policy would block", tc.name)
		}
	}
}
