package stats

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// strongSample is 60 pairs with y = x + small noise, so the true
// correlation is high and the interval should be narrow around it.
func strongSample() (x, y []float64) {
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range 60 {
		v := float64(i%5) + rng.Float64()
		x = append(x, v)
		y = append(y, v+0.5*rng.NormFloat64())
	}
	return x, y
}

func TestWithBootstrapDeterministic(t *testing.T) {
	x, y := strongSample()
	for _, m := range Methods() {
		t.Run(string(m), func(t *testing.T) {
			a := WithBootstrap(m, x, y, 300, 42)
			b := WithBootstrap(m, x, y, 300, 42)
			c := WithBootstrap(m, x, y, 300, 43)
			if a.CILow != b.CILow || a.CIHigh != b.CIHigh {
				t.Errorf("same seed gave [%g, %g] and [%g, %g]", a.CILow, a.CIHigh, b.CILow, b.CIHigh)
			}
			if a.CILow == c.CILow && a.CIHigh == c.CIHigh {
				t.Errorf("seeds 42 and 43 gave the identical interval [%g, %g]", a.CILow, a.CIHigh)
			}
			// The bootstrap must not change the point estimate or its test.
			plain := Correlate(m, x, y)
			if a.Coef != plain.Coef || a.P != plain.P || a.N != plain.N {
				t.Errorf("bootstrap changed the estimate: %+v vs %+v", a, plain)
			}
		})
	}
}

func TestWithBootstrapContainsEstimate(t *testing.T) {
	x, y := strongSample()
	for _, m := range Methods() {
		t.Run(string(m), func(t *testing.T) {
			got := WithBootstrap(m, x, y, DefaultResamples, 1)
			if got.Coef < 0.7 {
				t.Fatalf("Coef = %g, the sample was meant to be strongly correlated", got.Coef)
			}
			if !(got.CILow <= got.Coef && got.Coef <= got.CIHigh) {
				t.Errorf("interval [%g, %g] misses the estimate %g", got.CILow, got.CIHigh, got.Coef)
			}
			if got.CIHigh > 1 || got.CIHigh-got.CILow > 0.4 || got.CIHigh-got.CILow <= 0 {
				t.Errorf("interval [%g, %g] is implausible for 60 strongly correlated pairs", got.CILow, got.CIHigh)
			}
		})
	}
}

func TestWithBootstrapKeepsMissingAndSkipsUndefined(t *testing.T) {
	// Five pairs with a single outlier level in y: many resamples draw y
	// constant and are skipped, yet an interval still comes out.
	x := []float64{1, 2, 3, 4, 5, math.NaN()}
	y := []float64{0, 0, 0, 0, 1, 3}
	got := WithBootstrap(MethodSpearman, x, y, 500, 3)
	if got.N != 5 || got.Missing != 1 {
		t.Errorf("N, Missing = %d, %d, want 5, 1", got.N, got.Missing)
	}
	if math.IsNaN(got.CILow) || math.IsNaN(got.CIHigh) || got.CILow > got.CIHigh {
		t.Errorf("interval = [%g, %g], want a defined interval", got.CILow, got.CIHigh)
	}
	none := WithBootstrap(MethodSpearman, x, y, 0, 3)
	if !math.IsNaN(none.CILow) || !math.IsNaN(none.CIHigh) {
		t.Errorf("0 resamples gave [%g, %g], want NaN", none.CILow, none.CIHigh)
	}
}

func TestQuantile(t *testing.T) {
	// Type 7 by hand on 1..5: position (5-1)*q.
	xs := []float64{1, 2, 3, 4, 5}
	tests := []struct {
		q, want float64
	}{
		{0, 1}, {1, 5}, {0.5, 3}, {0.025, 1.1}, {0.975, 4.9}, {0.3, 2.2},
	}
	for _, tt := range tests {
		if got := quantile(xs, tt.q); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("quantile(%g) = %g, want %g", tt.q, got, tt.want)
		}
	}
}

// On three pairs the bootstrap cannot measure spread: each resample is the
// sample itself or two distinct points (±1), so the percentile interval was
// [r, 1], e.g. "95% interval 1.00 to 1.00" for a Spearman ρ of 1 whose
// exact p is 1/3. The interval is undefined there; the coefficient and p
// stay, and four pairs get an interval again.
func TestWithBootstrapNoIntervalOnThreePairs(t *testing.T) {
	x := []float64{2.1, 3.4, 4.0}
	y := []float64{40, 70, 100}
	for _, m := range []Method{MethodPearson, MethodSpearman, MethodKendall} {
		c := WithBootstrap(m, x, y, DefaultResamples, 7)
		if c.N != 3 || math.IsNaN(c.Coef) || math.IsNaN(c.P) {
			t.Fatalf("%v: want a coefficient and p on 3 pairs, got %+v", m, c)
		}
		if !math.IsNaN(c.CILow) || !math.IsNaN(c.CIHigh) {
			t.Errorf("%v on 3 pairs: interval %v to %v, want undefined (NaN)", m, c.CILow, c.CIHigh)
		}
		four := WithBootstrap(m, append(x, 3.0), append(y, 60), DefaultResamples, 7)
		if math.IsNaN(four.CILow) || math.IsNaN(four.CIHigh) || four.CILow > four.Coef || four.CIHigh < four.Coef {
			t.Errorf("%v on 4 pairs: interval %v to %v around %v, want a defined interval holding the estimate", m, four.CILow, four.CIHigh, four.Coef)
		}
	}
	// The reading then quotes no [1, 1] interval; on three pairs it says
	// they are too few to tell, whatever the p-value (TooFewToTell).
	c := WithBootstrap(MethodPearson, []float64{1, 2, 3}, []float64{10, 20.1, 30}, DefaultResamples, 7)
	if got := Interpret(MethodPearson, c); strings.Contains(got, "interval") || !strings.HasPrefix(got, "Too few samples to tell (3 samples; Pearson r = 1.00, p ") {
		t.Errorf("reading on 3 pairs still quotes an interval: %q", got)
	}
}
