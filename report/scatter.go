package report

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/batcheval/batcheval/evaluator/stats"
)

// MaxScatterPoints is the most points a scatter draws: beyond a few
// thousand more dots add no information a reader can see, only page weight
// and rendering time (100,000 points made a 17 MB page). Larger data is
// drawn from a deterministic sample and says so.
const MaxScatterPoints = 2000

// MaxListedPoints is the most points a scatter's data table lists one by
// one; above it the table counts the points per cell of a grid.
const MaxListedPoints = 300

// ScatterSeed fixes the sample and the jitter of large or discrete
// scatters, so the same data always draws the same chart.
const ScatterSeed = 0x5ca7

// maxLevels is the most distinct values an axis may take to count as
// discrete (a 1-10 scale with its 0, or a 1-5 scale in halves).
const maxLevels = 11

// gridBins is the number of cells per axis of a continuous axis in a
// scatter's grid of counts.
const gridBins = 5

// ScatterDot is one drawn point of a criterion's judge-versus-human chart.
type ScatterDot struct {
	RowID      int64
	ExternalID string
	X, Y       float64 // judge final score, human rating
}

// ScatterDigest is what the judge-versus-human chart of a criterion needs
// of its samples, whatever their number: the points it draws (a seeded
// sample of at most MaxScatterPoints, see SampleIndexes), the span of all
// points, and, above MaxListedPoints, every point counted per grid cell.
// It is stored with a finished run's summary so the chart is drawn the
// same without reading the samples.
type ScatterDigest struct {
	// Total is the number of samples with both a final score and a human
	// rating.
	Total int
	Drawn []ScatterDot
	// XMin, XMax, YMin, YMax span every point (infinite when none).
	XMin, XMax, YMin, YMax float64
	// Grid counts every point per cell; nil up to MaxListedPoints points.
	Grid *ScatterGrid
}

// ScatterGrid counts a scatter's points per cell: by level on an axis with
// few values (XLevels, YLevels), by gridBins equal bins of the plotted
// range otherwise (levels nil).
type ScatterGrid struct {
	XLevels, YLevels []float64
	// Counts is [row][column], rows from the highest y down.
	Counts [][]int
}

// DigestScatter digests points (xs[i], ys[i]) for a chart whose x axis
// covers at least [xlo, xhi]; dot names point i for the drawn ones.
func DigestScatter(xs, ys []float64, xlo, xhi float64, dot func(i int) ScatterDot) ScatterDigest {
	d := ScatterDigest{Total: len(xs), XMin: math.Inf(1), XMax: math.Inf(-1), YMin: math.Inf(1), YMax: math.Inf(-1)}
	for i := range xs {
		d.XMin, d.XMax = math.Min(d.XMin, xs[i]), math.Max(d.XMax, xs[i])
		d.YMin, d.YMax = math.Min(d.YMin, ys[i]), math.Max(d.YMax, ys[i])
	}
	for _, i := range SampleIndexes(len(xs), MaxScatterPoints) {
		d.Drawn = append(d.Drawn, dot(i))
	}
	if d.Total > MaxListedPoints {
		pxlo, pxhi, pylo, pyhi := d.PlotRange(xlo, xhi)
		d.Grid = countGrid(xs, ys, pxlo, pxhi, pylo, pyhi)
	}
	return d
}

// PlotRange is the span the chart's axes cover: x at least [xlo, xhi] (the
// criterion's scale), y the data's; a span of a single value is widened by
// one either side.
func (d ScatterDigest) PlotRange(xlo, xhi float64) (pxlo, pxhi, pylo, pyhi float64) {
	pxlo, pxhi = math.Min(xlo, d.XMin), math.Max(xhi, d.XMax)
	pylo, pyhi = d.YMin, d.YMax
	if math.IsInf(pylo, 0) {
		pylo, pyhi = 0, 1
	}
	if pxhi-pxlo < 1e-9 {
		pxlo, pxhi = pxlo-1, pxhi+1
	}
	if pyhi-pylo < 1e-9 {
		pylo, pyhi = pylo-1, pyhi+1
	}
	return pxlo, pxhi, pylo, pyhi
}

// countGrid counts every point per cell (see ScatterGrid).
func countGrid(xs, ys []float64, xlo, xhi, ylo, yhi float64) *ScatterGrid {
	g := &ScatterGrid{XLevels: DiscreteLevels(xs), YLevels: DiscreteLevels(ys)}
	xcut, nx := AxisCell(g.XLevels, xlo, xhi)
	ycut, ny := AxisCell(g.YLevels, ylo, yhi)
	g.Counts = make([][]int, ny)
	for i := range g.Counts {
		g.Counts[i] = make([]int, nx)
	}
	for i := range xs {
		g.Counts[ny-1-ycut(ys[i])][xcut(xs[i])]++
	}
	return g
}

// AxisCell maps a value to its cell on an axis of a scatter's grid: its
// level when levels are given, one of gridBins equal bins of [lo, hi]
// otherwise; n is the number of cells.
func AxisCell(levels []float64, lo, hi float64) (cell func(float64) int, n int) {
	if len(levels) > 0 {
		return func(v float64) int {
			i, _ := slices.BinarySearch(levels, v)
			return min(i, len(levels)-1)
		}, len(levels)
	}
	// The bins and their edges are the histogram's (stats.BinIndex), as
	// the page names the cells after stats.Histogram's bins: a plain
	// floor((v-lo)/width) put a final score of 3.4 on a 1 to 5 scale in
	// the cell "2.6 to 3.4" ((3.4-1)/0.8 is 2.9999999999999996).
	return func(v float64) int {
		return stats.BinIndex(v, lo, hi, gridBins)
	}, gridBins
}

// GridBins is the number of cells of a continuous axis in a scatter's grid.
func GridBins() int { return gridBins }

// SampleIndexes picks at most limit of n indexes, by a fixed seed, in
// increasing order; all of them when n is at most limit.
func SampleIndexes(n, limit int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if n <= limit {
		return idx
	}
	// A partial Fisher-Yates shuffle picks limit distinct indexes.
	rng := rand.New(rand.NewPCG(ScatterSeed, uint64(n)))
	for i := range limit {
		j := i + rng.IntN(n-i)
		idx[i], idx[j] = idx[j], idx[i]
	}
	keep := idx[:limit]
	slices.Sort(keep)
	return keep
}

// DiscreteLevels returns the sorted distinct values of vs when they are
// few (at most maxLevels) and vs has more values than levels; nil for
// continuous data.
func DiscreteLevels(vs []float64) []float64 {
	var levels []float64
	for _, v := range vs {
		i, found := slices.BinarySearch(levels, v)
		if found {
			continue
		}
		if len(levels) == maxLevels {
			return nil
		}
		levels = slices.Insert(levels, i, v)
	}
	if len(levels) >= len(vs) {
		return nil
	}
	return levels
}
