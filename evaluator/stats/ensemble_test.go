package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBatchBias(t *testing.T) {
	tests := []struct {
		name string
		b    BatchScores
		want float64
	}{
		{"scores equal their means", BatchScores{Scores: []float64{1.5, 2, 3.25}, Means: []float64{1.5, 2, 3.25}}, 0},
		// By hand: Σs = 2+3+5 = 10, Σmean = 1.5+2.5+4 = 8, |10-8|/3 = 2/3.
		{"all pulled up", BatchScores{Scores: []float64{2, 3, 5}, Means: []float64{1.5, 2.5, 4}}, 2.0 / 3},
		// Opposite errors cancel: Σs = 3+1 = 4 = Σmean = 2+2.
		{"errors cancel", BatchScores{Scores: []float64{3, 1}, Means: []float64{2, 2}}, 0},
		// Σs = 1+1 = 2, Σmean = 2+3 = 5: |2-5|/2 = 1.5.
		{"pulled down", BatchScores{Scores: []float64{1, 1}, Means: []float64{2, 3}}, 1.5},
		{"empty", BatchScores{}, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BatchBias(tt.b)
			if math.IsNaN(tt.want) != math.IsNaN(got) || math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("BatchBias = %g, want %g", got, tt.want)
			}
		})
	}
}

func TestMeanBatchBias(t *testing.T) {
	bs := []BatchScores{
		{Scores: []float64{2, 3, 5}, Means: []float64{1.5, 2.5, 4}}, // 2/3
		{Scores: []float64{1, 1}, Means: []float64{2, 3}},           // 1.5
		{}, // empty: skipped
	}
	want := (2.0/3 + 1.5) / 2
	if got := MeanBatchBias(bs); math.Abs(got-want) > 1e-12 {
		t.Errorf("MeanBatchBias = %g, want %g", got, want)
	}
	if got := MeanBatchBias(nil); !math.IsNaN(got) {
		t.Errorf("MeanBatchBias(nil) = %g, want NaN", got)
	}
}

func TestDecomposeByHand(t *testing.T) {
	// Sample 1: S = 2, 4, y = 2: mean 3; Err(mean) = 1; Err(S) = (0+4)/2 = 2;
	// Var(S) = (1+1)/2 = 1.  Sample 2: S = 5, y = 3: 4, 4, 0.
	// Sample 3 has no round score and is skipped; sample 4's human score
	// is missing. Averages over 2 samples: 2.5, 3, 0.5.
	rounds := [][]float64{{2, 4}, {5}, {}, {1, 2}}
	human := []float64{2, 3, 4, math.NaN()}
	got := Decompose(rounds, human)
	want := Decomposition{EnsembleErr: 2.5, MeanRoundErr: 3, MeanVariance: 0.5, N: 2}
	if got.N != want.N || math.Abs(got.EnsembleErr-want.EnsembleErr) > 1e-12 ||
		math.Abs(got.MeanRoundErr-want.MeanRoundErr) > 1e-12 || math.Abs(got.MeanVariance-want.MeanVariance) > 1e-12 {
		t.Errorf("Decompose = %+v, want %+v", got, want)
	}

	empty := Decompose([][]float64{{}}, []float64{1})
	if empty.N != 0 || !math.IsNaN(empty.EnsembleErr) || !math.IsNaN(empty.MeanRoundErr) || !math.IsNaN(empty.MeanVariance) {
		t.Errorf("Decompose with no usable sample = %+v, want N 0 and NaN figures", empty)
	}
}

// TestDecomposeIdentity checks Theorem 2 on random data: the ensemble
// error equals the mean round error minus the mean variance.
func TestDecomposeIdentity(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 99))
		n := 1 + rng.IntN(200)
		rounds := make([][]float64, n)
		human := make([]float64, n)
		for i := range n {
			human[i] = 1 + 4*rng.Float64()
			k := 1 + rng.IntN(7)
			for range k {
				rounds[i] = append(rounds[i], 1+4*rng.Float64())
			}
		}
		d := Decompose(rounds, human)
		if d.N != n {
			t.Errorf("seed %d: N = %d, want %d", seed, d.N, n)
		}
		if diff := d.EnsembleErr - (d.MeanRoundErr - d.MeanVariance); math.Abs(diff) > 1e-12 {
			t.Errorf("seed %d: EnsembleErr - (MeanRoundErr - MeanVariance) = %g", seed, diff)
		}
	}
}
