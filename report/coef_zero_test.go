package report

import "testing"

// TestCommandLineCoefficientHasNoNegativeZero: the command line's table
// prints a coefficient just below zero as the pages do, 0.000, not
// -0.000 (which reads as a disagreement).
func TestCommandLineCoefficientHasNoNegativeZero(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{{-0.0004, "0.000"}, {0.0004, "0.000"}, {-0.0006, "-0.001"}, {0.1234, "0.123"}} {
		if got := f3(tt.v); got != tt.want {
			t.Errorf("f3(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
