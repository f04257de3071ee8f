package stats

import (
	"math"
	"testing"
)

func TestEntropy(t *testing.T) {
	tests := []struct {
		name     string
		values   []float64
		binWidth float64
		want     float64
	}{
		{"uniform over 4 values", []float64{1, 2, 3, 4, 1, 2, 3, 4}, 0, 2},
		{"single value", []float64{3, 3, 3}, 0, 0},
		// p = 1/2, 1/4, 1/4: H = 0.5*1 + 2*0.25*2 = 1.5 bits.
		{"half and quarters", []float64{5, 5, 1, 2}, 0, 1.5},
		// Bins of 0.5: 1.0 and 1.2 share bin 2, 1.5 and 1.9 share bin 3:
		// two equal outcomes, 1 bit.
		{"binned", []float64{1.0, 1.2, 1.5, 1.9}, 0.5, 1},
		// 0.3/0.1 is 2.9999999999999996 in floating point; 0.3 must still
		// share bin 3 with 0.35, so one outcome, 0 bits.
		{"decimal bin edge", []float64{0.3, 0.35}, 0.1, 0},
		{"missing ignored", []float64{1, 2, math.NaN(), math.Inf(1)}, 0, 1},
		{"empty", nil, 0, math.NaN()},
		{"negative width", []float64{1, 2}, -1, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Entropy(tt.values, tt.binWidth)
			if math.IsNaN(tt.want) {
				if !math.IsNaN(got) {
					t.Errorf("Entropy = %g, want NaN", got)
				}
				return
			}
			if math.Abs(got-tt.want) > 1e-12 || math.Signbit(got) {
				t.Errorf("Entropy = %g, want %g", got, tt.want)
			}
		})
	}
}

func TestHistogram(t *testing.T) {
	tests := []struct {
		name       string
		values     []float64
		lo, hi     float64
		bins       int
		wantCounts []int
	}{
		// Scale 1-5 in four bins of width 1: [1,2) [2,3) [3,4) [4,5].
		{"top value in last bin", []float64{1, 1.5, 2, 3.99, 4, 5, 5}, 1, 5, 4, []int{2, 1, 1, 3}},
		{"outside and missing ignored", []float64{0.9, 5.1, math.NaN(), 3}, 1, 5, 4, []int{0, 0, 1, 0}},
		// Width 0.1 edges are inexact; 0.3 must fall in [0.3, 0.4).
		{"decimal edges", []float64{0, 0.1, 0.2, 0.3, 0.7, 1}, 0, 1, 10, []int{1, 1, 1, 1, 0, 0, 0, 1, 0, 1}},
		{"no bins", []float64{1}, 0, 1, 0, nil},
		{"empty range", []float64{1}, 1, 1, 3, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Histogram(tt.values, tt.lo, tt.hi, tt.bins)
			if len(got) != len(tt.wantCounts) {
				t.Fatalf("got %d bins, want %d", len(got), len(tt.wantCounts))
			}
			for i, b := range got {
				if b.Count != tt.wantCounts[i] {
					t.Errorf("bin %d [%g, %g) count = %d, want %d", i, b.Lo, b.Hi, b.Count, tt.wantCounts[i])
				}
				if i > 0 && b.Lo != got[i-1].Hi {
					t.Errorf("bin %d starts at %g, previous ends at %g", i, b.Lo, got[i-1].Hi)
				}
			}
			if len(got) > 0 && (got[0].Lo != tt.lo || got[len(got)-1].Hi != tt.hi) {
				t.Errorf("bins span [%g, %g], want [%g, %g]", got[0].Lo, got[len(got)-1].Hi, tt.lo, tt.hi)
			}
		})
	}
}

func TestMeanAndDescribe(t *testing.T) {
	if got := Mean(nil); !math.IsNaN(got) {
		t.Errorf("Mean(nil) = %g, want NaN", got)
	}
	if got := Mean([]float64{1, 2, 6}); math.Abs(got-3) > 1e-15 {
		t.Errorf("Mean = %g, want 3", got)
	}

	tests := []struct {
		name string
		xs   []float64
		want Summary
	}{
		// By hand: mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32, sample
		// variance 32/7, SD = sqrt(32/7) = 2.13809; sorted middle pair 4, 5.
		{"eight values", []float64{2, 4, 4, 4, 5, 5, 7, 9}, Summary{N: 8, Mean: 5, SD: math.Sqrt(32.0 / 7), Min: 2, Max: 9, Median: 4.5}},
		{"one value", []float64{3}, Summary{N: 1, Mean: 3, SD: math.NaN(), Min: 3, Max: 3, Median: 3}},
		{"missing dropped", []float64{1, math.NaN(), 3}, Summary{N: 2, Mean: 2, SD: math.Sqrt2, Min: 1, Max: 3, Median: 2}},
		{"empty", nil, Summary{N: 0, Mean: math.NaN(), SD: math.NaN(), Min: math.NaN(), Max: math.NaN(), Median: math.NaN()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Describe(tt.xs)
			if got.N != tt.want.N {
				t.Errorf("N = %d, want %d", got.N, tt.want.N)
			}
			fields := []struct {
				name      string
				got, want float64
			}{
				{"Mean", got.Mean, tt.want.Mean}, {"SD", got.SD, tt.want.SD},
				{"Min", got.Min, tt.want.Min}, {"Max", got.Max, tt.want.Max},
				{"Median", got.Median, tt.want.Median},
			}
			for _, f := range fields {
				if math.IsNaN(f.want) != math.IsNaN(f.got) || math.Abs(f.got-f.want) > 1e-12 {
					t.Errorf("%s = %g, want %g", f.name, f.got, f.want)
				}
			}
		})
	}
}

// TestHistogramDecimalScale puts every score of a 1-5 scale with one
// decimal (1.0, 1.1, ..., 5.0, written as k/10 the way a parser produces
// them) into 40 bins of width 0.1: score k/10 belongs in bin k-10, except
// 5.0, which joins the last bin.
func TestHistogramDecimalScale(t *testing.T) {
	var values []float64
	for k := 10; k <= 50; k++ {
		values = append(values, float64(k)/10)
	}
	got := Histogram(values, 1, 5, 40)
	for i, b := range got {
		want := 1
		if i == 39 {
			want = 2
		}
		if b.Count != want {
			t.Errorf("bin %d [%g, %g) count = %d, want %d", i, b.Lo, b.Hi, b.Count, want)
		}
	}
}
