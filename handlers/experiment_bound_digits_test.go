package handlers

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// TestExperimentBoundsShowTheirSide: the experiment page's paired
// intervals once printed a bound within half a thousandth of 0 as
// "±0.000", which reads as a margin and hides the one thing such a bound
// tells, on which side of no difference it lies (and a lower bound of
// +0.0003 was read as touching 0, so a significant win was called
// borderline). Such a bound now shows its sign with the decimals it needs,
// an exact 0 is "0.000", and the seeds' spread says "no spread" when the
// seeds agree exactly and shows a spread below 0.0005 with its digits.
func TestExperimentBoundsShowTheirSide(t *testing.T) {
	run := func(id int64, name string) models.Run {
		return models.Run{ID: id, Name: name, Status: models.RunSucceeded}
	}
	best := contender{fig: runFigures{run: run(1, "BatchEval"), avgP: 0.412}}
	for _, tt := range []struct {
		name       string
		lo, hi     float64
		line       string
		borderline bool
	}{
		{"low bound just above 0", 0.0003, 0.086, "(95% interval +0.0003 to +0.086,", false},
		{"low bound just below 0", -0.00004, 0.086, "(95% interval −0.00004 to +0.086,", true},
		{"low bound exactly 0", 0, 0.086, "(95% interval 0.000 to +0.086,", true},
		{"bound of float noise", 1e-17, 0.086, "(95% interval 0.000 to +0.086,", true},
		{"bound well clear of 0", 0.012, 0.086, "(95% interval +0.012 to +0.086,", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			test := stats.AveragedDifference{A: 0.412, B: 0.371, Diff: 0.041, CILow: tt.lo, CIHigh: tt.hi, P: 0.02}
			other := contender{fig: runFigures{run: run(2, "G-Eval"), avgP: 0.371}, test: test, adjP: test.P}
			v := verdictOf([]contender{best, other}, nil)
			if len(v.Tests) != 1 || !strings.Contains(v.Tests[0], tt.line) || strings.Contains(v.Tests[0], "±0.000") {
				t.Errorf("test line %q, want it to hold %q and no ±0.000", v.Tests, tt.line)
			}
			if got := strings.Contains(v.Text, "still includes no difference"); got != tt.borderline {
				t.Errorf("verdict %q: says the interval includes no difference %v, want %v", v.Text, got, tt.borderline)
			}
		})
	}

	for _, tt := range []struct {
		name     string
		min, max float64
		band     string
	}{
		{"seeds alike", 0.7, 0.7, "Setup over 3 seeds: average Pearson 0.700 in every run (no spread)"},
		{"small spread", 0.7, 0.7002, "Setup over 3 seeds: average Pearson 0.7000 to 0.7002 (spread 0.0002)"},
		{"usual spread", 0.61, 0.7, "Setup over 3 seeds: average Pearson 0.610 to 0.700 (spread 0.090)"},
	} {
		v := verdictOf(nil, []repeatBand{{parent: run(1, "Setup"), runs: 3, min: tt.min, max: tt.max}})
		if len(v.Bands) != 1 || v.Bands[0] != tt.band {
			t.Errorf("%s: band %q, want %q", tt.name, v.Bands, tt.band)
		}
	}
}
