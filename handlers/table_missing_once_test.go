package handlers

import (
	"strings"
	"testing"
)

// TestTableDiffMissingSaysNoHumanRatingOnce: a difference missing for want
// of a human rating says "no human rating" once, whatever the rating's
// reason (humanMissingReason's words), where the dataset's reason was
// wrapped as "no human rating (no human rating in the dataset…)" in the
// cell's hover and screen-reader text.
func TestTableDiffMissingSaysNoHumanRatingOnce(t *testing.T) {
	final := "no round gave a readable score: the judge's answer could not be read or its call failed (the sample's page says which)"
	tests := []struct {
		name, finalWhy, humanWhy, want string
	}{
		{"dataset", "", "no human rating in the dataset for this sample",
			"no difference without both a score and a rating: no human rating in the dataset for this sample"},
		{"dataset and browser", "", "no human rating in the dataset for this sample, and not rated yet in the browser",
			"no difference without both a score and a rating: no human rating in the dataset for this sample, and not rated yet in the browser"},
		{"browser only", "", "not rated yet in the browser",
			"no difference without both a score and a rating: no human rating (not rated yet in the browser)"},
		{"no column", "", "the rubric names no human-rating column for this criterion",
			"no difference without both a score and a rating: no human rating (the rubric names no human-rating column for this criterion)"},
		{"both missing", final, "no human rating in the dataset for this sample",
			"no difference without both a score and a rating: no final score (" + final + "); no human rating in the dataset for this sample"},
		{"neither", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tableDiffMissing(tt.finalWhy, tt.humanWhy)
			if got != tt.want {
				t.Errorf("tableDiffMissing(%q, %q)\n got %q\nwant %q", tt.finalWhy, tt.humanWhy, got, tt.want)
			}
			if n := strings.Count(got, "no human rating"); tt.humanWhy != "" && n != 1 {
				t.Errorf("%q says \"no human rating\" %d times, want once", got, n)
			}
		})
	}
}
