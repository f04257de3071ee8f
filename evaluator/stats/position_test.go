package stats

import (
	"math"
	"testing"
)

func TestPositionEffect(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name      string
		positions []int
		scores    []float64
		human     []float64
		want      []PositionStat
	}{
		{
			// By hand, given out of order on purpose:
			//   position 1: scores 4, 5 against humans 3, 5: mean 4.5,
			//     errors +1, 0: |err| mean 0.5, signed mean 0.5.
			//   position 2: scores 2, 3, 1 against humans 3, 3, 2: mean 2,
			//     errors -1, 0, -1: |err| mean 2/3, signed mean -2/3.
			//   position 3: score 5, human missing: mean 5, errors NaN.
			name:      "with human",
			positions: []int{2, 1, 2, 3, 1, 2},
			scores:    []float64{2, 4, 3, 5, 5, 1},
			human:     []float64{3, 3, 3, nan, 5, 2},
			want: []PositionStat{
				{Position: 1, N: 2, Rated: 2, MeanScore: 4.5, MeanAbsErr: 0.5, MeanSignedErr: 0.5},
				{Position: 2, N: 3, Rated: 3, MeanScore: 2, MeanAbsErr: 2.0 / 3, MeanSignedErr: -2.0 / 3},
				{Position: 3, N: 1, Rated: 0, MeanScore: 5, MeanAbsErr: nan, MeanSignedErr: nan},
			},
		},
		{
			// Without human scores only the means are defined. A missing
			// score and a position 0 are left out, and position 2 never
			// occurs, so it is not listed.
			name:      "without human",
			positions: []int{1, 3, 1, 0, 3},
			scores:    []float64{2, 1.5, nan, 9, 2.5},
			want: []PositionStat{
				{Position: 1, N: 1, MeanScore: 2, MeanAbsErr: nan, MeanSignedErr: nan},
				{Position: 3, N: 2, MeanScore: 2, MeanAbsErr: nan, MeanSignedErr: nan},
			},
		},
		{
			// The error means are over the rated samples only, and say
			// how many (regression: the page showed "Scores 8" beside
			// errors over 6, unlabelled): position 1 has three scores,
			// two rated (errors +1 and -1); position 2 one score, rated.
			name:      "fewer rated than scored",
			positions: []int{1, 1, 1, 2},
			scores:    []float64{4, 2, 3, 3},
			human:     []float64{3, nan, 4, 1},
			want: []PositionStat{
				{Position: 1, N: 3, Rated: 2, MeanScore: 3, MeanAbsErr: 1, MeanSignedErr: 0},
				{Position: 2, N: 1, Rated: 1, MeanScore: 3, MeanAbsErr: 2, MeanSignedErr: 2},
			},
		},
		{name: "empty", want: []PositionStat{}},
	}
	same := func(got, want float64) bool {
		return math.IsNaN(got) == math.IsNaN(want) && !(math.Abs(got-want) > 1e-12)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PositionEffect(tt.positions, tt.scores, tt.human)
			if len(got) != len(tt.want) {
				t.Fatalf("PositionEffect = %+v, want %+v", got, tt.want)
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Position != w.Position || g.N != w.N || g.Rated != w.Rated || !same(g.MeanScore, w.MeanScore) ||
					!same(g.MeanAbsErr, w.MeanAbsErr) || !same(g.MeanSignedErr, w.MeanSignedErr) {
					t.Errorf("row %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestPositionEffectPanicsOnLengthMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for a human slice shorter than the scores")
		}
	}()
	PositionEffect([]int{1, 2}, []float64{1, 2}, []float64{1})
}
