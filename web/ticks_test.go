package web

import (
	"math"
	"slices"
	"testing"
)

func TestNiceTicks(t *testing.T) {
	cases := []struct {
		name     string
		lo, hi   float64
		max      int
		want     []float64
		wantText []string
	}{
		// The experiment chart's bug: 0 to 2310 tokens gave 0, 1004, 2008...
		{"tokens", 0, 2310, 6, []float64{0, 500, 1000, 1500, 2000, 2500}, []string{"0", "500", "1,000", "1,500", "2,000", "2,500"}},
		{"tokens, fewer ticks", 0, 2310, 4, []float64{0, 1000, 2000, 3000}, []string{"0", "1,000", "2,000", "3,000"}},
		{"cost in dollars", 0, 0.00123, 6, []float64{0, 0.0005, 0.001, 0.0015}, []string{"0.0000", "0.0005", "0.0010", "0.0015"}},
		{"correlations", 0.31, 0.52, 5, []float64{0.3, 0.4, 0.5, 0.6}, []string{"0.3", "0.4", "0.5", "0.6"}},
		{"negative to positive", -0.23, 0.61, 6, []float64{-0.5, 0, 0.5, 1}, []string{"−0.5", "0.0", "0.5", "1.0"}},
		{"one value", 3, 3, 5, []float64{2, 2.5, 3, 3.5, 4}, []string{"2.0", "2.5", "3.0", "3.5", "4.0"}},
		{"zero only", 0, 0, 3, []float64{-1, 0, 1}, []string{"−1", "0", "1"}},
		{"reversed", 10, 0, 6, []float64{0, 2, 4, 6, 8, 10}, []string{"0", "2", "4", "6", "8", "10"}},
		{"not a number", math.NaN(), 1, 5, []float64{0, 1}, []string{"0", "1"}},
		{"exact ends", 1, 5, 5, []float64{1, 2, 3, 4, 5}, []string{"1", "2", "3", "4", "5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := NiceTicks(tc.lo, tc.hi, tc.max)
			if !slices.Equal(got, tc.want) {
				t.Errorf("NiceTicks(%g, %g, %d) = %v, want %v", tc.lo, tc.hi, tc.max, got, tc.want)
			}
			if txt := TickLabels(got); !slices.Equal(txt, tc.wantText) {
				t.Errorf("labels %q, want %q", txt, tc.wantText)
			}
			// Properties every case must have.
			if len(got) < 2 || len(got) > max(tc.max, 2) {
				t.Fatalf("%d ticks %v, want 2 to %d", len(got), got, tc.max)
			}
			lo, hi := math.Min(tc.lo, tc.hi), math.Max(tc.lo, tc.hi)
			if !math.IsNaN(lo) && (got[0] > lo || got[len(got)-1] < hi) {
				t.Errorf("ticks %v do not cover %g to %g", got, lo, hi)
			}
			step := got[1] - got[0]
			mant := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9))
			if !slices.ContainsFunc([]float64{1, 2, 5}, func(m float64) bool { return math.Abs(m-mant) < 1e-6 }) {
				t.Errorf("step %g is not 1, 2 or 5 times a power of ten", step)
			}
			for i := 1; i < len(got); i++ {
				if d := got[i] - got[i-1]; math.Abs(d-step) > step*1e-6 {
					t.Errorf("uneven ticks %v", got)
				}
			}
		})
	}
}
