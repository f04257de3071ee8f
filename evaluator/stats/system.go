package stats

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

// SystemLevel is a system-level correlation: each system (a dialogue
// model, a summariser: whatever produced the samples) gets the mean of its
// samples' judge scores and the mean of their human ratings, and the two
// series of means are correlated. It answers "does the judge rank the
// systems as the humans do?", the question a leaderboard asks, which a
// correlation over samples does not answer.
type SystemLevel struct {
	// Coef is the coefficient over the systems' means; NaN when fewer than
	// three systems have a sample with both scores, or one side's means
	// are all equal.
	Coef float64
	// P is the usual test of Coef on Systems points (few points: read it
	// with care); NaN when Coef is.
	P float64
	// CILow and CIHigh bound the 95% interval over the systems' means (see
	// SystemCorrelation); NaN when it could not be computed (Pearson below
	// 4 systems, Spearman and Kendall below RankBootstrapMin).
	CILow, CIHigh float64
	// Interval says how CILow and CIHigh were computed:
	// IntervalSystemFisherZ (Pearson, Spearman) or IntervalSystemBootstrap
	// (Kendall); empty when they were not.
	Interval IntervalMethod
	// IntervalWhy says, in a sentence for pages and exports, why a defined
	// coefficient has no interval (too few systems, or a coefficient of
	// exactly ±1); empty when it has one or the coefficient is undefined.
	IntervalWhy string
	// Resamples and ResamplesUsed are, for Kendall's bootstrap over the
	// means, the resamples drawn and those whose coefficient was defined,
	// which the interval is taken from (Correlation's); 0 otherwise.
	Resamples, ResamplesUsed int
	// Systems is the number of systems with at least one complete sample;
	// N the number of complete samples in them.
	Systems, N int
}

// SystemCorrelation computes the system-level coefficient named by m
// between judge scores x and human ratings y, samples belonging to the
// system named in systems[i]. Samples where either value is not finite
// are left out before the means are taken. It panics if the slices differ
// in length; resamples < 1 asks for no interval.
//
// The 95% interval is over the k systems' means, so it counts the noise
// of each system's samples once, through its mean:
//   - Pearson: Fisher's, tanh(atanh(r) ± 1.96/√(k−3)), undefined below 4
//     systems (IntervalSystemFisherZ);
//   - Spearman: Fisher's with Bonett and Wright's standard error
//     √((1+r²/2)/(k−3)) (FisherInterval; IntervalSystemFisherZ);
//   - Kendall: the percentile bootstrap of the coefficient over the
//     means (WithBootstrap with resamples and seed, byte for byte;
//     IntervalSystemBootstrap).
//
// Spearman's and Kendall's are undefined below RankBootstrapMin systems,
// where a rank coefficient is often at or near ±1 (6 systems gave Spearman
// 0.986 with a bootstrap interval of −0.29 to 0.97, below its own
// estimate). The coverage study of system_coverage_test.go (systems drawn
// like Topical-Chat's, 60 samples each or 12 noisier ones; figures in
// BENCHMARKS.md, "System-level Pearson interval on few systems" and
// "System-level Spearman and Kendall intervals") chose them. The two-stage
// bootstrap they replace (resample the systems, then the samples within
// each, then take the coefficient over the resampled means) adds the
// samples' noise to means that already carry it, pulling the resampled
// coefficients below the estimate: on 50 systems of 12 samples at a
// correlation of 0.9 it held the coefficient of the systems' means in 79%
// of draws for Pearson and 86% for Spearman and Kendall, and left out its
// own coefficient in 7.5–10% of draws, while holding it in 97–99.5% on 8
// to 20 such systems at correlations up to 0.6. Fisher's held Pearson's
// in 94–97% of draws from 4 systems and Spearman's in 93–97.5% from 8;
// for Kendall, Fieller's error held it in only 89.5–95% on 8 systems,
// where the bootstrap over the means held 93–97% (92.5–97.5% in every
// cell). None of the three leaves out its coefficient.
func SystemCorrelation(m Method, x, y []float64, systems []string, resamples int, seed uint64) SystemLevel {
	mustSameLen(len(x), len(y))
	mustSameLen(len(x), len(systems))
	out := SystemLevel{Coef: math.NaN(), P: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN()}
	bySystem := map[string]*systemSeries{}
	for i, s := range systems {
		if !finite(x[i]) || !finite(y[i]) {
			continue
		}
		g := bySystem[s]
		if g == nil {
			g = &systemSeries{}
			bySystem[s] = g
		}
		g.xs = append(g.xs, x[i])
		g.ys = append(g.ys, y[i])
	}
	names := slices.Sorted(maps.Keys(bySystem))
	groups := make([]systemSeries, len(names))
	// The series were collected for this call: canonicalize them in place
	// (canonicalPairs' values, without its copies), one index array for all.
	var order []int
	for k, name := range names {
		g := bySystem[name]
		if cap(order) < len(g.xs) {
			order = make([]int, len(g.xs))
		}
		canonicalInPlace(g.xs, g.ys, order[:len(g.xs)])
		groups[k].xs, groups[k].ys = g.xs, g.ys
		out.N += len(g.xs)
	}
	out.Systems = len(groups)
	if !m.Valid() {
		return out
	}
	mx, my := make([]float64, len(groups)), make([]float64, len(groups))
	for k, g := range groups {
		// orderFreeSum's sums, sorting in place: xs is sorted already and
		// ys is not read again.
		mx[k], my[k] = sortedSum(g.xs)/float64(len(g.xs)), sortedSum(g.ys)/float64(len(g.ys))
	}
	c := Correlate(m, mx, my)
	out.Coef, out.P = c.Coef, c.P
	if math.IsNaN(out.Coef) || resamples < 1 {
		return out
	}
	// The small-sample rule of CorrelationInterval, over systems: no rank
	// interval below RankBootstrapMin systems.
	if m != MethodPearson && len(groups) < RankBootstrapMin {
		out.IntervalWhy = fmt.Sprintf("no interval: fewer than %d systems (%d), where a rank coefficient's interval cannot be trusted", RankBootstrapMin, len(groups))
		return out
	}
	if m == MethodPearson && len(groups) < 4 {
		out.IntervalWhy = fmt.Sprintf("no interval: fewer than 4 systems (%d)", len(groups))
		return out
	}
	// A coefficient of exactly ±1 has no interval. On Fisher's z scale it
	// is at infinity, so tanh(atanh(r) ± 1.96·se) is the single point
	// [r, r] whatever the number of systems, and the bootstrap over
	// perfectly ordered means resamples only perfect orders: both would
	// claim a certainty that k systems cannot give (k systems in the
	// humans' order happen by chance once in k! under no association,
	// which the exact p-value says). What the data support is the p-value,
	// not a width. Within 1e-12 of ±1 counts as ±1: means on one line
	// that are not the same numbers can give a Pearson r of
	// 0.9999999999999998, whose Fisher interval is as much a point.
	if PerfectCoef(out.Coef) {
		out.IntervalWhy = fmt.Sprintf("no interval: the coefficient is exactly %s over %d systems, where Fisher's z is infinite and an interval would shrink to that single point, claiming a certainty %d systems cannot give; the p-value says how likely such agreement is by chance", signedOne(out.Coef), len(groups), len(groups))
		return out
	}
	if m == MethodKendall {
		b := WithBootstrap(m, mx, my, resamples, seed)
		out.CILow, out.CIHigh = b.CILow, b.CIHigh
		if !math.IsNaN(out.CILow) {
			out.Interval = IntervalSystemBootstrap
			out.Resamples, out.ResamplesUsed = b.Resamples, b.ResamplesUsed
		}
		return out
	}
	out.CILow, out.CIHigh = FisherInterval(m, out.Coef, len(groups))
	if !math.IsNaN(out.CILow) {
		out.Interval = IntervalSystemFisherZ
	}
	return out
}

// signedOne writes a coefficient of ±1 as "1" or "−1".
func signedOne(r float64) string {
	if r < 0 {
		return "−1"
	}
	return "1"
}

// systemSeries is one system's complete pairs, in canonical order.
type systemSeries struct{ xs, ys []float64 }
