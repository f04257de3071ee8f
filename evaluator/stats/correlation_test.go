package stats

import (
	"math"
	"testing"

	mstats "github.com/montanaflynn/stats"
)

func ptr(v float64) *float64 { return &v }

// The expected figures below are independent of the libraries under test:
// each comes from a published source or is derived by hand in the comment.
func TestCorrelateKnownValues(t *testing.T) {
	tests := []struct {
		name     string
		method   Method
		x, y     []float64
		wantCoef float64
		wantP    float64
		tolP     float64
	}{
		{
			// By hand: mean x = 3, mean y = 4; deviations dx = -2,-1,0,1,2 and
			// dy = -2,0,1,0,1, so Sxy = 6, Sxx = 10, Syy = 6 and
			// r = 6/sqrt(60) = sqrt(0.6) = 0.774597.
			// t = r*sqrt((n-2)/(1-r²)) = sqrt(0.6*3/0.4) = sqrt(4.5) = 2.1213 on
			// 3 df; a t-table puts it between 1.638 (two-sided p = 0.20) and
			// 2.353 (p = 0.10). With 3 df the t CDF has a closed form,
			// p = 1 - (2/π)(θ + sinθ cosθ) with θ = atan(t/√3) = atan(√1.5),
			// which gives p = 0.124027.
			name: "pearson by hand", method: MethodPearson,
			x: []float64{1, 2, 3, 4, 5}, y: []float64{2, 4, 5, 4, 5},
			wantCoef: math.Sqrt(0.6), wantP: 0.1240270626575547, tolP: 1e-9,
		},
		{
			// Reversing y flips the sign and keeps the p-value.
			name: "pearson negative", method: MethodPearson,
			x: []float64{1, 2, 3, 4, 5}, y: []float64{-2, -4, -5, -4, -5},
			wantCoef: -math.Sqrt(0.6), wantP: 0.1240270626575547, tolP: 1e-9,
		},
		{
			// Wikipedia, "Spearman's rank correlation coefficient", example:
			// IQ against hours of TV per week, Σd² = 194, so
			// rho = 1 - 6*194/(10*99) = -29/165 = -0.175758. The article gives
			// the one-sided p = 0.6864058 "using the t distribution", i.e.
			// P(T > t) with t = -0.50498 on 8 df; two-sided is
			// 2*(1-0.6864058) = 0.6271884.
			name: "spearman wikipedia", method: MethodSpearman,
			x:        []float64{106, 86, 100, 101, 99, 103, 97, 113, 112, 110},
			y:        []float64{7, 0, 27, 50, 28, 29, 20, 12, 6, 17},
			wantCoef: -29.0 / 165, wantP: 0.6271884, tolP: 1e-6,
		},
		{
			// Ties get average ranks: x ranks 1, 2.5, 2.5, 4 against y ranks
			// 1, 2, 3, 4. Both means 2.5; Sxy = 2.25+0+0+2.25 = 4.5,
			// Sxx = 4.5, Syy = 5, so rho = 4.5/sqrt(22.5) = 3/√10 = 0.948683.
			// t = rho*sqrt(2/(1-rho²)) = 3√2 on 2 df, where the t
			// distribution has the closed form P(|T| > t) = 1 - t/√(2+t²)
			// = 1 - 3√2/√20 = 1 - 3/√10 = 0.051317.
			name: "spearman with ties", method: MethodSpearman,
			x: []float64{1, 2, 2, 3}, y: []float64{1, 2, 3, 4},
			wantCoef: 3 / math.Sqrt(10), wantP: 1 - 3/math.Sqrt(10), tolP: 1e-9,
		},
		{
			// scipy.stats.kendalltau's documented example (ties in both
			// series, so scipy uses the asymptotic p-value): statistic
			// -0.47140452079103173, pvalue 0.2827454599327748.
			// By hand, over the 10 pairs: concordant (0,4), (3,4) = 2;
			// discordant (0,1), (0,2), (1,2), (1,3), (2,3), (2,4) = 6;
			// (1,4) tied in x only; (0,3) tied in both. Tied pairs: x has
			// {12,12} and {2,2} = 2, y has {1,1} = 1, so
			// tau-b = (2-6)/sqrt((10-2)(10-1)) = -4/sqrt(72) = -0.471405.
			// var(S) = (20*15 - Σt(t-1)(2t+5) [36] - Σu(u-1)(2u+5) [18])/18
			//        + 0 (no triple ties) + Σt(t-1)*Σu(u-1)/(2*20) [4*2/40]
			//        = 13.6667 + 0.2 = 13.8667,
			// z = -4/sqrt(13.8667) = -1.07417, p = 2(1-Φ(1.07417)) = 0.282745.
			name: "kendall scipy example", method: MethodKendall,
			x: []float64{12, 2, 1, 12, 2}, y: []float64{1, 4, 7, 1, 0},
			wantCoef: -0.47140452079103173, wantP: 0.2827454599327748, tolP: 1e-12,
		},
		{
			// By hand, no ties: only pairs (values 3,2) and (5,4) of y are
			// out of order, so C = 8, D = 2 and tau = 6/10 = 0.6.
			// var(S) = n(n-1)(2n+5)/18 = 5*4*15/18 = 16.667,
			// z = 6/4.0825 = 1.46969, p = erfc(z/√2) = 0.141645.
			name: "kendall no ties", method: MethodKendall,
			x: []float64{1, 2, 3, 4, 5}, y: []float64{1, 3, 2, 5, 4},
			wantCoef: 0.6, wantP: math.Erfc(1.4696938456699067 / math.Sqrt2), tolP: 1e-12,
		},
		{
			// By hand, triple ties in both series so every term of the
			// variance counts. x = 1,1,1,2,3,4 and y = 1,2,2,2,3,3 over 15
			// pairs: 9 concordant, 0 discordant, (0,1), (0,2) tied in x only,
			// (1,3), (2,3), (4,5) tied in y only, (1,2) tied in both.
			// Tied pairs: x 3 (one group of 3), y 4 (groups of 3 and 2).
			// tau-b = 9/sqrt((15-3)(15-4)) = 9/sqrt(132) = 0.783349.
			// var(S) = (30*17 - 66 - (66+18))/18 = 20
			//        + Σt(t-1)(t-2)*Σu(u-1)(u-2)/(9*30*4) = 6*6/1080 = 0.0333
			//        + Σt(t-1)*Σu(u-1)/(2*30) = 6*8/60 = 0.8
			//        = 20.8333; z = 9/sqrt(20.8333) = 1.971801, p = 0.048632.
			name: "kendall triple ties", method: MethodKendall,
			x: []float64{1, 1, 1, 2, 3, 4}, y: []float64{1, 2, 2, 2, 3, 3},
			wantCoef: 9 / math.Sqrt(132), wantP: math.Erfc(9 / math.Sqrt(20.0+36.0/1080+0.8) / math.Sqrt2), tolP: 1e-12,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Correlate(tt.method, tt.x, tt.y)
			if math.Abs(got.Coef-tt.wantCoef) > 1e-12 {
				t.Errorf("Coef = %.15g, want %.15g", got.Coef, tt.wantCoef)
			}
			// wantP is the large-sample approximation's figure. Correlate
			// gives it from nine pairs on; on fewer, Spearman and Kendall
			// are exact (TestSmallSampleExactP), so the approximation is
			// checked on its own here.
			gotP := got.P
			if len(tt.x) <= ExactPermutationMax {
				xs, ys := canonicalPairs(tt.x, tt.y)
				switch tt.method {
				case MethodSpearman:
					gotP = tTestP(got.Coef, len(xs))
				case MethodKendall:
					gotP = kendallP(got.Coef, xs, ys)
				}
			}
			if math.Abs(gotP-tt.wantP) > tt.tolP {
				t.Errorf("P = %.15g, want %.15g", gotP, tt.wantP)
			}
			if got.N != len(tt.x) || got.Missing != 0 {
				t.Errorf("N, Missing = %d, %d, want %d, 0", got.N, got.Missing, len(tt.x))
			}
			if !math.IsNaN(got.CILow) || !math.IsNaN(got.CIHigh) {
				t.Errorf("interval = [%g, %g], want NaN without bootstrap", got.CILow, got.CIHigh)
			}
		})
	}
}

// TestSmallSampleExactP: on eight pairs or fewer, Spearman's and Kendall's
// p-values are exact, the share of the n! orderings of one series against
// the other that correlate at least as strongly either way. The t and
// normal approximations used before gave p = 0 ("< 0.001" on the page) for
// three systems ranked alike, where one ordering in three does as well, and
// called rho = 0.9 on five systems significant (p = 0.037, exact 0.083).
// Every figure below is counted by hand; Pearson keeps its t test.
func TestSmallSampleExactP(t *testing.T) {
	tests := []struct {
		name   string
		method Method
		x, y   []float64
		coef   float64
		p      float64
	}{
		// Three points in the same order: of the 3! = 6 orderings, the
		// identity gives rho = 1 and the reversal -1, so p = 2/6.
		{"spearman three alike", MethodSpearman, []float64{1, 2, 3}, []float64{0.4, 1.9, 2.2}, 1, 1.0 / 3},
		// rho over three points takes the values ±1 and ±0.5 only, so
		// rho = 0.5 is matched or passed by every ordering.
		{"spearman three, 0.5", MethodSpearman, []float64{1, 2, 3}, []float64{1, 3, 2}, 0.5, 1},
		// Four points in the same order: 2 of 24 orderings.
		{"spearman four alike", MethodSpearman, []float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, 1, 2.0 / 24},
		// One adjacent swap of five: Σd² = 2, rho = 1 - 6·2/120 = 0.9.
		// |rho| ≥ 0.9 means Σd² ≤ 2 or ≥ 38: the identity and the 4
		// adjacent swaps, and their 5 reversals, 10 of 120.
		{"spearman five, 0.9", MethodSpearman, []float64{1, 2, 3, 4, 5}, []float64{1, 2, 3, 5, 4}, 0.9, 10.0 / 120},
		// Ties: x ranks 1, 2.5, 2.5, 4, centred -1.5, 0, 0, 1.5, so the
		// numerator is 1.5·(y's centred rank at x = 3 minus at x = 1). The
		// observed 1.5·3 is reached only with y's ranks 1 and 4 at the
		// ends, either way round: 2 · 2 of 24 orderings = 1/6.
		{"spearman with ties", MethodSpearman, []float64{1, 2, 2, 3}, []float64{1, 2, 3, 4}, 3 / math.Sqrt(10), 1.0 / 6},
		// Three points alike: S = 3, reached by the identity and (as
		// -3) the reversal: 2 of 6.
		{"kendall three alike", MethodKendall, []float64{1, 2, 3}, []float64{0.4, 1.9, 2.2}, 1, 1.0 / 3},
		// Five points, two adjacent swaps: 2 inversions, S = 10 - 2·2 = 6.
		// Orderings of 5 by inversions (Mahonian numbers) 1, 4, 9, 15, 20,
		// 22, 20, 15, 9, 4, 1 for 0..10; |S| ≥ 6 means at most 2 or at
		// least 8 inversions: 1+4+9+9+4+1 = 28 of 120.
		{"kendall five, 0.6", MethodKendall, []float64{1, 2, 3, 4, 5}, []float64{1, 3, 2, 5, 4}, 0.6, 28.0 / 120},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Correlate(tt.method, tt.x, tt.y)
			if math.Abs(got.Coef-tt.coef) > 1e-12 || math.Abs(got.P-tt.p) > 1e-12 {
				t.Errorf("coef, p = %.15g, %.15g; want %.15g, %.15g", got.Coef, got.P, tt.coef, tt.p)
			}
		})
	}
	// Nine pairs and more keep the approximation: a perfect ranking of
	// nine has an exact p of 2/9! = 5.5e-6, which the t test rounds to 0.
	nine := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	if got := Correlate(MethodSpearman, nine, nine); got.P != 0 {
		t.Errorf("spearman of nine alike: p = %g, want the t test's 0", got.P)
	}
	// Pearson keeps its t test on few points: r = sqrt(0.6) on five
	// (TestCorrelateKnownValues).
	if got := Correlate(MethodPearson, []float64{1, 2, 3, 4, 5}, []float64{2, 4, 5, 4, 5}); math.Abs(got.P-0.1240270626575547) > 1e-9 {
		t.Errorf("pearson on five: p = %g, want the t test's 0.124", got.P)
	}
}

// TestSmallSampleExactPWithTies counts the orderings of Kendall's tau-b
// with ties in both series through an independent oracle: every ordering
// generated by recursion, tau-b computed by montanaflynn/stats' direct
// pair count.
func TestSmallSampleExactPWithTies(t *testing.T) {
	for _, tc := range []struct{ x, y []float64 }{
		{[]float64{12, 2, 1, 12, 2}, []float64{1, 4, 7, 1, 0}},
		{[]float64{1, 1, 1, 2, 3, 4}, []float64{1, 2, 2, 2, 3, 3}},
		{[]float64{3, 1, 4, 1, 5, 9, 2, 6}, []float64{2, 7, 1, 8, 2, 8, 1, 8}},
	} {
		observed, err := mstats.KendallTau(tc.x, tc.y)
		if err != nil {
			t.Fatal(err)
		}
		var extreme, total int
		var permute func(k int, y []float64)
		permute = func(k int, y []float64) {
			if k == len(y) {
				tau, err := mstats.KendallTau(tc.x, y)
				if err != nil {
					t.Fatal(err)
				}
				total++
				if math.Abs(tau) >= math.Abs(observed)-1e-12 {
					extreme++
				}
				return
			}
			for i := k; i < len(y); i++ {
				y[k], y[i] = y[i], y[k]
				permute(k+1, y)
				y[k], y[i] = y[i], y[k]
			}
		}
		permute(0, append([]float64(nil), tc.y...))
		want := float64(extreme) / float64(total)
		if got := Correlate(MethodKendall, tc.x, tc.y); math.Abs(got.P-want) > 1e-12 {
			t.Errorf("kendall(%v, %v): p = %.15g, want %d/%d = %.15g", tc.x, tc.y, got.P, extreme, total, want)
		}
	}
}

func TestNamedFunctionsMatchCorrelate(t *testing.T) {
	x := []float64{3, 1, 4, 1, 5, 9, 2, 6}
	y := []float64{2, 7, 1, 8, 2, 8, 1, 8}
	tests := []struct {
		method Method
		got    Correlation
	}{
		{MethodPearson, Pearson(x, y)},
		{MethodSpearman, Spearman(x, y)},
		{MethodKendall, Kendall(x, y)},
	}
	for _, tt := range tests {
		want := Correlate(tt.method, x, y)
		if math.Abs(tt.got.Coef-want.Coef) > 0 || math.Abs(tt.got.P-want.P) > 0 {
			t.Errorf("%s: got %+v, Correlate gives %+v", tt.method, tt.got, want)
		}
	}
}

func TestCorrelateUndefined(t *testing.T) {
	tests := []struct {
		name  string
		x, y  []float64
		wantN int
	}{
		{"empty", nil, nil, 0},
		{"one pair", []float64{1}, []float64{2}, 1},
		// Two distinct points always give ±1: meaningless, so NaN.
		{"two pairs", []float64{1, 2}, []float64{3, 5}, 2},
		{"constant x", []float64{2, 2, 2, 2}, []float64{1, 2, 3, 4}, 4},
		{"constant y", []float64{1, 2, 3, 4}, []float64{3, 3, 3, 3}, 4},
		// 0.1 is inexact in binary: a naive variance can come out a hair
		// above zero and yield a garbage coefficient.
		{"constant decimal", []float64{0.1, 0.1, 0.1, 0.1, 0.1}, []float64{1, 2, 3, 4, 5}, 5},
		{"too few after dropping", []float64{1, 2, math.NaN(), 4}, []float64{1, math.Inf(1), 3, 4}, 2},
	}
	for _, tt := range tests {
		for _, m := range Methods() {
			t.Run(tt.name+"/"+string(m), func(t *testing.T) {
				got := Correlate(m, tt.x, tt.y)
				if !math.IsNaN(got.Coef) || !math.IsNaN(got.P) {
					t.Errorf("Coef, P = %g, %g, want NaN, NaN", got.Coef, got.P)
				}
				if got.N != tt.wantN {
					t.Errorf("N = %d, want %d", got.N, tt.wantN)
				}
				boot := WithBootstrap(m, tt.x, tt.y, 50, 1)
				if !math.IsNaN(boot.CILow) || !math.IsNaN(boot.CIHigh) {
					t.Errorf("bootstrap interval = [%g, %g], want NaN", boot.CILow, boot.CIHigh)
				}
			})
		}
	}
}

func TestCorrelateUnknownMethod(t *testing.T) {
	got := Correlate(Method("cosine"), []float64{1, 2, 3}, []float64{1, 2, 4})
	if !math.IsNaN(got.Coef) || !math.IsNaN(got.P) || got.N != 3 {
		t.Errorf("got %+v, want NaN coefficient on 3 pairs", got)
	}
	if Method("cosine").Valid() || !MethodKendall.Valid() {
		t.Errorf("Valid is wrong")
	}
}

func TestPerfectCorrelation(t *testing.T) {
	x := []float64{0.1, 0.2, 0.3, 0.7, 1.1, 2.9}
	y := []float64{1.3, 2.6, 3.9, 9.1, 14.3, 37.7} // 13x: exactly linear up to rounding
	for _, m := range Methods() {
		got := Correlate(m, x, y)
		if math.Abs(got.Coef-1) > 1e-12 || got.Coef > 1 {
			t.Errorf("%s: Coef = %.17g, want 1 and never above", m, got.Coef)
		}
		if math.IsNaN(got.P) || got.P < 0 || got.P > 0.05 {
			t.Errorf("%s: P = %g, want a small number", m, got.P)
		}
	}
}

func TestCorrelateDropsNonFinite(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(-1)
	x := []float64{1, 2, nan, 3, 4, 5, 9}
	y := []float64{2, 4, 7, 5, 4, 5, inf}
	got := Pearson(x, y)
	want := Pearson([]float64{1, 2, 3, 4, 5}, []float64{2, 4, 5, 4, 5})
	if got.N != 5 || got.Missing != 2 {
		t.Errorf("N, Missing = %d, %d, want 5, 2", got.N, got.Missing)
	}
	if math.Abs(got.Coef-want.Coef) > 1e-15 {
		t.Errorf("Coef = %g, want %g", got.Coef, want.Coef)
	}
}

func TestPairs(t *testing.T) {
	tests := []struct {
		name        string
		x, y        []*float64
		wantX       []float64
		wantY       []float64
		wantMissing int
	}{
		{"all present", []*float64{ptr(1), ptr(2)}, []*float64{ptr(3), ptr(4)}, []float64{1, 2}, []float64{3, 4}, 0},
		{
			"nil and NaN dropped",
			[]*float64{ptr(1), nil, ptr(3), ptr(math.NaN()), ptr(5), ptr(6)},
			[]*float64{ptr(10), ptr(20), nil, ptr(40), ptr(math.Inf(1)), ptr(60)},
			[]float64{1, 6}, []float64{10, 60}, 4,
		},
		{"empty", nil, nil, []float64{}, []float64{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xs, ys, missing := Pairs(tt.x, tt.y)
			if missing != tt.wantMissing {
				t.Errorf("missing = %d, want %d", missing, tt.wantMissing)
			}
			if len(xs) != len(tt.wantX) || len(ys) != len(tt.wantY) {
				t.Fatalf("got %v, %v, want %v, %v", xs, ys, tt.wantX, tt.wantY)
			}
			for i := range xs {
				if xs[i] != tt.wantX[i] || ys[i] != tt.wantY[i] {
					t.Errorf("pair %d = (%g, %g), want (%g, %g)", i, xs[i], ys[i], tt.wantX[i], tt.wantY[i])
				}
			}
		})
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	tests := []struct {
		name string
		call func()
	}{
		{"Pairs", func() { Pairs([]*float64{ptr(1)}, nil) }},
		{"Correlate", func() { Correlate(MethodPearson, []float64{1, 2, 3}, []float64{1, 2}) }},
		{"BatchBias", func() { BatchBias(BatchScores{Scores: []float64{1}, Means: nil}) }},
		{"Decompose", func() { Decompose([][]float64{{1}}, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic on slices of different lengths")
				}
			}()
			tt.call()
		})
	}
}

func TestSameRanksGiveExactlyOne(t *testing.T) {
	// Decimal values whose naive Pearson of x with itself rounds below 1.
	x := []float64{2.3333333333, 1, 4.6666666667, 2.3333333333, 3, 1.6666666667, 5, 3}
	doubled := make([]float64, len(x))
	for i, v := range x {
		doubled[i] = 2*v + 1 // same ranks, same linear shape
	}
	for _, m := range Methods() {
		for _, y := range [][]float64{x, doubled} {
			if got := Correlate(m, x, y).Coef; got != 1 {
				t.Errorf("%s = %.17g, want exactly 1", m, got)
			}
		}
	}
}

func TestAverageRanks(t *testing.T) {
	got := averageRanks([]float64{20, 10, 30, 20, 20, -1})
	// Sorted: -1 (1), 10 (2), 20 20 20 (3, 4, 5 -> 4), 30 (6).
	want := []float64{4, 2, 6, 4, 4, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("rank %d = %g, want %g", i, got[i], want[i])
		}
	}
}

func TestKendallTinyPValueDoesNotUnderflow(t *testing.T) {
	// 60 pairs in the same order: tau = 1, S = 60*59/2 = 1770,
	// var(S) = 60*59*125/18 = 24583.3, z = 11.289, so p = erfc(z/√2) ≈ 1.5e-29.
	// A p-value computed as 1 - Φ(z) would round to 0.
	x := make([]float64, 60)
	for i := range x {
		x[i] = float64(i)
	}
	got := Kendall(x, x)
	want := math.Erfc(1770 / math.Sqrt(60*59*125/18.0) / math.Sqrt2)
	if got.P <= 0 || math.Abs(got.P-want) > 1e-12*want {
		t.Errorf("P = %g, want %g", got.P, want)
	}
}
