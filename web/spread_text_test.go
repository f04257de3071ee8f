package web

import (
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
)

// TestRepeatabilitySpreadSaysWhenThereIsNone: the run page's
// repeatability (Pearson over a run and its reseeds, mean ± standard
// deviation) printed "± 0.000" for three cases that mean different
// things: the reseeds scored exactly alike (no spread), a spread below
// half a thousandth (a spread, too small for three decimals) and, with
// the reseeds' Pearson undefined, one run only ("± —"). Each now says
// what it is.
func TestRepeatabilitySpreadSaysWhenThereIsNone(t *testing.T) {
	for _, tt := range []struct {
		name   string
		values []float64
		want   string
	}{
		{"three runs alike", []float64{0.712, 0.712, 0.712}, "0.712 in all 3 runs: no spread"},
		{"a spread below 0.0005", []float64{0.7121, 0.7123, 0.7122}, "0.7122 ± 0.0001 (0.7121 to 0.7123)"},
		{"one run with a figure", []float64{0.712, stats.SpreadOf(nil).Mean}, "0.712 (one run with a Pearson r: no spread to measure)"},
		{"no run with a figure", nil, "no run has a Pearson r"},
		{"a usual spread", []float64{0.61, 0.7, 0.65}, "0.653 ± 0.045 (0.610 to 0.700)"},
	} {
		if got := runSpreadText(stats.SpreadOf(tt.values)); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		v    float64
		want int
	}{{0, 3}, {0.02, 3}, {0.0004, 4}, {-0.00004, 5}, {0.0000004, 6}, {1e-17, 6}} {
		if got := SpreadDecimals(tt.v, 3); got != tt.want {
			t.Errorf("SpreadDecimals(%v, 3) = %d, want %d", tt.v, got, tt.want)
		}
	}
}
