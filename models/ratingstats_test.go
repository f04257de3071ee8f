package models_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// TestRatingStatsMatchDescribe: the stored summary of a dataset's ratings
// gives the figures the dataset page computed from every rating
// (stats.Describe): the same count and mean (a plain sum in row order),
// lowest and highest, and the standard deviation to rounding.
func TestRatingStatsMatchDescribe(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	many := make([]*float64, 5000)
	for i := range many {
		if i%7 != 0 {
			v := 1e6 + float64(r.IntN(5)) + r.Float64()/3 // a large offset: a sum of squares would lose the spread
			many[i] = &v
		}
	}
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name   string
		values []*float64 // one row each; nil: the row has no rating
	}{
		{"no row rated", []*float64{nil, nil}},
		{"one rating", []*float64{nil, f(3)}},
		{"two ratings and a blank", []*float64{f(4), nil, f(2)}},
		{"negative and fractional", []*float64{f(-1), f(0.5), f(10), f(2.25)}},
		{"5,000 rows far from zero", many},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s models.RatingStats
			var vals []float64
			for _, v := range tc.values {
				ratings := map[string]*float64{"other": f(1), "q": v}
				if v != nil {
					vals = append(vals, *v)
				}
				s.Add(ratings)
			}
			want := stats.Describe(vals)
			got := s.Column("q")
			same := func(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
			if got.N != want.N || !same(got.Mean(), want.Mean) {
				t.Errorf("N, mean = %d, %v; want %d, %v", got.N, got.Mean(), want.N, want.Mean)
			}
			if got.N > 0 && (got.Min != want.Min || got.Max != want.Max) {
				t.Errorf("min, max = %v, %v; want %v, %v", got.Min, got.Max, want.Min, want.Max)
			}
			if sd := got.SD(); !same(sd, want.SD) && math.Abs(sd-want.SD) > 1e-9*want.SD {
				t.Errorf("SD = %v, want %v", sd, want.SD)
			}
			if o := s.Column("other"); o.N != len(tc.values) {
				t.Errorf("another key counted %d ratings, want %d", o.N, len(tc.values))
			}
			if keys := s.Keys(); len(keys) != 2 {
				t.Errorf("keys = %q, want q and other (q even when no row rates it)", keys)
			}
		})
	}
}
