package handlers

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
)

// TestComparePairedFiguresSayWhichSamples: when the two runs left
// different samples without a score, each run's card gives its agreement
// with the humans over its own samples while the paired table gives it
// over the samples both runs scored, so the same run showed two different
// coefficients (Pearson r 0.032 over 38 samples on its card, -0.039 over
// 33 in the table) with nothing to say why, under a note that both runs
// "judged the same samples". The page now says over which samples the
// paired figures are, and only when the counts differ.
func TestComparePairedFiguresSayWhichSamples(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Twelve rated", 12)
		tests := []struct {
			name                     string
			unreadableA, unreadableB int
			want                     string // "" : no note
		}{
			{"different samples missing", 0, 1, "The paired figures are over the 6 samples that both runs scored and the humans rated; " +
				"each run's own agreement on its card above is over its own 7 (A) and 7 (B), so its figure there can differ from the one here."},
			{"the same samples missing", 2, 2, ""},
		}
		for _, tc := range tests {
			a := env.partialRun(d, tc.name+" A", tc.unreadableA, true)
			b := env.partialRun(d, tc.name+" B", tc.unreadableB, true)
			body := html.UnescapeString(env.get(fmt.Sprintf("/compare?a=%d&b=%d", a.ID, b.ID)).Body.String())
			if !strings.Contains(body, `data-testid="agreement-table"`) {
				t.Fatalf("%s: no agreement table: %.3000s", tc.name, body)
			}
			block := testidBlock(body, "paired-note")
			got := strings.TrimSpace(regexp.MustCompile(`\s+`).ReplaceAllString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(block, " "), " "))
			if got != tc.want {
				t.Errorf("%s: paired note %q, want %q", tc.name, got, tc.want)
			}
		}
	})
}
