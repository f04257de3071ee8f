package stats

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// This file compares two judges scored on the same samples: is the
// correlation of judge A with the humans really higher than judge B's, or
// is the gap within what resampling the samples would give? The two
// correlations share the human variable and are computed on the same
// samples, so they are dependent, and tests for independent correlations
// (comparing two Fisher z with 1/(n-3) variances each) would be wrong:
// usually far too cautious, because two judges of the same samples
// correlate with each other.

// DefaultPermutations is the number of random swaps the paired permutation
// test draws. With 1000 the p-value's Monte Carlo error is at most about
// ±0.016 (binomial standard error at p = 0.5), and ±0.007 near p = 0.05,
// which is enough to tell 0.01 from 0.1; the page says it is an estimate.
const DefaultPermutations = 1000

// permutationStream is PCG's second seed word for the permutation test,
// different from the bootstrap's so the two draws are not the same bits.
const permutationStream = 0x7065726d75746521 // "permute!" in ASCII

// pairedBootstrapStream seeds the paired bootstrap of a difference.
const pairedBootstrapStream = 0x70616972656462 // "pairedb" in ASCII

// minPairedSamples is the fewest samples a paired test is run on: Williams'
// t has n − 3 degrees of freedom, and on three samples a resampling test
// has at most 8 distinct swaps, too few to say anything.
const minPairedSamples = 4

// PairedTest is one test of "the two correlations are equal".
type PairedTest struct {
	// Name says which test: "Williams' t", "Steiger's z", "paired permutation".
	Name string
	// Statistic is the test statistic (t or z); NaN for the permutation
	// test, whose statistic is the difference itself.
	Statistic float64
	// DF is the degrees of freedom of a t statistic, 0 otherwise.
	DF int
	// P is the two-sided p-value; NaN when undefined.
	P float64
}

// Difference compares two judges' correlations with the same human
// ratings on the same samples.
type Difference struct {
	Method Method
	// A and B are each judge's coefficient with the humans on the samples
	// both scored; NaN when undefined (constant scores, too few samples).
	A, B float64
	// AB is the judges' coefficient with each other.
	AB float64
	// Diff is A − B; NaN when either is undefined.
	Diff float64
	// CILow and CIHigh bound the 95% interval of Diff; NaN when it could
	// not be computed.
	CILow, CIHigh float64
	// Interval names how the interval was computed: "Zou (2007)" for
	// Pearson, "paired bootstrap" for Spearman and Kendall.
	Interval string
	// Tests are the paired tests run, the one to read first first:
	// Williams' t then Steiger's z then the permutation test for Pearson,
	// the permutation test for Spearman and Kendall.
	Tests []PairedTest
	// N is the number of samples with a finite score from both judges and
	// the humans; Missing is the number left out.
	N, Missing int
	// Resamples is the number of resamples drawn for a paired bootstrap
	// interval and ResamplesUsed those in which both coefficients were
	// defined, which the interval is taken from (the others are left
	// out); both 0 when the interval is not a bootstrap's.
	Resamples, ResamplesUsed int
}

// LeftOutResamples reports whether the interval is a bootstrap's taken
// from fewer resamples than were drawn (some left out as undefined), so a
// reader should be told how many it is from.
func (d Difference) LeftOutResamples() bool {
	return d.ResamplesUsed > 0 && d.ResamplesUsed < d.Resamples
}

// P is the p-value of the first (main) test; NaN when there is none.
func (d Difference) P() float64 {
	if len(d.Tests) == 0 {
		return math.NaN()
	}
	return d.Tests[0].P
}

// CompareCorrelations measures whether judge a agrees with the human
// ratings h better than judge b does, on the samples where all three are
// finite. For Pearson it runs Williams' t (Steiger 1980 recommends it
// among the tests for two correlations sharing a variable), Steiger's z,
// and the paired permutation test, with Zou's (2007) 95% interval of the
// difference. For Spearman and Kendall, whose sampling distributions have
// no such closed form with ties, it runs the paired permutation test with
// a paired bootstrap percentile interval. resamples sets both the number
// of bootstrap resamples and of permutations (values below 1 skip them);
// seed fixes both draws, so the same inputs give the same figures.
// It panics if a, b and h differ in length.
func CompareCorrelations(m Method, a, b, h []float64, resamples int, seed uint64) Difference {
	mustSameLen(len(a), len(b))
	mustSameLen(len(a), len(h))
	as, bs, hs, missing := finiteTriples(a, b, h)
	nan := math.NaN()
	d := Difference{Method: m, A: nan, B: nan, AB: nan, Diff: nan, CILow: nan, CIHigh: nan,
		N: len(as), Missing: missing}
	if !m.Valid() {
		return d
	}
	d.A, d.B, d.AB = coefficient(m, as, hs), coefficient(m, bs, hs), coefficient(m, as, bs)
	if math.IsNaN(d.A) || math.IsNaN(d.B) {
		return d
	}
	d.Diff = d.A - d.B
	if d.N < minPairedSamples {
		return d
	}
	if m == MethodPearson {
		d.Interval = "Zou (2007)"
		t, p := WilliamsT(d.A, d.B, d.AB, d.N)
		z, pz := SteigerZ(d.A, d.B, d.AB, d.N)
		d.CILow, d.CIHigh = ZouInterval(d.A, d.B, d.AB, d.N)
		d.Tests = append(d.Tests, PairedTest{Name: "Williams' t", Statistic: t, DF: d.N - 3, P: p},
			PairedTest{Name: "Steiger's z", Statistic: z, P: pz})
	} else {
		d.Interval = "paired bootstrap"
		d.CILow, d.CIHigh, d.ResamplesUsed = PairedBootstrapCounted(m, as, bs, hs, resamples, seed)
		d.Resamples = max(resamples, 0)
	}
	if resamples >= 1 {
		d.Tests = append(d.Tests, PairedTest{Name: "paired permutation", Statistic: nan,
			P: PairedPermutation(m, as, bs, hs, resamples, seed)})
	}
	return d
}

// finiteTriples keeps the positions where a, b and h are all finite, in
// canonical order (sorted by h, then a, then b) so that resampling does
// not depend on the order the samples were listed in.
func finiteTriples(a, b, h []float64) (as, bs, hs []float64, missing int) {
	type triple struct{ a, b, h float64 }
	ts := make([]triple, 0, len(a))
	for i := range a {
		if !finite(a[i]) || !finite(b[i]) || !finite(h[i]) {
			missing++
			continue
		}
		ts = append(ts, triple{a[i], b[i], h[i]})
	}
	slices.SortFunc(ts, func(x, y triple) int {
		if c := cmp.Compare(x.h, y.h); c != 0 {
			return c
		}
		if c := cmp.Compare(x.a, y.a); c != 0 {
			return c
		}
		return cmp.Compare(x.b, y.b)
	})
	as, bs, hs = make([]float64, len(ts)), make([]float64, len(ts)), make([]float64, len(ts))
	for i, t := range ts {
		as[i], bs[i], hs[i] = t.a, t.b, t.h
	}
	return as, bs, hs, missing
}

// WilliamsT is Williams' t for the difference of two dependent Pearson
// correlations that share a variable: rA = r(A, H), rB = r(B, H) and
// rAB = r(A, B) on n samples, in Steiger's (1980, eq. 7) form
//
//	t = (rA − rB) · sqrt( (n−1)(1+rAB) / (2·(n−1)/(n−3)·|R| + r̄²(1−rAB)³) )
//
// with |R| = 1 − rA² − rB² − rAB² + 2·rA·rB·rAB (the determinant of the
// three variables' correlation matrix) and r̄ = (rA + rB)/2, referred to
// Student's t with n − 3 degrees of freedom. It returns t and the
// two-sided p-value, both NaN when n < 4 or an input is not a correlation.
func WilliamsT(rA, rB, rAB float64, n int) (t, p float64) {
	if n < 4 || !isCorr(rA) || !isCorr(rB) || !isCorr(rAB) {
		return math.NaN(), math.NaN()
	}
	if rA == rB {
		// No difference at all: t is 0 whatever the denominator, even for
		// two identical judges, whose |R| and 1 − rAB are both 0.
		return 0, 1
	}
	nf := float64(n)
	det := 1 - rA*rA - rB*rB - rAB*rAB + 2*rA*rB*rAB
	rbar := (rA + rB) / 2
	den := 2*(nf-1)/(nf-3)*det + rbar*rbar*math.Pow(1-rAB, 3)
	if den <= 0 {
		// Only when the three series are exactly collinear: the judges
		// are the same judge up to a linear map, so there is no difference.
		return math.NaN(), math.NaN()
	}
	t = (rA - rB) * math.Sqrt((nf-1)*(1+rAB)/den)
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: nf - 3}
	return t, 2 * dist.Survival(math.Abs(t))
}

// SteigerZ is Steiger's (1980, eq. 15) z for the same comparison: the
// difference of the Fisher transforms, divided by its standard error
// under the null, with the covariance of the two transforms estimated
// from the pooled r̄ = (rA + rB)/2:
//
//	ψ = rAB(1 − 2r̄²) − ½r̄²(1 − 2r̄² − rAB²),  c = ψ / (1 − r̄²)²
//	z = (atanh rA − atanh rB) · sqrt(n − 3) / sqrt(2 − 2c)
//
// It returns z and the two-sided normal p-value, both NaN when n < 4, an
// input is not a correlation, or |rA| or |rB| is 1.
func SteigerZ(rA, rB, rAB float64, n int) (z, p float64) {
	if n < 4 || !isCorr(rA) || !isCorr(rB) || !isCorr(rAB) || math.Abs(rA) == 1 || math.Abs(rB) == 1 {
		return math.NaN(), math.NaN()
	}
	rbar := (rA + rB) / 2
	r2 := rbar * rbar
	psi := rAB*(1-2*r2) - 0.5*r2*(1-2*r2-rAB*rAB)
	c := psi / ((1 - r2) * (1 - r2))
	if c >= 1 {
		return math.NaN(), math.NaN()
	}
	z = (math.Atanh(rA) - math.Atanh(rB)) * math.Sqrt(float64(n-3)) / math.Sqrt(2-2*c)
	return z, math.Erfc(math.Abs(z) / math.Sqrt2)
}

// z975 is the 97.5th percentile of the standard normal, for 95% intervals.
const z975 = 1.959963984540054

// ZouInterval is the 95% interval of rA − rB for two Pearson correlations
// sharing a variable (Zou 2007, "Toward using confidence intervals to
// compare correlations", the overlapping case). Each correlation gets its
// own Fisher-z interval (l, u); the two are combined with the correlation
// between rA and rB,
//
//	c = ((rAB − ½rA·rB)(1 − rA² − rB² − rAB²) + rAB³) / ((1 − rA²)(1 − rB²))
//	L = rA − rB − sqrt((rA − lA)² + (uB − rB)² − 2c(rA − lA)(uB − rB))
//	U = rA − rB + sqrt((uA − rA)² + (rB − lB)² − 2c(uA − rA)(rB − lB))
//
// Unlike a symmetric Wald interval it respects the bounds of r, so it stays
// accurate for the high correlations judges reach. NaN bounds when n < 4,
// an input is not a correlation, or |rA| or |rB| is 1.
//
// When rAB is 1 (up to float noise: identicalScores), one judge's scores are
// a rising line of the other's, so rA = rB on these samples and on every
// resample of them: the difference is exactly rA − rB with no spread, and
// the interval is that point. Zou's formula would not say so: with c = 1
// its half-widths are |(rA − lA) − (uB − rB)|, the asymmetry of the two
// Fisher intervals, about ±0.2 on 12 samples for a difference that cannot
// be anything but 0 (the paired bootstrap of Spearman and Kendall beside
// it gave [0, 0]).
func ZouInterval(rA, rB, rAB float64, n int) (lo, hi float64) {
	if n < 4 || !isCorr(rA) || !isCorr(rB) || !isCorr(rAB) || math.Abs(rA) == 1 || math.Abs(rB) == 1 {
		return math.NaN(), math.NaN()
	}
	if rAB >= identicalScores {
		return rA - rB, rA - rB
	}
	half := z975 / math.Sqrt(float64(n-3))
	lA, uA := math.Tanh(math.Atanh(rA)-half), math.Tanh(math.Atanh(rA)+half)
	lB, uB := math.Tanh(math.Atanh(rB)-half), math.Tanh(math.Atanh(rB)+half)
	c := ((rAB-0.5*rA*rB)*(1-rA*rA-rB*rB-rAB*rAB) + rAB*rAB*rAB) / ((1 - rA*rA) * (1 - rB*rB))
	d := rA - rB
	lo = d - math.Sqrt(math.Max(0, (rA-lA)*(rA-lA)+(uB-rB)*(uB-rB)-2*c*(rA-lA)*(uB-rB)))
	hi = d + math.Sqrt(math.Max(0, (uA-rA)*(uA-rA)+(rB-lB)*(rB-lB)-2*c*(uA-rA)*(rB-lB)))
	return lo, hi
}

// identicalScores is the correlation between two judges' scores from which
// ZouInterval takes them as one another's rising line: 1 less float noise
// (a correlation computed of identical columns can come out as
// 0.9999999999999998).
const identicalScores = 1 - 1e-12

func isCorr(r float64) bool { return !math.IsNaN(r) && r >= -1 && r <= 1 }

// PairedBootstrap is the 95% percentile interval of coef(a, h) − coef(b, h)
// over resamples of the samples drawn with replacement, each drawn sample
// keeping its three values together (the pairing is what makes the
// interval narrower than comparing two separate intervals). Resamples in
// which either coefficient is undefined are skipped. The quantiles are
// numpy's default (type 7). NaN bounds when the difference is undefined on
// the data, resamples < 1, or no resample gave a difference. The inputs
// must be finite and of equal length (see CompareCorrelations).
func PairedBootstrap(m Method, a, b, h []float64, resamples int, seed uint64) (lo, hi float64) {
	lo, hi, _ = PairedBootstrapCounted(m, a, b, h, resamples, seed)
	return lo, hi
}

// PairedBootstrapCounted is PairedBootstrap with the number of resamples
// the interval was taken from: those in which both coefficients were
// defined (0 when none was drawn).
func PairedBootstrapCounted(m Method, a, b, h []float64, resamples int, seed uint64) (lo, hi float64, used int) {
	if resamples < 1 || math.IsNaN(coefficient(m, a, h)) || math.IsNaN(coefficient(m, b, h)) {
		return math.NaN(), math.NaN(), 0
	}
	a, b = snapJoint(a, b)
	h = snapTies(h)
	n := len(h)
	rng := rand.New(rand.NewPCG(seed, pairedBootstrapStream))
	ra, rb, rh := make([]float64, n), make([]float64, n), make([]float64, n)
	diffs := make([]float64, 0, resamples)
	for range resamples {
		for i := range n {
			j := rng.IntN(n)
			ra[i], rb[i], rh[i] = a[j], b[j], h[j]
		}
		ca, cb := preparedCoefficient(m, ra, rh), preparedCoefficient(m, rb, rh)
		if !math.IsNaN(ca) && !math.IsNaN(cb) {
			diffs = append(diffs, ca-cb)
		}
	}
	if len(diffs) == 0 {
		return math.NaN(), math.NaN(), 0
	}
	slices.Sort(diffs)
	return quantile(diffs, 0.025), quantile(diffs, 0.975), len(diffs)
}

// PairedPermutation is the two-sided p-value of the paired permutation
// test of coef(a, h) = coef(b, h): under the null the two judges are
// exchangeable on each sample, so each draw swaps a[i] and b[i] with
// probability ½ independently per sample and recomputes the difference.
// The p-value is (1 + #draws with |difference| ≥ observed) / (1 + #draws
// with a difference), which counts the observed labelling as one of the
// draws and so is never 0 (Phipson and Smyth 2010). A draw that leaves one
// judge's scores constant has no difference and is left out of both
// counts, as the bootstrap leaves out its undefined resamples: counted as
// "not as extreme" it would shrink the p-value (two judges differing on
// two samples only, where every other swap makes one constant, got p 0.5
// where every defined swap is as extreme as the data, p 1). Differences
// within 1e-12 of the observed count as equal, so float noise does not
// decide ties. NaN when the observed difference is undefined or perms < 1.
// The inputs must be finite and of equal length (see CompareCorrelations).
func PairedPermutation(m Method, a, b, h []float64, perms int, seed uint64) float64 {
	ca, cb := coefficient(m, a, h), coefficient(m, b, h)
	if perms < 1 || math.IsNaN(ca) || math.IsNaN(cb) {
		return math.NaN()
	}
	observed := math.Abs(ca - cb)
	a, b = snapJoint(a, b)
	h = snapTies(h)
	n := len(h)
	rng := rand.New(rand.NewPCG(seed, permutationStream))
	pa, pb := make([]float64, n), make([]float64, n)
	extreme, defined := 0, 0
	for range perms {
		for i := range n {
			if rng.IntN(2) == 1 {
				pa[i], pb[i] = b[i], a[i]
			} else {
				pa[i], pb[i] = a[i], b[i]
			}
		}
		da, db := preparedCoefficient(m, pa, h), preparedCoefficient(m, pb, h)
		if math.IsNaN(da) || math.IsNaN(db) {
			// A swap that leaves one judge constant has no difference:
			// it is no draw of the statistic, and not counted.
			continue
		}
		defined++
		if math.Abs(da-db) >= observed-1e-12 {
			extreme++
		}
	}
	return float64(1+extreme) / float64(1+defined)
}

// Holm adjusts p-values for testing several hypotheses at once with Holm's
// (1979) step-down method, which controls the chance of any false
// "significant" at the nominal level without assuming independence:
// sorted ascending, the k-th smallest (k from 0) is multiplied by
// (m − k), capped at 1, and made non-decreasing. NaN p-values stay NaN and
// do not count in m. The result is in the order of ps.
func Holm(ps []float64) []float64 {
	out := make([]float64, len(ps))
	var idx []int
	for i, p := range ps {
		out[i] = math.NaN()
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	// Stable on ties so equal p-values keep their input order.
	slices.SortStableFunc(idx, func(x, y int) int { return cmp.Compare(ps[x], ps[y]) })
	m := len(idx)
	running := 0.0
	for k, i := range idx {
		adj := math.Min(1, float64(m-k)*ps[i])
		running = math.Max(running, adj)
		out[i] = running
	}
	return out
}

// AveragedDifference compares two judges on the mean of their
// correlations with the humans over several criteria (the "average"
// column of a results table), scored on the same samples.
type AveragedDifference struct {
	Method Method
	// A and B are the judges' mean coefficients over the criteria used;
	// Diff is A − B. NaN when no criterion has both coefficients.
	A, B, Diff float64
	// CILow and CIHigh bound the 95% paired bootstrap interval of Diff.
	CILow, CIHigh float64
	// P is the two-sided p-value of the paired permutation test.
	P float64
	// Criteria is the number of criteria averaged: those where both
	// judges' coefficients are defined on the data.
	Criteria int
}

// CompareAveraged is the paired comparison of two judges' mean coefficient
// over criteria. a[k], b[k] and h[k] hold criterion k's scores of judge A,
// judge B and the humans, sample i at index i in every criterion (NaN or
// ±Inf when missing). Criteria where either judge's coefficient is
// undefined on the data are left out of the mean. The permutation test
// swaps the two judges' scores on each sample, for every criterion at
// once, since a sample's scores on different criteria are not independent;
// the bootstrap resamples samples, again for every criterion at once.
// Draws in which a criterion used becomes undefined are skipped, by the
// bootstrap and the permutation test alike (PairedPermutation). resamples
// sets both counts; seed fixes both draws. It panics if the criteria or
// their samples differ in number between a, b and h.
func CompareAveraged(m Method, a, b, h [][]float64, resamples int, seed uint64) AveragedDifference {
	mustSameLen(len(a), len(b))
	mustSameLen(len(a), len(h))
	nan := math.NaN()
	out := AveragedDifference{Method: m, A: nan, B: nan, Diff: nan, CILow: nan, CIHigh: nan, P: nan}
	if !m.Valid() || len(a) == 0 {
		return out
	}
	n := len(h[0])
	for k := range a {
		mustSameLen(len(a[k]), n)
		mustSameLen(len(b[k]), n)
		mustSameLen(len(h[k]), n)
	}
	a, b, h = canonicalSamples(a, b, h)
	for k := range a {
		a[k], b[k] = snapJoint(a[k], b[k])
		h[k] = snapTies(h[k])
	}
	var used []int
	var sumA, sumB float64
	for k := range a {
		as, bs, hs, _ := finiteTriples(a[k], b[k], h[k])
		if len(hs) < minPairedSamples {
			continue
		}
		ca, cb := coefficient(m, as, hs), coefficient(m, bs, hs)
		if math.IsNaN(ca) || math.IsNaN(cb) {
			continue
		}
		used = append(used, k)
		sumA += ca
		sumB += cb
	}
	if len(used) == 0 {
		return out
	}
	out.Criteria = len(used)
	out.A, out.B = sumA/float64(len(used)), sumB/float64(len(used))
	out.Diff = out.A - out.B
	if resamples < 1 {
		return out
	}
	// diffOf is the mean difference when sample i's scores are taken from
	// row pick[i] of the inputs and swapped when swap[i] is set; NaN when
	// a criterion used is undefined in that draw.
	xa, xb, xh := make([]float64, n), make([]float64, n), make([]float64, n)
	diffOf := func(pick []int, swap []bool) float64 {
		var sum float64
		for _, k := range used {
			for i, j := range pick {
				xa[i], xb[i], xh[i] = a[k][j], b[k][j], h[k][j]
				if swap != nil && swap[i] {
					xa[i], xb[i] = xb[i], xa[i]
				}
			}
			as, bs, hs := keepFinite(xa, xb, xh)
			ca, cb := preparedCoefficient(m, as, hs), preparedCoefficient(m, bs, hs)
			if math.IsNaN(ca) || math.IsNaN(cb) {
				return math.NaN()
			}
			sum += ca - cb
		}
		return sum / float64(len(used))
	}
	identity := make([]int, n)
	for i := range identity {
		identity[i] = i
	}
	observed := math.Abs(out.Diff)
	perm := rand.New(rand.NewPCG(seed, permutationStream))
	swap := make([]bool, n)
	extreme, defined := 0, 0
	for range resamples {
		for i := range swap {
			swap[i] = perm.IntN(2) == 1
		}
		d := diffOf(identity, swap)
		if math.IsNaN(d) {
			continue // no draw of the statistic (PairedPermutation)
		}
		defined++
		if math.Abs(d) >= observed-1e-12 {
			extreme++
		}
	}
	out.P = float64(1+extreme) / float64(1+defined)
	boot := rand.New(rand.NewPCG(seed, pairedBootstrapStream))
	pick := make([]int, n)
	diffs := make([]float64, 0, resamples)
	for range resamples {
		for i := range pick {
			pick[i] = boot.IntN(n)
		}
		if d := diffOf(pick, nil); !math.IsNaN(d) {
			diffs = append(diffs, d)
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		out.CILow, out.CIHigh = quantile(diffs, 0.025), quantile(diffs, 0.975)
	}
	return out
}

// canonicalSamples reorders the samples (the same permutation for every
// criterion) by their values: criterion 0's human rating, judge A's and
// judge B's scores, then criterion 1's and so on. Resampling then depends
// only on the samples, not on the order they were listed in.
func canonicalSamples(a, b, h [][]float64) (ca, cb, ch [][]float64) {
	n := len(h[0])
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		for k := range h {
			for _, s := range [][]float64{h[k], a[k], b[k]} {
				if c := cmp.Compare(s[x], s[y]); c != 0 {
					return c
				}
			}
		}
		return 0
	})
	re := func(in [][]float64) [][]float64 {
		out := make([][]float64, len(in))
		for k, s := range in {
			out[k] = make([]float64, n)
			for i, j := range order {
				out[k][i] = s[j]
			}
		}
		return out
	}
	return re(a), re(b), re(h)
}

// keepFinite keeps the positions where a, b and h are all finite, in the
// order given (reusing no memory of the inputs).
func keepFinite(a, b, h []float64) (as, bs, hs []float64) {
	as, bs, hs = make([]float64, 0, len(h)), make([]float64, 0, len(h)), make([]float64, 0, len(h))
	for i := range h {
		if finite(a[i]) && finite(b[i]) && finite(h[i]) {
			as, bs, hs = append(as, a[i]), append(bs, b[i]), append(hs, h[i])
		}
	}
	return as, bs, hs
}
