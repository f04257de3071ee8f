package stats

import (
	"math"
	"testing"
)

func TestSpreadOf(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name               string
		values             []float64
		n                  int
		mean, sd, min, max float64
	}{
		{
			// By hand: mean (0.70+0.74+0.72+0.76)/4 = 0.73; deviations
			// -.03, .01, -.01, .03, squares sum to 0.002; sample variance
			// 0.002/3, SD = sqrt(0.002/3) = 0.0258199.
			name:   "four runs",
			values: []float64{0.70, 0.74, 0.72, 0.76},
			n:      4, mean: 0.73, sd: math.Sqrt(0.002 / 3), min: 0.70, max: 0.76,
		},
		{
			// NaN and Inf are ignored; 2, 4, 9: mean 5, deviations -3, -1, 4,
			// squares 9+1+16 = 26, variance 13, SD √13.
			name:   "undefined runs ignored",
			values: []float64{2, nan, 4, math.Inf(1), 9},
			n:      3, mean: 5, sd: math.Sqrt(13), min: 2, max: 9,
		},
		{name: "one run", values: []float64{0.5}, n: 1, mean: 0.5, sd: nan, min: 0.5, max: 0.5},
		{name: "none", values: []float64{nan}, n: 0, mean: nan, sd: nan, min: nan, max: nan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SpreadOf(tt.values)
			if got.N != tt.n {
				t.Errorf("N = %d, want %d", got.N, tt.n)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{{"Mean", got.Mean, tt.mean}, {"SD", got.SD, tt.sd}, {"Min", got.Min, tt.min}, {"Max", got.Max, tt.max}} {
				if math.IsNaN(f.want) != math.IsNaN(f.got) || math.Abs(f.got-f.want) > 1e-12 {
					t.Errorf("%s = %.15g, want %.15g", f.name, f.got, f.want)
				}
			}
		})
	}
}

func TestRescale(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name                                string
		v, fromLo, fromHi, toLo, toHi, want float64
	}{
		// The BatchEval FED prompts ask for [1, 3]; a human Overall is 0-4.
		// 2 is the middle of [1, 3], so the middle of [0, 4]: 2.
		{"middle", 2, 1, 3, 0, 4, 2},
		{"bottom", 1, 1, 3, 0, 4, 0},
		{"top", 3, 1, 3, 0, 4, 4},
		// 1-5 to 0-1: (4-1)/4 = 0.75.
		{"to unit interval", 4, 1, 5, 0, 1, 0.75},
		// 2.5 on [1, 3] is 3/4 of the way: 1 + 0.75·4 = 4 on [1, 5].
		{"decimal", 2.5, 1, 3, 1, 5, 4},
		// Not clamped: 6 on 1-5 is 5/4 of the way, 1.25 on 0-1.
		{"outside the scale", 6, 1, 5, 0, 1, 1.25},
		// A reversed target flips: 4 on 1-5 is 3/4 of the way from 1 to 0.
		{"reversed", 4, 1, 5, 1, 0, 0.25},
		{"empty source scale", 3, 2, 2, 0, 1, nan},
		{"missing value", nan, 1, 5, 0, 1, nan},
		{"infinite bound", 3, 1, math.Inf(1), 0, 1, nan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Rescale(tt.v, tt.fromLo, tt.fromHi, tt.toLo, tt.toHi)
			if math.IsNaN(tt.want) != math.IsNaN(got) || math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Rescale = %.15g, want %.15g", got, tt.want)
			}
		})
	}
}
