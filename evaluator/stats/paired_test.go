package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Published values for two correlations sharing a variable. In the
// sources' notation the shared variable is j (here: the humans), r.jk is
// judge A's correlation, r.jh judge B's and r.kh the judges' with each
// other. The figures come from Silver, Hittner and May (2006, the DEPCOR
// program), Steiger (1980, case A, p. 249) and Zou (2007, example 2),
// as checked in the test suite of the R package cocor.
func TestWilliamsTPublished(t *testing.T) {
	// DEPCOR: r.jk = .3, r.jh = .4, r.kh = .5, n = 100 gives
	// t(97) = -1.0767, p = .2843.
	tt, p := WilliamsT(0.3, 0.4, 0.5, 100)
	if math.Abs(tt-(-1.0767)) > 5e-5 || math.Abs(p-0.2843) > 5e-5 {
		t.Errorf("WilliamsT(.3, .4, .5, 100) = %.5f, p %.5f; want -1.0767, p .2843", tt, p)
	}
	// Swapping the judges flips the sign only.
	t2, p2 := WilliamsT(0.4, 0.3, 0.5, 100)
	if math.Abs(t2+tt) > 1e-12 || math.Abs(p2-p) > 1e-12 {
		t.Errorf("swapped: %g, %g; want %g, %g", t2, p2, -tt, p)
	}
	for _, n := range []int{0, 3} {
		if tt, p := WilliamsT(0.3, 0.4, 0.5, n); !math.IsNaN(tt) || !math.IsNaN(p) {
			t.Errorf("n = %d: %g, %g; want NaN", n, tt, p)
		}
	}
}

func TestSteigerZPublished(t *testing.T) {
	tests := []struct {
		name        string
		rA, rB, rAB float64
		n           int
		wantZ, tolZ float64
		wantP, tolP float64
	}{
		// Steiger (1980), case A: the paper prints -.8913 from rounded
		// intermediate values; the exact formula gives -0.8887185.
		{"Steiger 1980 case A", 0.4, 0.5, 0.1, 103, -0.8887185, 5e-8, math.NaN(), 0},
		// DEPCOR: z = -1.0718, p = .2838.
		{"DEPCOR", 0.3, 0.4, 0.5, 100, -1.0718, 5e-5, 0.2838, 5e-5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			z, p := SteigerZ(tc.rA, tc.rB, tc.rAB, tc.n)
			if math.Abs(z-tc.wantZ) > tc.tolZ {
				t.Errorf("z = %.7f, want %.7f", z, tc.wantZ)
			}
			if !math.IsNaN(tc.wantP) && math.Abs(p-tc.wantP) > tc.tolP {
				t.Errorf("p = %.5f, want %.4f", p, tc.wantP)
			}
		})
	}
}

func TestZouIntervalPublished(t *testing.T) {
	// Zou (2007), overlapping example: r.jk = .396, r.jh = .179,
	// r.kh = .088, n = 66 gives the interval (-.093, .517).
	lo, hi := ZouInterval(0.396, 0.179, 0.088, 66)
	if math.Abs(lo-(-0.093)) > 5e-4 || math.Abs(hi-0.517) > 5e-4 {
		t.Errorf("ZouInterval = (%.4f, %.4f), want (-.093, .517)", lo, hi)
	}
	if lo, hi := ZouInterval(1, 0.5, 0.5, 66); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("|rA| = 1: (%g, %g), want NaN", lo, hi)
	}
}

// Two runs that gave the same scores (a re-run answered from the cache, an
// alignment whose new wording changed nothing) differ by exactly 0, on
// these samples and on any resample of them: every interval says [0, 0].
// Zou's interval said about ±0.22 on these 12 samples while the paired
// bootstrap beside it said [0, 0]; a linear map of the scores (another
// scale) is the same case for Pearson.
func TestCompareCorrelationsIdenticalScores(t *testing.T) {
	a := []float64{1, 2, 3, 4, 5, 2, 3, 4, 1, 5, 3, 2}
	h := []float64{1, 3, 2, 4, 5, 1, 3, 5, 2, 4, 3, 3}
	onTen := make([]float64, len(a))
	for i, v := range a {
		onTen[i] = Rescale(v, 1, 5, 1, 10)
	}
	for _, tc := range []struct {
		name string
		m    Method
		b    []float64
	}{
		{"pearson, same scores", MethodPearson, a},
		{"pearson, same scores on another scale", MethodPearson, onTen},
		{"spearman, same scores", MethodSpearman, a},
		{"kendall, same scores", MethodKendall, a},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := CompareCorrelations(tc.m, a, tc.b, h, 200, 1)
			if math.Abs(d.Diff) > 1e-12 || math.Abs(d.CILow) > 1e-12 || math.Abs(d.CIHigh) > 1e-12 {
				t.Errorf("difference %g, interval [%g, %g]; want 0 in [0, 0]", d.Diff, d.CILow, d.CIHigh)
			}
		})
	}
	// Nearly identical scores keep Zou's interval: it narrows as rAB
	// nears 1 but is not a point.
	b := append([]float64(nil), a...)
	b[0] = 1.5
	d := CompareCorrelations(MethodPearson, a, b, h, 200, 1)
	if !(d.CILow < d.Diff && d.Diff < d.CIHigh) {
		t.Errorf("nearly identical: interval [%g, %g] around %g, want a spread", d.CILow, d.CIHigh, d.Diff)
	}
}

// judges returns n samples of human ratings with a good judge (small
// noise) and a worse one (more noise), on a 1-5 scale rounded to tenths
// so there are ties for the rank methods.
func judges(n int, seed uint64) (good, worse, human []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	round := func(v float64) float64 { return math.Round(v*10) / 10 }
	for range n {
		h := float64(1 + rng.IntN(5))
		human = append(human, h)
		good = append(good, round(h+0.6*rng.NormFloat64()))
		worse = append(worse, round(h+1.8*rng.NormFloat64()))
	}
	return good, worse, human
}

func TestCompareCorrelationsPearsonUsesClosedForms(t *testing.T) {
	a, b, h := judges(80, 3)
	d := CompareCorrelations(MethodPearson, a, b, h, 500, 9)
	rA, rB, rAB := Pearson(a, h).Coef, Pearson(b, h).Coef, Pearson(a, b).Coef
	if math.Abs(d.A-rA) > 1e-12 || math.Abs(d.B-rB) > 1e-12 || math.Abs(d.AB-rAB) > 1e-12 {
		t.Fatalf("coefficients %g %g %g, want %g %g %g", d.A, d.B, d.AB, rA, rB, rAB)
	}
	wt, wp := WilliamsT(rA, rB, rAB, 80)
	lo, hi := ZouInterval(rA, rB, rAB, 80)
	if len(d.Tests) != 3 || d.Tests[0].Name != "Williams' t" || d.Tests[0].DF != 77 ||
		math.Abs(d.Tests[0].Statistic-wt) > 1e-12 || math.Abs(d.P()-wp) > 1e-12 {
		t.Errorf("tests = %+v, want Williams' t = %g (df 77, p %g) first", d.Tests, wt, wp)
	}
	if d.CILow != lo || d.CIHigh != hi || d.Interval != "Zou (2007)" {
		t.Errorf("interval (%g, %g) by %q, want Zou's (%g, %g)", d.CILow, d.CIHigh, d.Interval, lo, hi)
	}
	if !(d.P() < 0.05) || !(d.CILow > 0) {
		t.Errorf("a much better judge: p = %g, interval (%g, %g); want p < .05 and an interval above 0", d.P(), d.CILow, d.CIHigh)
	}
	// The paired bootstrap of the Pearson difference is an independent
	// route to the same interval: on 80 samples the two should agree to a
	// few hundredths.
	blo, bhi := PairedBootstrap(MethodPearson, a, b, h, 4000, 5)
	if math.Abs(blo-lo) > 0.05 || math.Abs(bhi-hi) > 0.05 {
		t.Errorf("bootstrap (%g, %g) and Zou (%g, %g) disagree", blo, bhi, lo, hi)
	}
}

// exactPermutationP enumerates all 2^n ways of swapping the two judges'
// scores (identity included) and counts those whose |difference| reaches
// the observed one, among those with a difference (a swap that leaves a
// judge constant has none): the exact p-value the Monte Carlo test
// estimates. It goes through Correlate, not the internal coefficient
// function.
func exactPermutationP(m Method, a, b, h []float64) float64 {
	n := len(h)
	diff := func(x, y []float64) float64 { return Correlate(m, x, h).Coef - Correlate(m, y, h).Coef }
	observed := math.Abs(diff(a, b))
	var extreme, total int
	x, y := make([]float64, n), make([]float64, n)
	for mask := 0; mask < 1<<n; mask++ {
		for i := range n {
			x[i], y[i] = a[i], b[i]
			if mask&(1<<i) != 0 {
				x[i], y[i] = b[i], a[i]
			}
		}
		d := diff(x, y)
		if math.IsNaN(d) {
			continue
		}
		total++
		if math.Abs(d) >= observed-1e-12 {
			extreme++
		}
	}
	return float64(extreme) / float64(total)
}

func TestPairedPermutationMatchesEnumeration(t *testing.T) {
	h := []float64{1, 2, 2, 3, 4, 4, 5, 3, 1, 5}
	a := []float64{1.5, 2, 2.5, 3, 3.5, 4.5, 4.5, 3, 2, 5}
	b := []float64{3, 1, 2, 4, 2, 5, 3, 3, 1, 2}
	for _, m := range Methods() {
		t.Run(string(m), func(t *testing.T) {
			exact := exactPermutationP(m, a, b, h)
			got := PairedPermutation(m, a, b, h, 20000, 11)
			// Monte Carlo standard error is at most 0.0036 at 20000 draws.
			if math.Abs(got-exact) > 0.015 {
				t.Errorf("permutation p = %.4f, exact enumeration %.4f", got, exact)
			}
		})
	}
}

// TestPairedPermutationLeavesOutSwapsWithoutADifference: two judges that
// differ on two samples only (each scores one sample 2, the rest 1), so
// that half of all swaps leave one of them constant. The two swaps with a
// difference (none, both) are both as extreme as the data, so the exact
// p-value is 1; the old test counted the undefined half as "not extreme"
// and gave about 0.5, twice too small, for Pearson, Spearman and Kendall
// alike, and so did the averaged test over one criterion.
func TestPairedPermutationLeavesOutSwapsWithoutADifference(t *testing.T) {
	// Nine samples: Correlate's exact p-values of Spearman and Kendall
	// (every ordering, up to 8 pairs) would make the enumeration slow.
	h := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	a := []float64{1, 1, 1, 1, 1, 1, 1, 1, 2}
	b := []float64{1, 1, 1, 1, 1, 1, 1, 2, 1}
	for _, m := range Methods() {
		t.Run(string(m), func(t *testing.T) {
			if exact := exactPermutationP(m, a, b, h); exact != 1 {
				t.Fatalf("exact enumeration %g, want 1", exact)
			}
			if got := PairedPermutation(m, a, b, h, 1000, 3); got != 1 {
				t.Errorf("permutation p = %g, want 1 (the exact p)", got)
			}
			avg := CompareAveraged(m, [][]float64{a}, [][]float64{b}, [][]float64{h}, 1000, 3)
			if avg.P != 1 {
				t.Errorf("averaged over one criterion: p = %g, want 1", avg.P)
			}
		})
	}
}

func TestCompareCorrelationsRankMethods(t *testing.T) {
	a, b, h := judges(60, 5)
	for _, m := range []Method{MethodSpearman, MethodKendall} {
		t.Run(string(m), func(t *testing.T) {
			d := CompareCorrelations(m, a, b, h, 1000, 21)
			same := CompareCorrelations(m, a, b, h, 1000, 21)
			if d.CILow != same.CILow || d.CIHigh != same.CIHigh || d.P() != same.P() {
				t.Errorf("same seed gave different figures: %+v vs %+v", d, same)
			}
			if d.Interval != "paired bootstrap" || len(d.Tests) != 1 || d.Tests[0].Name != "paired permutation" {
				t.Errorf("interval %q, tests %+v", d.Interval, d.Tests)
			}
			want := Correlate(m, a, h).Coef - Correlate(m, b, h).Coef
			if math.Abs(d.Diff-want) > 1e-12 {
				t.Errorf("Diff = %g, want %g", d.Diff, want)
			}
			if !(d.CILow <= d.Diff && d.Diff <= d.CIHigh) || !(d.CILow > 0) || !(d.P() < 0.05) {
				t.Errorf("a much better judge: diff %g in (%g, %g), p %g; want an interval above 0 and p < .05", d.Diff, d.CILow, d.CIHigh, d.P())
			}
			// Permutations: 1/(1+1000) is the smallest p the test can give.
			if d.P() < 1.0/1001 {
				t.Errorf("p = %g below the test's resolution", d.P())
			}
		})
	}
}

func TestCompareCorrelationsIdenticalJudges(t *testing.T) {
	a, _, h := judges(40, 8)
	for _, m := range Methods() {
		d := CompareCorrelations(m, a, a, h, 300, 1)
		if d.Diff != 0 || d.P() != 1 {
			t.Errorf("%s: identical judges give diff %g, p %g; want 0, 1", m, d.Diff, d.P())
		}
		if m != MethodPearson && (d.CILow != 0 || d.CIHigh != 0) {
			t.Errorf("%s: identical judges give interval (%g, %g), want (0, 0)", m, d.CILow, d.CIHigh)
		}
	}
}

func TestCompareCorrelationsUndefined(t *testing.T) {
	h := []float64{1, 2, 3, 4, 5, 2, 3, 4}
	varied := []float64{1, 2, 2, 4, 5, 1, 3, 5}
	constant := []float64{2, 2, 2, 2, 2, 2, 2, 2}
	// Rounding noise around 7/3 is still a constant judge.
	noisy := []float64{2.3333333333333335, 2.333333333333333, 2.3333333333333335, 2.333333333333333,
		2.3333333333333335, 2.3333333333333335, 2.333333333333333, 2.333333333333333}
	tests := []struct {
		name    string
		a, b, h []float64
	}{
		{"constant judge", constant, varied, h},
		{"noise-constant judge", varied, noisy, h},
		{"constant humans", varied, h, constant},
		{"too few", varied[:3], h[:3], h[:3]},
	}
	for _, tc := range tests {
		for _, m := range Methods() {
			t.Run(tc.name+"/"+string(m), func(t *testing.T) {
				d := CompareCorrelations(m, tc.a, tc.b, tc.h, 200, 1)
				figures := map[string]float64{"CILow": d.CILow, "CIHigh": d.CIHigh, "P": d.P()}
				if tc.name != "too few" {
					// Three samples have a difference of coefficients, but
					// too few to test it.
					figures["Diff"] = d.Diff
				}
				for name, v := range figures {
					if !math.IsNaN(v) {
						t.Errorf("%s = %g, want NaN (undefined)", name, v)
					}
				}
			})
		}
	}
}

func TestHolm(t *testing.T) {
	// By hand: sorted .005, .01, .03, .04 times 4, 3, 2, 1 gives .02, .03,
	// .06, .04, made non-decreasing: .02, .03, .06, .06 (R's p.adjust
	// "holm" gives the same).
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("Holm = %v, want %v", got, want)
			break
		}
	}
	// NaN stays NaN and does not count; capped at 1.
	got = Holm([]float64{math.NaN(), 0.6, 0.2})
	if !math.IsNaN(got[0]) || got[1] != 0.6 || got[2] != 0.4 {
		t.Errorf("Holm with NaN = %v, want [NaN 0.6 0.4]", got)
	}
	if got := Holm([]float64{0.7, 0.8}); got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm(.7, .8) = %v, want [1 1]", got)
	}
}

func TestCompareAveragedOneCriterionIsCompareCorrelations(t *testing.T) {
	a, b, h := judges(50, 13)
	for _, m := range []Method{MethodSpearman, MethodKendall} {
		one := CompareCorrelations(m, a, b, h, 400, 6)
		avg := CompareAveraged(m, [][]float64{a}, [][]float64{b}, [][]float64{h}, 400, 6)
		if avg.Diff != one.Diff || avg.P != one.P() || avg.CILow != one.CILow || avg.CIHigh != one.CIHigh || avg.Criteria != 1 {
			t.Errorf("%s: averaged %+v, single %+v", m, avg, one)
		}
	}
}

func TestCompareAveragedMatchesEnumeration(t *testing.T) {
	// Two criteria on eight samples; the second has a missing human
	// rating. The exact p-value enumerates all 2^8 swaps of the samples,
	// each swapping both criteria at once.
	nan := math.NaN()
	h := [][]float64{{1, 2, 3, 4, 5, 2, 4, 3}, {2, 1, 3, 5, 4, nan, 2, 3}}
	a := [][]float64{{1, 2.5, 3, 4, 4.5, 2, 4, 3.5}, {2, 1.5, 3, 4.5, 4, 3, 2.5, 3}}
	b := [][]float64{{3, 1, 2, 5, 3, 4, 2, 1}, {1, 3, 2, 4, 5, 2, 4, 1}}
	mean := func(x, y [][]float64) float64 {
		var s float64
		for k := range h {
			s += Correlate(MethodPearson, x[k], h[k]).Coef - Correlate(MethodPearson, y[k], h[k]).Coef
		}
		return s / 2
	}
	observed := math.Abs(mean(a, b))
	var extreme int
	for mask := range 1 << 8 {
		x := [][]float64{append([]float64(nil), a[0]...), append([]float64(nil), a[1]...)}
		y := [][]float64{append([]float64(nil), b[0]...), append([]float64(nil), b[1]...)}
		for i := range 8 {
			if mask&(1<<i) != 0 {
				for k := range 2 {
					x[k][i], y[k][i] = y[k][i], x[k][i]
				}
			}
		}
		if math.Abs(mean(x, y)) >= observed-1e-12 {
			extreme++
		}
	}
	exact := float64(extreme) / 256
	got := CompareAveraged(MethodPearson, a, b, h, 20000, 2)
	if math.Abs(got.Diff-mean(a, b)) > 1e-12 || got.Criteria != 2 {
		t.Errorf("Diff = %g over %d criteria, want %g over 2", got.Diff, got.Criteria, mean(a, b))
	}
	if math.Abs(got.P-exact) > 0.015 {
		t.Errorf("p = %.4f, exact enumeration %.4f", got.P, exact)
	}
	if !(got.CILow <= got.Diff && got.Diff <= got.CIHigh) {
		t.Errorf("interval (%g, %g) misses the difference %g", got.CILow, got.CIHigh, got.Diff)
	}
}
