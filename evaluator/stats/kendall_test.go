package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	mstats "github.com/montanaflynn/stats"
)

// TestKendallFastMatchesPairCount checks Knight's O(n log n) tau-b against
// montanaflynn/stats' direct pair count, with and without ties.
func TestKendallFastMatchesPairCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		name   string
		n      int
		levels int // 0 = continuous; otherwise values drawn from this many levels (ties)
	}{
		{"continuous small", 7, 0}, {"continuous", 300, 0}, {"few levels", 200, 3},
		{"ratings 1-5", 500, 5}, {"thirds", 360, 7}, {"n=3", 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xs, ys := make([]float64, tc.n), make([]float64, tc.n)
			for i := range xs {
				if tc.levels == 0 {
					xs[i] = rng.NormFloat64()
					ys[i] = xs[i] + rng.NormFloat64()
				} else {
					xs[i] = float64(rng.IntN(tc.levels))
					ys[i] = float64(rng.IntN(tc.levels))
					if rng.Float64() < 0.5 {
						ys[i] = xs[i]
					}
				}
			}
			want, err := mstats.KendallTau(xs, ys)
			got := kendallTauB(xs, ys)
			if err != nil {
				if !math.IsNaN(got) {
					t.Fatalf("oracle says undefined (%v), fast gives %v", err, got)
				}
				return
			}
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("tau-b = %.15f, pair count gives %.15f", got, want)
			}
		})
	}
}

func BenchmarkKendall1000(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	xs, ys := make([]float64, 1000), make([]float64, 1000)
	for i := range xs {
		xs[i] = float64(rng.IntN(21)) / 10
		ys[i] = float64(rng.IntN(13)) / 3
	}
	b.Run("pair-count-baseline", func(b *testing.B) {
		for b.Loop() {
			_, _ = mstats.KendallTau(xs, ys)
		}
	})
	b.Run("knight", func(b *testing.B) {
		for b.Loop() {
			kendallTauB(xs, ys)
		}
	})
}
