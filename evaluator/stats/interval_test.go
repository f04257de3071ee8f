package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFisherIntervalKnownValues checks the analytic intervals against
// values worked out by hand from the textbook formulas (tanh of atanh(r) ±
// 1.96·se, computed independently in Python).
func TestFisherIntervalKnownValues(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name   string
		m      Method
		r      float64
		n      int
		lo, hi float64
	}{
		// se = 1/√100 = 0.1.
		{"pearson r=.5 n=103", MethodPearson, 0.5, 103, 0.3393075224832535, 0.6323381504876256},
		{"pearson r=-.8 n=28", MethodPearson, -0.8, 28, -0.9034360201376526, -0.6085526275355163},
		// Bonett–Wright: se = √(1.125/100).
		{"spearman r=.5 n=103", MethodSpearman, 0.5, 103, 0.32874503087588147, 0.6394198469997987},
		// Fieller–Hartley–Pearson: se = √(0.437/437) = 0.0316….
		{"kendall tau=.3 n=441", MethodKendall, 0.3, 441, 0.24260493149286835, 0.35530227010200777},
		{"perfect", MethodPearson, 1, 50, 1, 1},
		{"undefined coefficient", MethodPearson, nan, 50, nan, nan},
		{"too few for pearson", MethodPearson, 0.5, 3, nan, nan},
		{"too few for kendall", MethodKendall, 0.5, 4, nan, nan},
		{"unknown method", Method("tau-c"), 0.5, 50, nan, nan},
	}
	same := func(a, b float64) bool {
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.IsNaN(a) && math.IsNaN(b)
		}
		return math.Abs(a-b) < 1e-12
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lo, hi := FisherInterval(c.m, c.r, c.n)
			if !same(lo, c.lo) || !same(hi, c.hi) {
				t.Errorf("FisherInterval(%s, %v, %d) = [%v, %v], want [%v, %v]", c.m, c.r, c.n, lo, hi, c.lo, c.hi)
			}
		})
	}
}

// correlatedScores draws n judge scores and human ratings on 1–5 scales
// (many ties, as real ratings) from a latent pair correlated at rho.
func correlatedScores(n int, rho float64, seed uint64) (xs, ys []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	xs, ys = make([]float64, n), make([]float64, n)
	clamp := func(v float64) float64 { return math.Max(1, math.Min(5, math.Round(3+v))) }
	for i := range n {
		a, b := rng.NormFloat64(), rng.NormFloat64()
		xs[i] = clamp(a)
		ys[i] = clamp(rho*a + math.Sqrt(1-rho*rho)*b)
	}
	return xs, ys
}

// TestFisherIntervalCloseToBootstrap checks, at a moderate n where both are
// cheap, that the analytic interval of each method is close to the
// percentile bootstrap it replaces above AnalyticAbove.
func TestFisherIntervalCloseToBootstrap(t *testing.T) {
	xs, ys := correlatedScores(3000, 0.6, 7)
	for _, m := range Methods() {
		t.Run(string(m), func(t *testing.T) {
			boot := WithBootstrap(m, xs, ys, DefaultResamples, 11)
			lo, hi := FisherInterval(m, boot.Coef, boot.N)
			if m == MethodKendall {
				lo, hi = fisherBounds(boot.Coef, kendallSE(canonicalPairs(xs, ys))/(1-boot.Coef*boot.Coef))
			}
			// The bootstrap's own Monte Carlo error at 1000 resamples is
			// about ±0.003 on these intervals (half-width ≈ 0.03).
			const tol = 0.006
			if math.Abs(lo-boot.CILow) > tol || math.Abs(hi-boot.CIHigh) > tol {
				t.Errorf("%s r=%.4f: Fisher [%.4f, %.4f], bootstrap [%.4f, %.4f]", m, boot.Coef, lo, hi, boot.CILow, boot.CIHigh)
			}
			if !(lo < boot.Coef && boot.Coef < hi) {
				t.Errorf("%s: interval [%v, %v] does not hold r = %v", m, lo, hi, boot.Coef)
			}
		})
	}
}

// TestCorrelationIntervalRule checks the size rule: bootstrap (identical to
// WithBootstrap, bit for bit) up to AnalyticAbove complete pairs, Fisher z
// above, with the pairs counted after dropping non-finite values.
func TestCorrelationIntervalRule(t *testing.T) {
	cases := []struct {
		name     string
		n, nanAt int // nanAt > 0 puts a NaN judge score every nanAt samples
		want     IntervalMethod
	}{
		{"small", 500, 0, IntervalBootstrap},
		{"at the threshold", AnalyticAbove, 0, IntervalBootstrap},
		{"just above", AnalyticAbove + 10, 0, IntervalFisherZ},
		{"above with missing", AnalyticAbove + 100, 2, IntervalBootstrap},
		{"large", 3 * AnalyticAbove, 0, IntervalFisherZ},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			xs, ys := correlatedScores(c.n, 0.5, 3)
			if c.nanAt > 0 {
				for i := 0; i < len(xs); i += c.nanAt {
					xs[i] = math.NaN()
				}
			}
			for _, m := range Methods() {
				got, im := CorrelationInterval(m, xs, ys, 200, 5)
				if im != c.want {
					t.Fatalf("%s: method %q, want %q", m, im, c.want)
				}
				switch im {
				case IntervalBootstrap:
					want := WithBootstrap(m, xs, ys, 200, 5)
					if math.Float64bits(got.CILow) != math.Float64bits(want.CILow) ||
						math.Float64bits(got.CIHigh) != math.Float64bits(want.CIHigh) || got.Coef != want.Coef {
						t.Errorf("%s: %+v, want WithBootstrap's %+v", m, got, want)
					}
				case IntervalFisherZ:
					lo, hi := FisherInterval(m, got.Coef, got.N)
					if m == MethodKendall {
						lo, hi = fisherBounds(got.Coef, kendallSE(canonicalPairs(xs, ys))/(1-got.Coef*got.Coef))
					}
					if got.CILow != lo || got.CIHigh != hi || !(lo < got.Coef && got.Coef < hi) {
						t.Errorf("%s: interval [%v, %v] around %v, want [%v, %v]", m, got.CILow, got.CIHigh, got.Coef, lo, hi)
					}
				}
			}
		})
	}
}

func TestIntervalLabel(t *testing.T) {
	cases := []struct {
		im   IntervalMethod
		want string
	}{
		{IntervalBootstrap, "bootstrap (1000 resamples)"},
		{IntervalFisherZ, "Fisher z (large sample)"},
		{IntervalSystemFisherZ, "Fisher z over the systems' means"},
		{IntervalSystemBootstrap, "bootstrap over the systems' means (1000 resamples)"},
		{"", ""},
	}
	for _, c := range cases {
		if got := c.im.Label(1000); got != c.want {
			t.Errorf("%q.Label(1000) = %q, want %q", c.im, got, c.want)
		}
	}
}

// TestKendallSEMatchesPairCount checks the O(n log n) per-sample
// concordance counts behind kendallSE against the O(n²) definition, on
// tied and untied data.
func TestKendallSEMatchesPairCount(t *testing.T) {
	sign := func(v float64) float64 {
		switch {
		case v > 0:
			return 1
		case v < 0:
			return -1
		}
		return 0
	}
	naive := func(xs, ys []float64) float64 {
		n := len(xs)
		cs := make([]float64, n)
		var mean float64
		for i := range n {
			for j := range n {
				cs[i] += sign(xs[i]-xs[j]) * sign(ys[i]-ys[j])
			}
			cs[i] /= float64(n - 1)
			mean += cs[i]
		}
		mean /= float64(n)
		var v float64
		for _, c := range cs {
			v += (c - mean) * (c - mean)
		}
		v /= float64(n - 1)
		n0 := float64(n*(n-1)) / 2
		tx, ty := tieSums(xs), tieSums(ys)
		return 2 * math.Sqrt(v/float64(n)) * n0 / math.Sqrt((n0-tx.pairs)*(n0-ty.pairs))
	}
	rng := rand.New(rand.NewPCG(9, 9))
	untiedX, untiedY := make([]float64, 300), make([]float64, 300)
	for i := range untiedX {
		untiedX[i] = rng.Float64()
		untiedY[i] = untiedX[i] + rng.NormFloat64()
	}
	tiedX, tiedY := correlatedScores(400, 0.7, 2)
	cases := []struct {
		name   string
		xs, ys []float64
	}{
		{"untied", untiedX, untiedY},
		{"ratings 1-5", tiedX, tiedY},
		{"small by hand", []float64{1, 2, 2, 3, 5}, []float64{2, 1, 3, 3, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, want := kendallSE(c.xs, c.ys), naive(c.xs, c.ys)
			if math.IsNaN(got) || math.Abs(got-want) > 1e-12 {
				t.Errorf("kendallSE = %v, want %v", got, want)
			}
		})
	}
	if se := kendallSE([]float64{1, 1, 1, 1}, []float64{1, 2, 3, 4}); !math.IsNaN(se) {
		t.Errorf("constant series: kendallSE = %v, want NaN", se)
	}
}
