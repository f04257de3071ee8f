package stats

import (
	"cmp"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Correlations holds the three coefficients of one criterion on the same
// pairs, with the interval method they share.
type Correlations struct {
	Pearson, Spearman, Kendall Correlation
	// Interval says how the three intervals were computed (the same rule
	// for all three: it depends only on the number of complete pairs).
	Interval IntervalMethod
}

// CorrelationIntervals is CorrelationInterval for Pearson, Spearman and
// Kendall on the same x and y, bit for bit. Above AnalyticAbove complete
// pairs it keeps one canonical copy of the pairs and one set of work
// arrays for the three, instead of a copy, a canonical copy and work
// arrays per coefficient: at a million pairs the three together used to
// allocate about a gigabyte of temporaries, now about 40 MB.
// It panics if x and y differ in length.
func CorrelationIntervals(x, y []float64, resamples int, seed uint64) Correlations {
	mustSameLen(len(x), len(y))
	if completePairs(x, y) <= AnalyticAbove {
		var out Correlations
		out.Pearson, out.Interval = CorrelationInterval(MethodPearson, x, y, resamples, seed)
		out.Spearman, _ = CorrelationInterval(MethodSpearman, x, y, resamples, seed)
		out.Kendall, _ = CorrelationInterval(MethodKendall, x, y, resamples, seed)
		return out
	}
	cs := fisherZCorrelations(x, y, MethodPearson, MethodSpearman, MethodKendall)
	return Correlations{Pearson: cs[0], Spearman: cs[1], Kendall: cs[2], Interval: IntervalFisherZ}
}

// completePairs counts the positions where both x and y are finite.
func completePairs(x, y []float64) int {
	n := 0
	for i := range x {
		if finite(x[i]) && finite(y[i]) {
			n++
		}
	}
	return n
}

// fisherZCorrelations is the large-sample branch of CorrelationInterval
// (more than AnalyticAbove complete pairs) for each of methods, with the
// PerfectCoef rule applied. It gives the same bits as Correlate followed
// by FisherInterval (or, for Kendall, kendallSE) on canonicalPairs:
//   - canonicalPairs is idempotent (after snapping, values within the
//     tolerance are identical, so a second snap changes nothing and the
//     second sort finds the pairs sorted), so the one canonical copy made
//     here is what coefficient and kendallSE would have made again;
//   - on canonical pairs x is sorted, and pairs that compare equal are
//     identical, so every sort the old path did on them either leaves
//     them as they are or only swaps identical values: ranks, tie counts
//     and merge counts are computed on the same values in the same order.
func fisherZCorrelations(x, y []float64, methods ...Method) []Correlation {
	xs, ys, missing := finitePairs(x, y)
	n := len(xs)
	order := make([]int, n)
	canonicalInPlace(xs, ys, order)
	// a and b are the work arrays of Spearman's ranks and of Kendall's
	// merge sort and per-sample sums, allocated once, when first needed.
	var a, b []float64
	work := func() {
		if a == nil {
			a, b = make([]float64, n), make([]float64, n)
		}
	}
	out := make([]Correlation, len(methods))
	for k, m := range methods {
		c := Correlation{
			Coef: math.NaN(), P: math.NaN(),
			N: n, Missing: missing,
			CILow: math.NaN(), CIHigh: math.NaN(),
		}
		out[k] = c
		if !m.Valid() || n < minPairs || isConstant(xs) || isConstant(ys) {
			continue
		}
		var r float64
		var ty ties // Kendall's ties of y, from its merge-sorted copy
		switch m {
		case MethodPearson:
			r = preparedCoefficient(m, xs, ys)
		case MethodSpearman:
			work()
			sortedRanks(xs, a)
			ranksInto(ys, order, b)
			r = clampCoef(stat.Correlation(a, b, nil))
		case MethodKendall:
			work()
			r = clampCoef(kendallTauBSorted(xs, ys, a, b))
			// a now holds ys sorted.
			ty = tieSumsSorted(a)
		}
		c.Coef = r
		if math.IsNaN(r) {
			out[k] = c
			continue
		}
		switch m {
		case MethodPearson:
			c.P = tTestP(r, n)
			c.CILow, c.CIHigh = FisherInterval(m, r, n)
		case MethodSpearman:
			c.P = tTestP(r, n)
			c.CILow, c.CIHigh = FisherInterval(m, r, n)
		case MethodKendall:
			tx := tieSumsSorted(xs)
			c.P = kendallPTies(r, n, tx, ty)
			se := kendallSESorted(xs, ys, tx, ty, a, order, b)
			c.CILow, c.CIHigh = fisherBounds(r, se/(1-r*r))
		}
		if PerfectCoef(c.Coef) {
			c.CILow, c.CIHigh = math.NaN(), math.NaN()
		}
		out[k] = c
	}
	return out
}

// clampCoef is preparedCoefficient's last step: NaN stays NaN, and
// rounding past ±1 is brought back.
func clampCoef(r float64) float64 {
	if math.IsNaN(r) {
		return math.NaN()
	}
	return math.Max(-1, math.Min(1, r))
}

// canonicalInPlace is canonicalPairs on xs and ys themselves, with order
// (of their length) as its only work array: it snaps each series in place
// (snapTiesInPlace), then sorts the pairs by x, then y, moving the values
// along the permutation's cycles instead of into new arrays.
func canonicalInPlace(xs, ys []float64, order []int) {
	snapTiesInPlace(xs, order)
	snapTiesInPlace(ys, order)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(xs[a], xs[b]); c != 0 {
			return c
		}
		return cmp.Compare(ys[a], ys[b])
	})
	// Position k receives the pair at order[k]. A visited position's entry
	// is stored as -1-src so each cycle is walked once.
	for start := range order {
		if order[start] < 0 {
			continue
		}
		tx, ty := xs[start], ys[start]
		j := start
		for {
			src := order[j]
			order[j] = -1 - src
			if src == start {
				xs[j], ys[j] = tx, ty
				break
			}
			xs[j], ys[j] = xs[src], ys[src]
			j = src
		}
	}
}

// snapTiesInPlace is snapTies writing into xs itself, order being a work
// array of its length. The sort reads xs before anything is written, and
// the walk reads each value once, before it writes it, so the result is
// the copy snapTies returns.
func snapTiesInPlace(xs []float64, order []int) {
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	for lo := 0; lo < len(order); {
		rep := xs[order[lo]]
		hi := lo + 1
		for hi < len(order) && sameScore(xs[order[hi]], rep) {
			xs[order[hi]] = rep
			hi++
		}
		lo = hi
	}
}

// sortedRanks writes into ranks the average ranks (averageRanks) of xs,
// which must be sorted ascending: the tied groups are its runs.
func sortedRanks(xs, ranks []float64) {
	for lo := 0; lo < len(xs); {
		hi := lo + 1
		for hi < len(xs) && xs[hi] == xs[lo] {
			hi++
		}
		r := float64(lo+1+hi) / 2
		for i := lo; i < hi; i++ {
			ranks[i] = r
		}
		lo = hi
	}
}

// ranksInto writes into ranks the average ranks (averageRanks) of xs,
// with order (of its length) as the work array of the sort. A rank is
// the mean of the positions its tied group spans, whatever order the
// sort leaves tied values in, so the ranks are averageRanks' to the bit.
func ranksInto(xs []float64, order []int, ranks []float64) {
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	for lo := 0; lo < len(order); {
		hi := lo + 1
		for hi < len(order) && xs[order[hi]] == xs[order[lo]] {
			hi++
		}
		r := float64(lo+1+hi) / 2
		for _, i := range order[lo:hi] {
			ranks[i] = r
		}
		lo = hi
	}
}
