package handlers

import (
	"slices"
	"testing"
)

// TestCompareOrderKeepsAsOrderForEqualDifferences: the compare page lists
// samples largest disagreement first, ties in A's order. Found on two
// Topical-Chat runs (360 samples, Engaging on 1 to 3): differences of
// 0.1333 on the 0 to 1 scale came as 0.13333333333333341 or
// 0.1333333333333333 depending on the two scores, and the float sort put
// tc-205 after tc-286 and tc-333 after it although the page showed all of
// them as 0.13 and they are one difference. Each case's differences are
// computed as the page computes them, (a−lo)/(hi−lo) − (b−lo)/(hi−lo).
// The old order fails the first two cases (it put tc-205 after tc-272
// and tc-286, and the 0.05s of the second in the order of their noise).
func TestCompareOrderKeepsAsOrderForEqualDifferences(t *testing.T) {
	unit := func(v, lo, hi float64) float64 { return (v - lo) / (hi - lo) }
	diff := func(a, b, lo, hi float64) *float64 { d := unit(a, lo, hi) - unit(b, lo, hi); return &d }
	cases := []struct {
		name  string
		diffs []*float64
		want  []int
	}{
		// The runs' final scores as exported (means of three rounds).
		{"the Topical-Chat samples", []*float64{
			diff(1.9666666666666668, 2.2333333333333334, 1, 3), // tc-205
			diff(2.2, 1.9333333333333333, 1, 3),                // tc-272
			diff(2.066666666666667, 1.8, 1, 3),                 // tc-286
			diff(2.033333333333333, 1.7666666666666666, 1, 3),  // tc-333
			diff(2.4, 2, 1, 3),                                 // tc-012
		}, []int{4, 0, 1, 2, 3}},
		{"missing last, ties in order", []*float64{nil, diff(3.3, 3.1, 1, 5), diff(2.1, 1.9, 1, 5), nil, diff(4.7, 4.5, 1, 5)}, []int{1, 2, 4, 0, 3}},
		{"real differences still ordered", []*float64{diff(2, 2.1, 1, 3), diff(2, 2.3, 1, 3), diff(2.2, 2, 1, 3)}, []int{1, 2, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := disagreementOrder(c.diffs); !slices.Equal(got, c.want) {
				var ds []float64
				for _, d := range c.diffs {
					if d != nil {
						ds = append(ds, *d)
					}
				}
				t.Errorf("order %v, want %v (differences %v)", got, c.want, ds)
			}
		})
	}
}
