package stats

import (
	"math"
	"math/rand/v2"
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
