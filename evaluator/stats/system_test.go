package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
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
	// Eight systems of 30 samples each whose quality rises with their
	// index; the judge sees it through noise.
	a, _, _ := judges(240, 12)
	var x, y []float64
	var sys []string
	for i := range 240 {
		s := i % 8
		y = append(y, float64(s)+a[i]/5)
		x = append(x, float64(s)+a[i]/3+float64(i%7)/10)
		sys = append(sys, string(rune('a'+s)))
	}
	for _, m := range Methods() {
		c := SystemCorrelation(m, x, y, sys, 1000, 4)
		again := SystemCorrelation(m, x, y, sys, 1000, 4)
		if math.Float64bits(c.CILow) != math.Float64bits(again.CILow) || math.Float64bits(c.CIHigh) != math.Float64bits(again.CIHigh) {
			t.Errorf("%s: same seed, intervals (%g, %g) and (%g, %g)", m, c.CILow, c.CIHigh, again.CILow, again.CIHigh)
		}
		// The rank coefficients are exactly 1 here (the means are in the
		// humans' order), which has no interval
		// (TestSystemIntervalAtPerfectAgreement).
		if c.Coef == 1 {
			if !math.IsNaN(c.CILow) || c.IntervalWhy == "" {
				t.Errorf("%s: coef 1, interval (%g, %g), reason %q; want none, with the reason", m, c.CILow, c.CIHigh, c.IntervalWhy)
			}
			continue
		}
		if !(c.CILow <= c.Coef && c.Coef <= c.CIHigh) || c.Coef < 0.8 {
			t.Errorf("%s: coef %g, interval (%g, %g); want a high coefficient inside its interval", m, c.Coef, c.CILow, c.CIHigh)
		}
	}
}

// TestSystemRankIntervalsNeedEightSystems: the small-sample rule of the
// samples' intervals holds over systems. Regression: 6 systems whose judge
// and human means nearly agree got Spearman 0.986 with the interval -0.29
// to 0.97 and Kendall 0.966 with -0.28 to 0.93, intervals that leave out
// their own coefficient; Pearson keeps its interval.
func TestSystemRankIntervalsNeedEightSystems(t *testing.T) {
	for _, k := range []int{6, 7, 8} {
		var x, y []float64
		var sys []string
		for i := range 30 * k {
			s := i % k
			// Means in the same order but for the last two systems,
			// whose human means tie; samples spread around them.
			h := float64(min(s, k-2))
			x = append(x, float64(s)+float64(i%5)/2)
			y = append(y, h+float64(i%3)/2)
			sys = append(sys, fmt.Sprintf("s%d", s))
		}
		for _, m := range Methods() {
			c := SystemCorrelation(m, x, y, sys, 1000, 1)
			if c.Systems != k || math.IsNaN(c.Coef) || c.Coef < 0.8 {
				t.Fatalf("%d systems, %s: %+v, want a high coefficient over %d systems", k, m, c, k)
			}
			undefined := math.IsNaN(c.CILow) && math.IsNaN(c.CIHigh) && c.Interval == ""
			wantUndefined := m != MethodPearson && k < RankBootstrapMin
			if undefined != wantUndefined {
				t.Errorf("%d systems, %s: interval (%v, %v) by %q; want undefined %v", k, m, c.CILow, c.CIHigh, c.Interval, wantUndefined)
			}
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

// TestSystemCorrelationLargeRuns: the system-level interval is over the
// systems' means at any size (Fisher's for Pearson and Spearman, the
// bootstrap for Kendall), the same whether a run is small or
// has systems of thousands of samples (the two-stage bootstrap drew large
// systems' means from a normal approximation above AnalyticAbove samples,
// "two-stage-normal").
func TestSystemCorrelationLargeRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	// synth gives each of k systems per samples with its own quality
	// offset, judge and human scores on 1–5 with noise.
	synth := func(k, per int) (xs, ys []float64, systems []string) {
		for s := range k {
			q := rng.NormFloat64() * 0.5
			for range per {
				a := q + rng.NormFloat64()
				xs = append(xs, math.Max(1, math.Min(5, math.Round(3+a))))
				ys = append(ys, math.Max(1, math.Min(5, math.Round(3+0.6*a+0.8*rng.NormFloat64()))))
				systems = append(systems, fmt.Sprintf("sys%02d", s))
			}
		}
		return
	}
	for _, c := range []struct {
		name   string
		k, per int
	}{
		{"small run", 8, 300},
		{"large run of small systems", 60, 100},
		{"large run of large systems", 8, 2500},
	} {
		t.Run(c.name, func(t *testing.T) {
			xs, ys, systems := synth(c.k, c.per)
			for _, m := range Methods() {
				got := SystemCorrelation(m, xs, ys, systems, 2000, 3)
				_, mx, my := systemGroups(xs, ys, systems)
				lo, hi := FisherInterval(m, got.Coef, c.k)
				want := IntervalSystemFisherZ
				if math.Abs(got.Coef) == 1 {
					// Means in the humans' order: no interval
					// (TestSystemIntervalAtPerfectAgreement).
					if !math.IsNaN(got.CILow) || !math.IsNaN(got.CIHigh) || got.Interval != "" || got.IntervalWhy == "" {
						t.Errorf("%s: coef %v, [%v, %v] by %q (%q); want no interval, with the reason", m, got.Coef, got.CILow, got.CIHigh, got.Interval, got.IntervalWhy)
					}
					continue
				}
				if m == MethodKendall {
					b := WithBootstrap(m, mx, my, 2000, 3)
					lo, hi, want = b.CILow, b.CIHigh, IntervalSystemBootstrap
				}
				if got.Interval != want || math.IsNaN(lo) ||
					math.Float64bits(got.CILow) != math.Float64bits(lo) || math.Float64bits(got.CIHigh) != math.Float64bits(hi) {
					t.Errorf("%s: [%v, %v] by %q, want [%v, %v] by %q over %d systems", m, got.CILow, got.CIHigh, got.Interval, lo, hi, want, c.k)
				}
			}
		})
	}
}

// TestSystemIntervalAtPerfectAgreement: a system-level coefficient of
// exactly ±1 has no interval, with the reason. Regression: ten systems in
// the humans' order gave Spearman 1 with the "interval" 1 to 1 (Fisher's
// z of 1 is infinite, so tanh(atanh(1) ± 1.96·se) is the point 1), and
// Pearson on means on one line did the same; Kendall's bootstrap over
// perfectly ordered means gave 1 to 1 as well. A coefficient short of ±1
// keeps its interval, which is wider than a point.
func TestSystemIntervalAtPerfectAgreement(t *testing.T) {
	type row struct {
		name     string
		m        Method
		human    func(s int) float64
		wantCoef float64
	}
	rows := []row{
		// Human means rise with the judge's but not on a line: Spearman and
		// Kendall are exactly 1, Pearson is below 1.
		{"spearman 1", MethodSpearman, func(s int) float64 { return float64(s * s) }, 1},
		{"kendall 1", MethodKendall, func(s int) float64 { return float64(s * s) }, 1},
		{"spearman -1", MethodSpearman, func(s int) float64 { return -float64(s * s) }, -1},
		// Human means on a line with the judge's: Pearson is exactly ±1.
		{"pearson 1", MethodPearson, func(s int) float64 { return 2*float64(s) + 1 }, 1},
		{"pearson -1", MethodPearson, func(s int) float64 { return 10 - 0.5*float64(s) }, -1},
	}
	const k = 10
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			var x, y []float64
			var sys []string
			for s := range k {
				// Two samples a system, symmetric around the system's
				// means, so the means are exactly s and human(s).
				for _, d := range []float64{-0.25, 0.25} {
					x = append(x, float64(s)+d)
					y = append(y, r.human(s)+d)
					sys = append(sys, fmt.Sprintf("sys%02d", s))
				}
			}
			c := SystemCorrelation(r.m, x, y, sys, 1000, 1)
			if math.Abs(c.Coef-r.wantCoef) > 1e-12 {
				t.Fatalf("coef %v, want %v", c.Coef, r.wantCoef)
			}
			if !math.IsNaN(c.CILow) || !math.IsNaN(c.CIHigh) || c.Interval != "" {
				t.Errorf("interval %v to %v by %q; want none at a coefficient of exactly %v", c.CILow, c.CIHigh, c.Interval, r.wantCoef)
			}
			if !strings.Contains(c.IntervalWhy, "exactly") || !strings.Contains(c.IntervalWhy, "10 systems") {
				t.Errorf("reason %q; want it to say the coefficient is exactly ±1 over 10 systems", c.IntervalWhy)
			}
			if math.IsNaN(c.P) {
				t.Errorf("p-value undefined; want the test of the coefficient kept")
			}
		})
	}
	// Short of ±1 the interval stays and has width: swap two neighbours.
	var x, y []float64
	var sys []string
	for s := range k {
		h := float64(s)
		if s == 4 {
			h = 5
		} else if s == 5 {
			h = 4
		}
		x = append(x, float64(s))
		y = append(y, h)
		sys = append(sys, fmt.Sprintf("sys%02d", s))
	}
	for _, m := range Methods() {
		c := SystemCorrelation(m, x, y, sys, 1000, 1)
		if !(c.CILow < c.Coef && c.Coef < c.CIHigh) || c.IntervalWhy != "" {
			t.Errorf("%s: coef %v, interval %v to %v, reason %q; want an interval around the coefficient", m, c.Coef, c.CILow, c.CIHigh, c.IntervalWhy)
		}
	}
}
