package stats

import (
	"math"
	"strconv"
)

// AnalyticAbove is the number of complete pairs above which a correlation's
// 95% interval is computed analytically instead of by bootstrap (see
// CorrelationInterval). At that size the sampling distribution of each
// coefficient is close to normal on Fisher's z scale, the analytic
// interval agrees with the bootstrap to about ±0.005 (tested at 3,000
// pairs), and 1000 resamples of Spearman's or Kendall's coefficient would
// cost a thousand O(n log n) sorts for no gain in accuracy. At or below it
// the bootstrap is kept, so intervals of existing runs do not change.
const AnalyticAbove = 5000

// IntervalMethod says how a 95% interval was computed. It is stored with
// the figures so a page or an export can say it.
type IntervalMethod string

const (
	// IntervalBootstrap is the percentile bootstrap (DefaultResamples
	// resamples).
	IntervalBootstrap IntervalMethod = "bootstrap"
	// IntervalFisherZ is the large-sample interval on Fisher's z scale.
	IntervalFisherZ IntervalMethod = "fisher-z"
	// IntervalSmallSample is the rule below SmallSampleBelow complete
	// pairs: Pearson's interval on Fisher's z scale, Spearman's and
	// Kendall's the percentile bootstrap from RankBootstrapMin pairs and
	// none below (see CorrelationInterval).
	IntervalSmallSample IntervalMethod = "small-sample"
	// IntervalSystemFisherZ is the system-level interval of Pearson and
	// Spearman: Fisher's z over the systems' means (see
	// SystemCorrelation).
	IntervalSystemFisherZ IntervalMethod = "fisher-z-systems"
	// IntervalSystemBootstrap is the system-level interval of Kendall:
	// the percentile bootstrap over the systems' means (see
	// SystemCorrelation).
	IntervalSystemBootstrap IntervalMethod = "bootstrap-systems"
)

// Label is the interval method in words, for pages and exports.
func (im IntervalMethod) Label(resamples int) string {
	switch im {
	case IntervalFisherZ:
		return "Fisher z (large sample)"
	case IntervalSystemFisherZ:
		return "Fisher z over the systems' means"
	case IntervalSystemBootstrap:
		return "bootstrap over the systems' means (" + strconv.Itoa(resamples) + " resamples)"
	case IntervalBootstrap:
		return "bootstrap (" + strconv.Itoa(resamples) + " resamples)"
	case IntervalSmallSample:
		return "Pearson's on Fisher's z scale (few samples); Spearman's and Kendall's by bootstrap (" + strconv.Itoa(resamples) +
			" resamples), none below " + strconv.Itoa(RankBootstrapMin) + " samples"
	}
	return ""
}

// FisherInterval is the large-sample 95% interval of coefficient r on n
// pairs: tanh(atanh(r) ± 1.96·se) with the standard error on the z scale
// each coefficient calls for:
//   - Pearson: 1/√(n−3) (Fisher);
//   - Spearman: √((1 + r²/2)/(n−3)) (Bonett and Wright, 2000);
//   - Kendall: √(0.437/(n−4)) (Fieller, Hartley and Pearson, 1957).
//
// It returns NaN bounds when r is NaN, n is too small for the standard
// error, or the method is unknown; r = ±1 gives the degenerate interval
// [r, r].
func FisherInterval(m Method, r float64, n int) (lo, hi float64) {
	nan := math.NaN()
	if math.IsNaN(r) {
		return nan, nan
	}
	var se float64
	switch m {
	case MethodPearson:
		if n <= 3 {
			return nan, nan
		}
		se = 1 / math.Sqrt(float64(n-3))
	case MethodSpearman:
		if n <= 3 {
			return nan, nan
		}
		se = math.Sqrt((1 + r*r/2) / float64(n-3))
	case MethodKendall:
		if n <= 4 {
			return nan, nan
		}
		se = math.Sqrt(0.437 / float64(n-4))
	default:
		return nan, nan
	}
	return fisherBounds(r, se)
}

// SmallSampleBelow and RankBootstrapMin make the small-sample rule of
// CorrelationInterval, chosen by the coverage study of coverage_test.go
// (bivariate normal pairs with rho 0, 0.3, 0.6 and 0.9; figures in
// BENCHMARKS.md, "Correlation intervals on few samples"). On 4 to 15
// pairs the percentile bootstrap of Pearson's r held the true correlation
// in only about 85–92% of data sets, down to 77% at rho 0.9 on 4 pairs,
// where Fisher's interval held it in 93–97% at every size; the bootstrap
// stayed below 93% up to 30 pairs (90.5–92.5%) and reached about 93% from
// 40 to 50 pairs (92.6–93.8%; 94% on 125): below SmallSampleBelow pairs
// Pearson's interval is Fisher's. The paper's data (125 and 360 pairs)
// keep their bootstrap intervals, bit for bit. Spearman's and
// Kendall's bootstrap held the truth at least about 93% of the time from
// 8 pairs; below, on few pairs, their coefficient is often exactly ±1 and
// no interval (bootstrap, Fisher's with the 1.06 variance factor,
// Bonett–Wright's) came near: at rho 0.9 about 58–72% on 4 and 5 pairs
// and 90% on 6. Skipping resamples of fewer than three distinct pairs made
// every interval worse (58% at rho 0 on 4 pairs). So their interval is
// left undefined below RankBootstrapMin pairs.
const (
	SmallSampleBelow = 50
	RankBootstrapMin = 8
)

// CorrelationInterval is Correlate plus a 95% interval, chosen by size.
// Below SmallSampleBelow complete pairs (IntervalSmallSample): Pearson's
// is FisherInterval (from 4 pairs), Spearman's and Kendall's the
// bootstrap of WithBootstrap from RankBootstrapMin pairs and undefined
// below. From SmallSampleBelow up to AnalyticAbove complete pairs, the
// bootstrap of WithBootstrap (byte for byte) for all three; above, an
// interval on Fisher's z scale: FisherInterval
// for Pearson and Spearman; for Kendall the z-scale error is tau's
// U-statistic standard error (kendallSESorted) over 1−tau², because the
// Fieller–Hartley–Pearson error of FisherInterval assumes untied scores
// and is about a quarter too narrow on 1–5 ratings. The second result
// names the method used.
func CorrelationInterval(m Method, x, y []float64, resamples int, seed uint64) (Correlation, IntervalMethod) {
	c, im := correlationInterval(m, x, y, resamples, seed)
	if PerfectCoef(c.Coef) {
		// A coefficient of exactly ±1 has no interval, as over systems
		// (SystemCorrelation): Fisher's z is infinite there, so every
		// z-scale interval is the single point [r, r], and the bootstrap
		// of pairs on one line resamples only ±1. Either would claim a
		// certainty no finite sample gives; the p-value is what the data
		// support.
		c.CILow, c.CIHigh = math.NaN(), math.NaN()
		c.Resamples, c.ResamplesUsed = 0, 0
	}
	return c, im
}

// PerfectCoef reports whether a coefficient is ±1, within 1e-12 (scores
// on one line that are not the same numbers can give a Pearson r of
// 0.9999999999999998, whose Fisher interval is as much a point).
func PerfectCoef(r float64) bool {
	return !math.IsNaN(r) && 1-math.Abs(r) <= 1e-12
}

func correlationInterval(m Method, x, y []float64, resamples int, seed uint64) (Correlation, IntervalMethod) {
	n := 0
	for i := range x {
		if finite(x[i]) && finite(y[i]) {
			n++
		}
	}
	if n < SmallSampleBelow {
		switch m {
		case MethodPearson:
			c := Correlate(m, x, y)
			c.CILow, c.CIHigh = FisherInterval(m, c.Coef, c.N)
			return c, IntervalSmallSample
		case MethodSpearman, MethodKendall:
			if n >= RankBootstrapMin {
				return WithBootstrap(m, x, y, resamples, seed), IntervalSmallSample
			}
		}
		return Correlate(m, x, y), IntervalSmallSample
	}
	if n <= AnalyticAbove {
		return WithBootstrap(m, x, y, resamples, seed), IntervalBootstrap
	}
	// Correlate, then FisherInterval (Kendall: kendallSE), on one
	// canonical copy of the pairs (fisherZCorrelations).
	return fisherZCorrelations(x, y, m)[0], IntervalFisherZ
}

// fisherBounds is tanh(atanh(r) ± 1.96·se) for se on the z scale; [r, r]
// for r = ±1 and NaN bounds when se is not finite.
func fisherBounds(r, se float64) (lo, hi float64) {
	if r >= 1 || r <= -1 {
		return r, r
	}
	if !finite(se) {
		return math.NaN(), math.NaN()
	}
	z := math.Atanh(r)
	return math.Tanh(z - z975*se), math.Tanh(z + z975*se)
}
