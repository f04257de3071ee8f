package stats

import (
	"math"
	"testing"
)

// TestInterpretWordsFollowThePrintedFigures: the reading under each
// correlation names a strength band, calls an interval wide and a p-value
// significant from the figures it prints, so a reader checking the words
// against the numbers beside them finds them consistent. The band was
// chosen on the unrounded coefficient ("Strong agreement (Pearson r = 0.70)" for
// 0.6996, where 0.70 is "very strong"), the interval called wide on the
// unrounded bounds ("wide: 0.35 to 0.65", a width of 0.30 that is not over
// the 0.3 line), a bound or coefficient just below zero printed "-0.00",
// and a p-value just under 5% printed "p = 0.050" beside "unlikely to be
// chance".
func TestInterpretWordsFollowThePrintedFigures(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		c    Correlation
		want string
	}{
		{"very strong at the printed 0.70", Correlation{Coef: 0.6996, P: 1e-30, N: 360, CILow: 0.64, CIHigh: 0.75},
			"Very strong agreement (Pearson r = 0.70) over 360 samples, 95% interval 0.64 to 0.75."},
		{"weak at the printed 0.10", Correlation{Coef: 0.0996, P: 0.09, N: 300, CILow: nan, CIHigh: nan},
			"Weak agreement (Pearson r = 0.10), likely not different from chance (p = 0.090)."},
		{"weak disagreement at the printed -0.10", Correlation{Coef: -0.0996, P: 0.09, N: 300, CILow: nan, CIHigh: nan},
			"Weak disagreement (Pearson r = -0.10), likely not different from chance (p = 0.090)."},
		{"moderate at the printed 0.30", Correlation{Coef: 0.2996, P: 1e-5, N: 300, CILow: 0.19, CIHigh: 0.40},
			"Moderate agreement (Pearson r = 0.30) over 300 samples, 95% interval 0.19 to 0.40."},
		{"still strong at the printed 0.69", Correlation{Coef: 0.6949, P: 1e-30, N: 360, CILow: 0.64, CIHigh: 0.74},
			"Strong agreement (Pearson r = 0.69) over 360 samples, 95% interval 0.64 to 0.74."},
		{"no minus zero coefficient", Correlation{Coef: -0.004, P: 0.94, N: 125, CILow: nan, CIHigh: nan},
			"Negligible agreement (Pearson r = 0.00), likely not different from chance (p = 0.94)."},
		{"no minus zero bound", Correlation{Coef: 0.2, P: 0.02, N: 130, CILow: -0.003, CIHigh: 0.26},
			"Weak agreement (Pearson r = 0.20) over 130 samples, 95% interval 0.00 to 0.26."},
		{"printed width 0.30 is not wide", Correlation{Coef: 0.5, P: 1e-6, N: 60, CILow: 0.3451, CIHigh: 0.6549},
			"Strong agreement (Pearson r = 0.50) over 60 samples, 95% interval 0.35 to 0.65."},
		{"printed width 0.31 is wide", Correlation{Coef: 0.5, P: 1e-6, N: 60, CILow: 0.3449, CIHigh: 0.6549},
			"Strong agreement (Pearson r = 0.50), but with 60 samples the 95% interval is wide: 0.34 to 0.65."},
		{"p just under 5%", Correlation{Coef: 0.2, P: 50.0 / 1001, N: 100, CILow: nan, CIHigh: nan},
			"Weak agreement (Pearson r = 0.20) over 100 samples, unlikely to be chance (p < 0.050)."},
		{"p at 5%", Correlation{Coef: 0.2, P: 0.05, N: 100, CILow: nan, CIHigh: nan},
			"Weak agreement (Pearson r = 0.20), likely not different from chance (p = 0.050)."},
		{"p just under 10%", Correlation{Coef: 0.2, P: 0.0996, N: 100, CILow: nan, CIHigh: nan},
			"Weak agreement (Pearson r = 0.20), likely not different from chance (p = 0.10)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Interpret(MethodPearson, tt.c); got != tt.want {
				t.Errorf("Interpret =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}
