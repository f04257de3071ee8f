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
	// CILow and CIHigh bound the 95% two-stage bootstrap interval (see
	// SystemCorrelation); NaN when it could not be computed.
	CILow, CIHigh float64
	// Systems is the number of systems with at least one complete sample;
	// N the number of complete samples in them.
	Systems, N int
}

// SystemCorrelation computes the system-level coefficient named by m
// between judge scores x and human ratings y, samples belonging to the
// system named in systems[i]. Samples where either value is not finite
// are left out before the means are taken.
//
// The interval is a two-stage (hierarchical) percentile bootstrap, because
// both the choice of systems and the samples each was judged on are
// samples of larger populations: each resample draws as many systems as
// there are, with replacement, then for each drawn system draws its own
// number of samples from that system's samples, with replacement, and
// recomputes the coefficient over the drawn systems' means. Resamples
// with an undefined coefficient (say, the same system drawn every time)
// are skipped. The same seed gives the same interval; systems are visited
// by name and samples in canonical order, so the order of the input does
// not matter. It panics if the slices differ in length.
func SystemCorrelation(m Method, x, y []float64, systems []string, resamples int, seed uint64) SystemLevel {
	mustSameLen(len(x), len(y))
	mustSameLen(len(x), len(systems))
	out := SystemLevel{Coef: math.NaN(), P: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN()}
	type series struct{ xs, ys []float64 }
	bySystem := map[string]*series{}
	for i, s := range systems {
		if !finite(x[i]) || !finite(y[i]) {
			continue
		}
		g := bySystem[s]
		if g == nil {
			g = &series{}
			bySystem[s] = g
		}
		g.xs = append(g.xs, x[i])
		g.ys = append(g.ys, y[i])
	}
	names := slices.Sorted(maps.Keys(bySystem))
	groups := make([]series, len(names))
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
	rng := rand.New(rand.NewPCG(seed, systemStream))
	k := len(groups)
	bx, by := make([]float64, k), make([]float64, k)
	coefs := make([]float64, 0, resamples)
	for range resamples {
		for i := range k {
			g := groups[rng.IntN(k)]
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
		return out
	}
	slices.Sort(coefs)
	out.CILow, out.CIHigh = quantile(coefs, 0.025), quantile(coefs, 0.975)
	return out
}
