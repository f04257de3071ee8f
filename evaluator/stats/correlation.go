package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Correlation is one correlation coefficient between judge and human scores,
// with its significance and, when asked for, a bootstrap interval.
type Correlation struct {
	// Coef is the coefficient in [-1, 1]; NaN when undefined (fewer than
	// three pairs, or a series with a single distinct value).
	Coef float64
	// P is the two-sided p-value against "no association"; NaN when Coef is.
	P float64
	// N is the number of pairs the coefficient was computed on.
	N int
	// Missing is the number of pairs left out because either value was
	// missing (nil or non-finite).
	Missing int
	// CILow and CIHigh bound the 95% bootstrap percentile interval; NaN
	// when it was not computed or could not be.
	CILow, CIHigh float64
	// Resamples is the number of resamples drawn for a bootstrap interval
	// and ResamplesUsed those whose coefficient was defined, which the
	// interval is taken from (the others, e.g. a resample whose human
	// ratings are all one value, are left out); both 0 when the interval
	// is not a bootstrap's (Fisher's z, or none).
	Resamples, ResamplesUsed int
}

// LeftOutResamples reports whether the interval is a bootstrap's taken
// from fewer resamples than were drawn, so a reader should be told how
// many it is from (ResamplesNote).
func (c Correlation) LeftOutResamples() bool {
	return c.ResamplesUsed > 0 && c.ResamplesUsed < c.Resamples
}

// Method names a correlation coefficient. Its values are stable strings
// that can be stored and put in URLs.
type Method string

// The coefficients the paper reports.
const (
	MethodPearson  Method = "pearson"
	MethodSpearman Method = "spearman"
	MethodKendall  Method = "kendall"
)

// Methods lists every supported method, in the order the paper's tables
// use. It returns a new slice each time so no caller can change another's.
func Methods() []Method {
	return []Method{MethodPearson, MethodSpearman, MethodKendall}
}

// Valid reports whether m is one of the supported methods.
func (m Method) Valid() bool {
	switch m {
	case MethodPearson, MethodSpearman, MethodKendall:
		return true
	}
	return false
}

// Label is the coefficient's name as the pages' tables head it: "Pearson
// r", "Spearman ρ", "Kendall τ-b" (Kendall's tau-b, the variant computed,
// which corrects for ties). An unknown method is labelled by its string.
func (m Method) Label() string {
	switch m {
	case MethodPearson:
		return "Pearson r"
	case MethodSpearman:
		return "Spearman ρ"
	case MethodKendall:
		return "Kendall τ-b"
	}
	return string(m)
}

// minPairs is the smallest sample with a defined coefficient and test: with
// two points any two distinct values correlate perfectly (±1), which says
// nothing, and the t test has n-2 = 0 degrees of freedom.
const minPairs = 3

// Pairs keeps the positions where both x and y hold a finite value and
// returns them as plain slices, with the number of positions dropped.
// It panics if x and y differ in length.
func Pairs(x, y []*float64) (xs, ys []float64, missing int) {
	mustSameLen(len(x), len(y))
	xs = make([]float64, 0, len(x))
	ys = make([]float64, 0, len(y))
	for i := range x {
		if x[i] == nil || y[i] == nil || !finite(*x[i]) || !finite(*y[i]) {
			missing++
			continue
		}
		xs = append(xs, *x[i])
		ys = append(ys, *y[i])
	}
	return xs, ys, missing
}

// Pearson is the linear correlation of x and y. Its p-value comes from
// Student's t with n-2 degrees of freedom, t = r*sqrt((n-2)/(1-r²)), the
// usual test (the same as scipy.stats.pearsonr). Pairs where either value
// is not finite are left out and counted in Missing.
func Pearson(x, y []float64) Correlation {
	return Correlate(MethodPearson, x, y)
}

// Spearman is the Pearson correlation of the ranks, tied values sharing the
// average of their ranks. Its p-value is exact (a permutation test over
// every ordering) up to ExactPermutationMax pairs, and above uses the same
// t approximation with n-2 degrees of freedom as scipy.stats.spearmanr.
// Pairs where either value is not finite are left out and counted in
// Missing.
func Spearman(x, y []float64) Correlation {
	return Correlate(MethodSpearman, x, y)
}

// Kendall is Kendall's tau-b, which corrects for ties. Its p-value is exact
// (a permutation test over every ordering) up to ExactPermutationMax pairs;
// above, it comes from the normal approximation with the tie-corrected variance of the
// concordant-minus-discordant count, as scipy.stats.kendalltau's
// "asymptotic" method. Pairs where either value is not finite are left out
// and counted in Missing.
func Kendall(x, y []float64) Correlation {
	return Correlate(MethodKendall, x, y)
}

// Correlate computes the coefficient named by m with its p-value; the
// bootstrap interval is left NaN (see WithBootstrap). An unknown method
// gives an all-NaN result rather than a panic, because the method may come
// from a form; check Method.Valid first to report it properly.
// It panics if x and y differ in length.
func Correlate(m Method, x, y []float64) Correlation {
	xs, ys, missing := finitePairs(x, y)
	c := Correlation{
		Coef: math.NaN(), P: math.NaN(),
		N: len(xs), Missing: missing,
		CILow: math.NaN(), CIHigh: math.NaN(),
	}
	if !m.Valid() {
		return c
	}
	// xs and ys are this call's own copies: put them in canonical form in
	// place (canonicalPairs' result, without its three further copies),
	// and once: coefficient would canonicalize them again, which changes
	// nothing on canonical pairs (TestCorrelationIntervalsMatchOldCode
	// compares with the old code).
	canonicalInPlace(xs, ys, make([]int, len(xs)))
	if len(xs) >= minPairs {
		c.Coef = preparedCoefficient(m, xs, ys)
	}
	if math.IsNaN(c.Coef) {
		return c
	}
	switch {
	case m == MethodPearson:
		c.P = tTestP(c.Coef, len(xs))
	case len(xs) <= ExactPermutationMax:
		c.P = exactOrderingP(m, xs, ys)
	case m == MethodSpearman:
		c.P = tTestP(c.Coef, len(xs))
	case m == MethodKendall:
		c.P = kendallP(c.Coef, xs, ys)
	}
	return c
}

// coefficient returns the bare coefficient of finite, equal-length xs and
// ys, or NaN when it is undefined. The bootstrap calls it directly to skip
// the p-value work.
//
// The values are first put in canonical form (canonicalPairs): scores that
// differ only by floating-point noise become one tied value, and the pairs
// are sorted, so the same pairs in any order give the same bits.
func coefficient(m Method, xs, ys []float64) float64 {
	if len(xs) < minPairs {
		return math.NaN()
	}
	xs, ys = canonicalPairs(xs, ys)
	return preparedCoefficient(m, xs, ys)
}

// preparedCoefficient is coefficient on series already put through
// snapTies (so noise ties are exact ties), in the order given. The
// resampling loops call it on draws from canonical data, saving the sorts
// of coefficient on every draw; the draws' order is fixed by the seed, so
// the results stay reproducible.
func preparedCoefficient(m Method, xs, ys []float64) float64 {
	if len(xs) < minPairs || isConstant(xs) || isConstant(ys) {
		// Checked here rather than left to the libraries: montanaflynn/stats
		// reports these cases as 0 (with an error), and for a constant
		// series of decimals such as 0.1 the computed mean can differ from
		// the values by a rounding error, leaving a tiny non-zero variance
		// and a meaningless coefficient instead of "undefined".
		return math.NaN()
	}
	var r float64
	switch m {
	// Pearson and Spearman go through gonum rather than montanaflynn/stats:
	// the latter divides the covariance by a product of two square roots,
	// so a series against itself (or any two series with the same ranks)
	// comes out as 0.99999999999999978 instead of 1. gonum divides by
	// sqrt(Sxx*Syy), which is exact in that case.
	case MethodPearson:
		r = stat.Correlation(xs, ys, nil)
	case MethodSpearman:
		r = stat.Correlation(averageRanks(xs), averageRanks(ys), nil)
	case MethodKendall:
		// tau-b in O(n log n) (kendall.go); montanaflynn/stats' O(n²)
		// KendallTau is its test oracle. gonum's stat.Kendall counts pairs
		// tied in one series as concordant, which tau-b must not.
		r = kendallTauB(xs, ys)
	default:
		return math.NaN()
	}
	if math.IsNaN(r) {
		return math.NaN()
	}
	// Rounding can push a perfect correlation a hair past ±1, which would
	// make 1-r² negative and the p-value NaN.
	return math.Max(-1, math.Min(1, r))
}

// averageRanks returns the 1-based ranks of xs, tied values sharing the
// mean of the ranks they span (so 10, 20, 20, 30 ranks 1, 2.5, 2.5, 4),
// the convention of Spearman's rho with ties. Neither library exports one:
// montanaflynn/stats keeps its ranking private and gonum has none.
func averageRanks(xs []float64) []float64 {
	ranks := make([]float64, len(xs))
	ranksInto(xs, make([]int, len(xs)), ranks)
	return ranks
}

// tTestP is the two-sided p-value of a correlation r on n pairs under
// Student's t with n-2 degrees of freedom.
func tTestP(r float64, n int) float64 {
	if math.Abs(r) == 1 {
		// t is infinite: the data admit no other explanation. scipy reports 0 too.
		return 0
	}
	df := float64(n - 2)
	t := r * math.Sqrt(df/((1-r)*(1+r)))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	// Survival keeps precision for tiny p-values where 1-CDF would round to 0.
	return 2 * dist.Survival(math.Abs(t))
}

// kendallP is the two-sided p-value of tau-b under the normal approximation
// of S = concordant - discordant, with the variance corrected for ties
// (Kendall, "Rank Correlation Methods"; the formula scipy uses):
//
//	var(S) = (n(n-1)(2n+5) - Σt(t-1)(2t+5) - Σu(u-1)(2u+5)) / 18
//	       + Σt(t-1)(t-2) · Σu(u-1)(u-2) / (9n(n-1)(n-2))
//	       + Σt(t-1) · Σu(u-1) / (2n(n-1))
//
// where t and u run over the sizes of tied groups in x and in y.
func kendallP(tau float64, xs, ys []float64) float64 {
	return kendallPTies(tau, len(xs), tieSums(xs), tieSums(ys))
}

// kendallPTies is kendallP from the tie sums of the two series of n pairs.
func kendallPTies(tau float64, count int, tx, ty ties) float64 {
	n := float64(count)
	pairs := n * (n - 1) / 2
	// tau-b = S / sqrt((pairs - tiedX)(pairs - tiedY)), so S follows from
	// the library's tau without counting the pairs a second time.
	s := tau * math.Sqrt((pairs-tx.pairs)*(pairs-ty.pairs))
	m := n * (n - 1)
	v := (m*(2*n+5)-tx.v1-ty.v1)/18 +
		tx.v2*ty.v2/(9*m*(n-2)) +
		(2*tx.pairs)*(2*ty.pairs)/(2*m)
	if v <= 0 {
		return math.NaN()
	}
	z := s / math.Sqrt(v)
	// erfc directly, not distuv.UnitNormal.Survival: gonum computes that as
	// 1 - erf, which rounds to 0 beyond z ≈ 8, and agreement on a few
	// hundred samples routinely reaches z = 20 (p ≈ 1e-89, not 0).
	return math.Erfc(math.Abs(z) / math.Sqrt2)
}

// ties holds the tie sums of one series: pairs = Σt(t-1)/2 (tied pairs),
// v1 = Σt(t-1)(2t+5) and v2 = Σt(t-1)(t-2), over tied groups of size t.
type ties struct{ pairs, v1, v2 float64 }

// tieSums walks the tied groups in sorted order rather than through a map,
// so the sums are accumulated in the same order on every run.
func tieSums(xs []float64) ties {
	return tieSumsSorted(sortedCopy(xs))
}

// tieSumsSorted is tieSums of a series already sorted ascending.
func tieSumsSorted(sorted []float64) ties {
	var t ties
	for lo := 0; lo < len(sorted); {
		hi := lo + 1
		for hi < len(sorted) && sorted[hi] == sorted[lo] {
			hi++
		}
		k := float64(hi - lo)
		t.pairs += k * (k - 1) / 2
		t.v1 += k * (k - 1) * (2*k + 5)
		t.v2 += k * (k - 1) * (k - 2)
		lo = hi
	}
	return t
}

// sortedCopy is xs sorted, in an array of its size: slices.Sorted over
// slices.Values grows its result by appending, which at a million
// samples allocated about twice the copy.
func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

// finitePairs drops the positions where x or y is not finite.
func finitePairs(x, y []float64) (xs, ys []float64, missing int) {
	mustSameLen(len(x), len(y))
	xs = make([]float64, 0, len(x))
	ys = make([]float64, 0, len(y))
	for i := range x {
		if !finite(x[i]) || !finite(y[i]) {
			missing++
			continue
		}
		xs = append(xs, x[i])
		ys = append(ys, y[i])
	}
	return xs, ys, missing
}

func isConstant(xs []float64) bool {
	for _, v := range xs[1:] {
		if v != xs[0] {
			return false
		}
	}
	return true
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func mustSameLen(a, b int) {
	if a != b {
		panic(fmt.Sprintf("stats: paired series differ in length (%d and %d)", a, b))
	}
}

// tieTolerance is how close, relative to their size (and never finer than
// 1e-9 absolute), two scores must be to count as the same score. Averages
// and probability-weighted scores carry floating-point noise in their last
// bits: 7/3 arrives as 2.3333333333333335 from one sum and 2.333333333333333
// from another. Ranked as distinct values, such noise produces Spearman and
// Kendall figures out of nothing (and a "varying" series that is really
// constant). 1e-9 is far below any difference a judge or a human can mean
// (scores carry a few decimals) and far above the noise of double
// arithmetic (about 1e-16 relative).
const tieTolerance = 1e-9

// sameScore reports whether a and b differ by no more than tieTolerance.
func sameScore(a, b float64) bool {
	scale := math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
	return math.Abs(a-b) <= tieTolerance*scale
}

// snapTies returns a copy of xs in which values that differ from the
// smallest value of their run by no more than tieTolerance are replaced by
// that smallest value, so rounding noise becomes an exact tie. Runs are
// measured from their first value, not chained from neighbour to neighbour,
// so a run never spans more than the tolerance.
func snapTies(xs []float64) []float64 {
	out := slices.Clone(xs)
	snapTiesInPlace(out, make([]int, len(xs)))
	return out
}

// canonicalPairs snaps noise ties in each series (snapTies) and sorts the
// pairs by x, then y. Every figure computed from the result depends only on
// the multiset of pairs, not on the order the caller listed them in, down
// to the last bit of each floating-point sum.
func canonicalPairs(xs, ys []float64) ([]float64, []float64) {
	sx, sy := snapTies(xs), snapTies(ys)
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(sx[a], sx[b]); c != 0 {
			return c
		}
		return cmp.Compare(sy[a], sy[b])
	})
	outX := make([]float64, len(xs))
	outY := make([]float64, len(ys))
	for k, i := range order {
		outX[k], outY[k] = sx[i], sy[i]
	}
	return outX, outY
}

// snapJoint snaps noise ties across two series together, so a value of one
// and the same value, with other noise, of the other become identical.
// The paired permutation test mixes the two judges' scores in one series.
func snapJoint(a, b []float64) ([]float64, []float64) {
	both := snapTies(append(slices.Clone(a), b...))
	return both[:len(a):len(a)], both[len(a):]
}
