package stats

import (
	"math"
	"testing"
)

func TestSystemCorrelationByHand(t *testing.T) {
	// Three systems. Judge means: A (1+2+3)/3 = 2, B 4, C 6. Human means:
	// A (0+1+2)/3 = 1, B (3+3)/2 = 3, C 2. The last sample of C has no
	// judge score and is left out.
	// Pearson: dx = -2, 0, 2 and dy = -1, 1, 0, so Sxy = 2, Sxx = 8,
	// Syy = 2 and r = 2/sqrt(16) = 0.5.
	// Spearman: ranks 1, 2, 3 against 1, 3, 2, Σd² = 2, so
	// rho = 1 - 6·2/(3·8) = 0.5.
	// Kendall: pairs AB and AC concordant, BC discordant: tau = 1/3.
	x := []float64{1, 2, 3, 4, 4, 6, math.NaN()}
	y := []float64{0, 1, 2, 3, 3, 2, 5}
	sys := []string{"A", "A", "A", "B", "B", "C", "C"}
	want := map[Method]float64{MethodPearson: 0.5, MethodSpearman: 0.5, MethodKendall: 1.0 / 3}
	for _, m := range Methods() {
		got := SystemCorrelation(m, x, y, sys, 500, 1)
		if math.Abs(got.Coef-want[m]) > 1e-12 || got.Systems != 3 || got.N != 6 {
			t.Errorf("%s: %+v, want coef %g over 3 systems and 6 samples", m, got, want[m])
		}
	}
}

func TestSystemCorrelationInterval(t *testing.T) {
	// Six systems of 30 samples each whose quality rises with their index;
	// the judge sees it through noise.
	a, _, _ := judges(180, 12)
	var x, y []float64
	var sys []string
	for i := range 180 {
		s := i % 6
		y = append(y, float64(s)+a[i]/5)
		x = append(x, float64(s)+a[i]/3+float64(i%7)/10)
		sys = append(sys, string(rune('a'+s)))
	}
	for _, m := range Methods() {
		c := SystemCorrelation(m, x, y, sys, 1000, 4)
		again := SystemCorrelation(m, x, y, sys, 1000, 4)
		if c.CILow != again.CILow || c.CIHigh != again.CIHigh {
			t.Errorf("%s: same seed, intervals (%g, %g) and (%g, %g)", m, c.CILow, c.CIHigh, again.CILow, again.CIHigh)
		}
		if !(c.CILow <= c.Coef && c.Coef <= c.CIHigh) || c.Coef < 0.8 {
			t.Errorf("%s: coef %g, interval (%g, %g); want a high coefficient inside its interval", m, c.Coef, c.CILow, c.CIHigh)
		}
	}
}

func TestSystemCorrelationUndefined(t *testing.T) {
	tests := []struct {
		name string
		x, y []float64
		sys  []string
	}{
		{"two systems", []float64{1, 2, 3, 4}, []float64{1, 2, 3, 5}, []string{"a", "a", "b", "b"}},
		// Every system's human mean is 2: constant, so undefined.
		{"constant human means", []float64{1, 2, 3, 4, 5, 6}, []float64{1, 3, 2, 2, 2, 2}, []string{"a", "a", "b", "b", "c", "c"}},
		// Judge means are 7/3 from different sums: noise, not a difference.
		{"noise-constant judge means", []float64{2.3333333333333335, 2.333333333333333, 2.333333333333333},
			[]float64{1, 2, 3}, []string{"a", "b", "c"}},
	}
	for _, tc := range tests {
		for _, m := range Methods() {
			c := SystemCorrelation(m, tc.x, tc.y, tc.sys, 200, 1)
			if !math.IsNaN(c.Coef) || !math.IsNaN(c.P) || !math.IsNaN(c.CILow) || !math.IsNaN(c.CIHigh) {
				t.Errorf("%s/%s: %+v, want every figure NaN", tc.name, m, c)
			}
		}
	}
}
