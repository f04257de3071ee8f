package stats

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
)

// systemStream is PCG's second seed word for the system-level bootstrap.
const systemStream = 0x73797374656d // "system" in ASCII

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
	// CILow and CIHigh bound the 95% interval (see SystemCorrelation):
	// Fisher's over the systems' means for Pearson, the two-stage
	// bootstrap for Spearman and Kendall; NaN when it could not be
	// computed.
	CILow, CIHigh float64
	// Interval says how CILow and CIHigh were computed:
	// IntervalSystemFisherZ (Pearson), IntervalBootstrap, or
	// IntervalTwoStageNormal for large runs; empty when they were not.
	Interval IntervalMethod
	// Systems is the number of systems with at least one complete sample;
	// N the number of complete samples in them.
	Systems, N int
}

// SystemCorrelation computes the system-level coefficient named by m
// between judge scores x and human ratings y, samples belonging to the
// system named in systems[i]. Samples where either value is not finite
// are left out before the means are taken.
//
// Pearson's 95% interval is Fisher's over the systems' means,
// tanh(atanh(r) ± 1.96/√(k−3)) on k systems, and undefined below 4
// systems. The coverage study of system_coverage_test.go (systems drawn
// like Topical-Chat's, 60 samples each or 12 noisier ones, 3 to 50
// systems; figures in BENCHMARKS.md, "System-level Pearson interval on
// few systems") chose it. The two-stage bootstrap below held the
// correlation of the systems' means in 99.8–100% of draws on 3 systems
// (nearly the whole of −1 to 1, yet leaving out the coefficient itself in
// up to 3% of draws), in 93–99% on 4 to 6 as the correlation goes, in
// only 91–92% on 8 to 20 systems of 60 samples, and in 79% on 50 systems of 12 samples at a
// correlation of 0.9: its second stage adds the samples' noise to means
// that already carry it, pulling the resampled coefficients below the
// estimate. Fisher's held it in 94–97% of draws everywhere from 4 systems.
//
// Spearman's and Kendall's interval is a two-stage (hierarchical)
// percentile bootstrap, because both the choice of systems and the
// samples each was judged on are samples of larger populations: each
// resample draws as many systems as there are, with replacement, then for
// each drawn system draws its own number of samples from that system's
// samples, with replacement, and recomputes the coefficient over the
// drawn systems' means. Resamples with an undefined coefficient (say, the
// same system drawn every time) are skipped. The same seed gives the same
// interval; systems are visited by name and samples in canonical order, so
// the order of the input does not matter.
//
// Large runs: when more than AnalyticAbove samples are complete, the second
// stage of a system with more than SystemNormalAbove samples does not draw
// them one by one (which would cost resamples × n draws: a billion for a
// million samples): it draws the pair of resampled means from their
// bivariate normal approximation, centred on the system's means with the
// plug-in covariance divided by its sample count, which is what the mean of
// that many draws with replacement tends to (central limit theorem). The
// first stage (which systems are drawn) is unchanged, and it is the one
// that dominates the interval when systems have many samples. Interval is
// then IntervalTwoStageNormal; at or below AnalyticAbove samples nothing
// changes. It panics if the slices differ in length.
func SystemCorrelation(m Method, x, y []float64, systems []string, resamples int, seed uint64) SystemLevel {
	return systemCorrelation(m, x, y, systems, resamples, seed, true)
}

// systemCorrelation is SystemCorrelation; with approximate false it keeps
// the exact second stage at any size (the test's reference).
func systemCorrelation(m Method, x, y []float64, systems []string, resamples int, seed uint64, approximate bool) SystemLevel {
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
	for k, name := range names {
		g := bySystem[name]
		groups[k].xs, groups[k].ys = canonicalPairs(g.xs, g.ys)
		out.N += len(g.xs)
	}
	out.Systems = len(groups)
	if !m.Valid() {
		return out
	}
	mx, my := make([]float64, len(groups)), make([]float64, len(groups))
	for k, g := range groups {
		mx[k], my[k] = orderFreeSum(g.xs)/float64(len(g.xs)), orderFreeSum(g.ys)/float64(len(g.ys))
	}
	c := Correlate(m, mx, my)
	out.Coef, out.P = c.Coef, c.P
	if math.IsNaN(out.Coef) || resamples < 1 {
		return out
	}
	// Pearson's interval is Fisher's over the systems' means (see
	// SystemCorrelation): none below 4 systems.
	if m == MethodPearson {
		out.CILow, out.CIHigh = FisherInterval(m, out.Coef, len(groups))
		if !math.IsNaN(out.CILow) {
			out.Interval = IntervalSystemFisherZ
		}
		return out
	}
	// The small-sample rule of CorrelationInterval, over systems: a rank
	// coefficient over fewer than RankBootstrapMin points is often at or
	// near ±1, where the percentile bootstrap cannot reach it (6 systems
	// gave Spearman 0.986 with the interval -0.29 to 0.97, below its own
	// estimate), so it has no interval.
	if (m == MethodSpearman || m == MethodKendall) && len(groups) < RankBootstrapMin {
		return out
	}
	out.CILow, out.CIHigh, out.Interval = twoStageBootstrap(m, groups, out.N, resamples, seed, approximate)
	return out
}

// systemSeries is one system's complete pairs, in canonical order.
type systemSeries struct{ xs, ys []float64 }

// twoStageBootstrap is the two-stage percentile bootstrap interval of
// SystemCorrelation over groups, n complete samples in all; NaN bounds and
// no method when no resample gave a coefficient.
func twoStageBootstrap(m Method, groups []systemSeries, n, resamples int, seed uint64, approximate bool) (lo, hi float64, im IntervalMethod) {
	rng := rand.New(rand.NewPCG(seed, systemStream))
	k := len(groups)
	// normal[i] is set for the groups whose second stage is approximated.
	normal := make([]*meanDraw, k)
	im = IntervalBootstrap
	if approximate && n > AnalyticAbove {
		for i, g := range groups {
			if len(g.xs) > SystemNormalAbove {
				normal[i] = newMeanDraw(g.xs, g.ys)
				im = IntervalTwoStageNormal
			}
		}
	}
	bx, by := make([]float64, k), make([]float64, k)
	coefs := make([]float64, 0, resamples)
	for range resamples {
		for i := range k {
			pick := rng.IntN(k)
			if d := normal[pick]; d != nil {
				bx[i], by[i] = d.draw(rng)
				continue
			}
			g := groups[pick]
			n := len(g.xs)
			var sx, sy float64
			for range n {
				j := rng.IntN(n)
				sx += g.xs[j]
				sy += g.ys[j]
			}
			bx[i], by[i] = sx/float64(n), sy/float64(n)
		}
		if r := coefficient(m, bx, by); !math.IsNaN(r) {
			coefs = append(coefs, r)
		}
	}
	if len(coefs) == 0 {
		return math.NaN(), math.NaN(), ""
	}
	slices.Sort(coefs)
	return quantile(coefs, 0.025), quantile(coefs, 0.975), im
}

// SystemNormalAbove is the sample count above which a system's second
// bootstrap stage is drawn from the normal approximation in large runs
// (see SystemCorrelation).
const SystemNormalAbove = 1000

// meanDraw draws the means of a bootstrap resample of one system's pairs
// from their bivariate normal approximation.
type meanDraw struct {
	mx, my        float64
	l11, l21, l22 float64 // Cholesky factor of the means' covariance
}

func newMeanDraw(xs, ys []float64) *meanDraw {
	n := float64(len(xs))
	d := &meanDraw{mx: orderFreeSum(xs) / n, my: orderFreeSum(ys) / n}
	var sxx, syy, sxy float64
	for i := range xs {
		dx, dy := xs[i]-d.mx, ys[i]-d.my
		sxx += dx * dx
		syy += dy * dy
		sxy += dx * dy
	}
	// Variance of a resample mean: the plug-in (divide by n) variance over n.
	a, b, c := sxx/n/n, sxy/n/n, syy/n/n
	d.l11 = math.Sqrt(a)
	if d.l11 > 0 {
		d.l21 = b / d.l11
	}
	d.l22 = math.Sqrt(math.Max(0, c-d.l21*d.l21))
	return d
}

func (d *meanDraw) draw(rng *rand.Rand) (float64, float64) {
	z1, z2 := rng.NormFloat64(), rng.NormFloat64()
	return d.mx + d.l11*z1, d.my + d.l21*z1 + d.l22*z2
}
