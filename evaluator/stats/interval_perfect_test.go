package stats

import (
	"math"
	"testing"
)

// TestCorrelationIntervalAtPerfectAgreement: pairs on one rising line give
// a coefficient of exactly 1 at every size, and each size's interval rule
// (Fisher's below 50 pairs, the bootstrap to 5,000, Fisher's z above)
// returned the point [1, 1]. None is given now; coefficient and p stay.
func TestCorrelationIntervalAtPerfectAgreement(t *testing.T) {
	for _, n := range []int{10, 60, AnalyticAbove + 10} {
		x := make([]float64, n)
		y := make([]float64, n)
		for i := range x {
			x[i] = float64(i%5 + 1)
			y[i] = 0.5*x[i] + 0.25
		}
		for _, m := range Methods() {
			c, _ := CorrelationInterval(m, x, y, 200, 1)
			if math.Abs(c.Coef-1) > 1e-12 || math.IsNaN(c.P) {
				t.Errorf("n %d %v: coef %v p %v, want 1 with a p-value", n, m, c.Coef, c.P)
			}
			if !math.IsNaN(c.CILow) || !math.IsNaN(c.CIHigh) {
				t.Errorf("n %d %v: interval [%v, %v], want none at a coefficient of 1", n, m, c.CILow, c.CIHigh)
			}
		}
	}
	// Just short of one line, the interval is back.
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	y := []float64{1, 2, 3, 4, 5, 6, 7, 8, 10, 9}
	for _, m := range Methods() {
		c, _ := CorrelationInterval(m, x, y, 200, 1)
		if math.IsNaN(c.CILow) || !(c.CILow < c.Coef && c.Coef <= c.CIHigh) {
			t.Errorf("%v near 1: interval [%v, %v] around %v", m, c.CILow, c.CIHigh, c.Coef)
		}
	}
}
