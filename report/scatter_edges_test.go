package report

import (
	"fmt"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
)

// TestScatterGridCountsScoresOnAnEdgeAsTheHistogram: the grid of counts
// under a large judge-against-human chart names its cells after the
// histogram's bins ("2.6 to 3.4", "3.4 to 4.2"), so a score lying on an
// edge must be counted in the cell the histogram counts it in, the one the
// edge opens. Found on a Topical-Chat run (360 samples, three rounds):
// final Overall scores of exactly 3.4 on the 1 to 5 scale were counted
// under "2.6 to 3.4", because (3.4-1)/0.8 is 2.9999999999999996 in binary
// floating point, while the histogram above counted them under "3.4 to
// 4.2". Each case puts one point on every inner edge of the scale (the
// decimal a judge writes, or a mean of rounds that lands there) among
// enough points for the grid, and checks the column each is counted in
// and that the columns' totals are the histogram's counts.
func TestScatterGridCountsScoresOnAnEdgeAsTheHistogram(t *testing.T) {
	cases := []struct {
		lo, hi float64
		edges  []float64 // the scale's inner edges in five bins, as written
	}{
		{1, 5, []float64{1.8, 2.6, 3.4, 4.2}},
		{1, 3, []float64{1.4, 1.8, 2.2, 2.6}},
		{0, 2, []float64{0.4, 0.8, 1.2, 1.6}},
		{0, 1, []float64{0.2, 0.4, 0.6, 0.8}},
		// Means of three rounds that land on an edge with rounding noise.
		{1, 5, []float64{(1.7 + 1.8 + 1.9) / 3, (2.5 + 2.6 + 2.7) / 3, (3.3 + 3.4 + 3.5) / 3, (4.1 + 4.2 + 4.3) / 3}},
		{1, 3, []float64{(1.3 + 1.4 + 1.5) / 3, (1.7 + 1.8 + 1.9) / 3, (2.1 + 2.2 + 2.3) / 3, (2.5 + 2.6 + 2.7) / 3}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%g to %g, edges %v", c.lo, c.hi, c.edges), func(t *testing.T) {
			// The scale's ends, so the chart spans exactly [lo, hi], and
			// distinct filler well inside the first bin, so both axes are
			// binned (more than a few levels each).
			var xs, ys []float64
			xs = append(xs, c.lo, c.hi)
			w := (c.hi - c.lo) / float64(GridBins())
			for i := 0; len(xs) < MaxListedPoints+10; i++ {
				xs = append(xs, c.lo+w*(0.25+0.5*float64(i)/MaxListedPoints))
			}
			edgeAt := len(xs)
			xs = append(xs, c.edges...)
			for i := range xs {
				ys = append(ys, float64(i)/float64(len(xs)))
			}
			d := DigestScatter(xs, ys, c.lo, c.hi, func(i int) ScatterDot { return ScatterDot{X: xs[i], Y: ys[i]} })
			if d.Grid == nil || d.Grid.XLevels != nil {
				t.Fatalf("no binned grid for %d points", len(xs))
			}
			cell, n := AxisCell(nil, c.lo, c.hi)
			if n != GridBins() {
				t.Fatalf("%d cells, want %d", n, GridBins())
			}
			for k, v := range xs[edgeAt:] {
				if got := cell(v); got != k+1 {
					bins := stats.Histogram(nil, c.lo, c.hi, GridBins())
					t.Errorf("a score of %.17g (the edge %g) is in column %d (%g to %g), want column %d (%g to %g)",
						v, bins[k+1].Lo, got+1, bins[got].Lo, bins[got].Hi, k+2, bins[k+1].Lo, bins[k+1].Hi)
				}
			}
			cols := make([]int, GridBins())
			for _, row := range d.Grid.Counts {
				for j, v := range row {
					cols[j] += v
				}
			}
			for j, b := range stats.Histogram(xs, c.lo, c.hi, GridBins()) {
				if cols[j] != b.Count {
					t.Errorf("column %g to %g counts %d points, the histogram's bin %d", b.Lo, b.Hi, cols[j], b.Count)
				}
			}
		})
	}
}
