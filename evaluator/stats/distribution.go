package stats

import (
	"maps"
	"math"
	"slices"

	mstats "github.com/montanaflynn/stats"
)

// Mean is the arithmetic mean of xs; NaN when xs is empty.
func Mean(xs []float64) float64 {
	m, err := mstats.Mean(xs)
	if err != nil {
		return math.NaN()
	}
	return m
}

// Summary describes a series of scores.
type Summary struct {
	N    int     // number of values
	Mean float64 // NaN when N == 0
	// SD is the sample standard deviation (n-1 divisor), the figure
	// spreadsheets and pandas print; NaN when N < 2.
	SD               float64
	Min, Max, Median float64 // NaN when N == 0
}

// Describe summarises xs. Non-finite values are left out first, so N counts
// only the values the other figures are computed on.
func Describe(xs []float64) Summary {
	vals := finiteValues(xs)
	s := Summary{
		N: len(vals), Mean: math.NaN(), SD: math.NaN(),
		Min: math.NaN(), Max: math.NaN(), Median: math.NaN(),
	}
	if len(vals) == 0 {
		return s
	}
	s.Mean, _ = mstats.Mean(vals)
	s.Min, _ = mstats.Min(vals)
	s.Max, _ = mstats.Max(vals)
	s.Median, _ = mstats.Median(vals)
	if len(vals) > 1 {
		s.SD, _ = mstats.StandardDeviationSample(vals)
	}
	return s
}

// binTolerance absorbs the rounding of decimal division before flooring:
// 0.3/0.1 is 2.9999999999999996 in binary floating point, and without the
// nudge a score of 0.3 would land in the bin of 0.2. Real scores are never
// this close below a bin edge on purpose.
const binTolerance = 1e-9

// Entropy is the Shannon entropy, in bits, of the distribution of values:
// H = -Σ p(s) log2 p(s). With binWidth 0 each distinct value is its own
// outcome (integer scores); with binWidth > 0 a value v counts as outcome
// floor(v/binWidth), which groups decimal scores. A judge that always gives
// the same score has entropy 0; k equally used scores give log2 k.
// Non-finite values are left out. It is NaN when no value remains or
// binWidth is negative or not finite.
func Entropy(values []float64, binWidth float64) float64 {
	if binWidth < 0 || !finite(binWidth) {
		return math.NaN()
	}
	counts := map[float64]int{}
	for _, v := range finiteValues(values) {
		key := v
		if binWidth > 0 {
			key = math.Floor(v/binWidth + binTolerance)
		}
		counts[key]++
	}
	if len(counts) == 0 {
		return math.NaN()
	}
	// Outcomes in sorted order: the library sums p·log p over the slice,
	// and a map's order would change the last bits from run to run.
	freq := make([]float64, 0, len(counts))
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		freq = append(freq, float64(counts[k]))
	}
	// The library normalises the counts and uses natural logarithms.
	h, err := mstats.Entropy(freq)
	if err != nil {
		return math.NaN()
	}
	h /= math.Ln2
	if h <= 0 {
		return 0 // a single outcome: report 0, not -0
	}
	return h
}

// Bin is one bar of a histogram: the Count of values in [Lo, Hi), or
// [Lo, Hi] for the last bin.
type Bin struct {
	Lo, Hi float64
	Count  int
}

// Histogram counts values in bins equal-width bins spanning [lo, hi]. Each
// bin is closed on the left and open on the right, except the last, which
// also holds values equal to hi so that a top score is counted. A value
// within a billionth of a bin width below an edge counts as on the edge
// (see binTolerance), so decimal scores land where a reader expects. Values
// outside [lo, hi] and non-finite values are not counted. It returns nil
// when bins < 1 or the range is empty or not finite.
//
// Written here rather than taken from montanaflynn/stats because that one
// spans the data's own minimum and maximum, and score histograms must span
// the criterion's scale so that runs can be compared bar for bar.
func Histogram(values []float64, lo, hi float64, bins int) []Bin {
	if bins < 1 || !finite(lo) || !finite(hi) || hi <= lo {
		return nil
	}
	out := make([]Bin, bins)
	for i := range out {
		// Scaling by i/bins, not adding i widths, keeps edges such as 0.3
		// exact for decimal scales instead of 0.30000000000000004.
		out[i].Lo = edge(lo, hi, i, bins)
		out[i].Hi = edge(lo, hi, i+1, bins)
	}
	for _, v := range values {
		if !finite(v) || v < lo || v > hi {
			continue
		}
		out[BinIndex(v, lo, hi, bins)].Count++
	}
	return out
}

// BinIndex is the bin, 0 to bins-1, that Histogram counts v in among bins
// equal-width bins of [lo, hi]: closed on the left, the last also holding
// hi, and a value within binTolerance of a bin width below an edge counted
// as on the edge (3.4 on a 1 to 5 scale in five bins is 2.9999999999999996
// widths from 1, and belongs in the bin "3.4 to 4.2"). A value below lo
// counts in the first bin and one above hi in the last. Every figure that
// counts values per bin (the histogram, the judge-against-human grid)
// uses it, so a value is counted under the same edges everywhere. bins
// must be at least 1 and hi above lo.
func BinIndex(v, lo, hi float64, bins int) int {
	width := (hi - lo) / float64(bins)
	i := int(math.Floor((v-lo)/width + binTolerance))
	return min(max(i, 0), bins-1)
}

func edge(lo, hi float64, i, bins int) float64 {
	if i == bins {
		return hi
	}
	return lo + (hi-lo)*float64(i)/float64(bins)
}

func finiteValues(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, v := range xs {
		if finite(v) {
			out = append(out, v)
		}
	}
	return out
}
