package web

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/report"
)

// TestProvenanceSaysWhatMaxTokensZeroMeans: the run page's settings line
// showed "max_tokens=0" with nothing to say it means no cap (a newcomer
// read it as answers of no tokens). The page now says so under the line
// when the method reads the setting; the line itself keeps the JSON name
// and value the exports use.
func TestProvenanceSaysWhatMaxTokensZeroMeans(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxTokens int
		unread    []methods.Setting
		want      bool
	}{
		{"no cap", 0, nil, true},
		{"a cap", 512, nil, false},
		{"no cap, a method that does not read it", 0, []methods.Setting{methods.SettingMaxTokens}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := evaluator.DefaultSettings()
			s.MaxTokens = tc.maxTokens
			p := report.Provenance{Settings: s, Unread: tc.unread}
			var buf bytes.Buffer
			if err := RunProvenance(p).Render(context.Background(), &buf); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			if got := strings.Contains(page, `data-testid="provenance-uncapped"`); got != tc.want {
				t.Fatalf("note shown %v, want %v:\n%s", got, tc.want, page)
			}
			if tc.want && !strings.Contains(page, "no cap was set on the judge") {
				t.Errorf("the note does not say max_tokens=0 is no cap:\n%s", page)
			}
			if !tc.want && strings.Contains(page, "no cap was set") {
				t.Errorf("the page says no cap where %d was set or not read", tc.maxTokens)
			}
		})
	}
}
