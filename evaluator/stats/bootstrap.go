package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// DefaultResamples is a sensible resample count for WithBootstrap: with
// 1000 resamples the 2.5th and 97.5th percentiles each rest on about 25
// resamples beyond them, which steadies the interval to about ±0.01 on
// typical samples, while Kendall's O(n²) pair count on 1000 resamples of a
// few hundred samples still takes well under a second.
const DefaultResamples = 1000

// minBootstrapPairs is the fewest pairs a bootstrap interval is given for.
// On exactly minPairs (three) pairs every resample either repeats a pair,
// and is then a correlation of two distinct points (±1, or undefined: what
// Correlate itself calls too few to say), or redraws the sample itself,
// so the percentile interval only says "r to 1" (a Spearman ρ of 1 on
// three samples, exact p = 0.33, came out as "95% interval 1.00 to 1.00").
// FisherInterval has no interval there either (n − 3 = 0).
const minBootstrapPairs = minPairs + 1

// bootstrapStream is PCG's second seed word. Fixing it keeps the public
// seed a single number while the generator still depends on all of it.
const bootstrapStream = 0x62617463686576 // "batchev" in ASCII

// WithBootstrap is Correlate plus a 95% percentile bootstrap interval:
// the pairs are resampled with replacement resamples times, the
// coefficient is recomputed on each, and CILow and CIHigh are the 2.5th and
// 97.5th percentiles of those coefficients (linear interpolation between
// order statistics, numpy's default). Resamples whose coefficient is
// undefined (e.g. every drawn pair has the same human score) are skipped.
// The same seed gives the same interval, so a report can be reproduced.
// The interval stays NaN when the point estimate is undefined, when
// resamples < 1, when no resample gave a coefficient, or on exactly
// minPairs pairs (see minBootstrapPairs).
func WithBootstrap(m Method, x, y []float64, resamples int, seed uint64) Correlation {
	c := Correlate(m, x, y)
	if math.IsNaN(c.Coef) || resamples < 1 || c.N < minBootstrapPairs {
		return c
	}
	xs, ys, _ := finitePairs(x, y)
	// Resample from the canonical order so that the same pairs listed in
	// another order draw the same resamples and give the same interval.
	xs, ys = canonicalPairs(xs, ys)
	n := len(xs)
	rng := rand.New(rand.NewPCG(seed, bootstrapStream))
	bx := make([]float64, n)
	by := make([]float64, n)
	coefs := make([]float64, 0, resamples)
	for range resamples {
		for i := range n {
			j := rng.IntN(n)
			bx[i], by[i] = xs[j], ys[j]
		}
		if r := preparedCoefficient(m, bx, by); !math.IsNaN(r) {
			coefs = append(coefs, r)
		}
	}
	if len(coefs) == 0 {
		return c
	}
	c.Resamples, c.ResamplesUsed = resamples, len(coefs)
	slices.Sort(coefs)
	c.CILow = quantile(coefs, 0.025)
	c.CIHigh = quantile(coefs, 0.975)
	return c
}

// ResamplesNote says how many resamples a bootstrap interval is taken
// from ("from 963 of 1000 resamples") when only used of the drawn
// resamples gave a defined coefficient; "" when none was left out (or no
// bootstrap was drawn). Every page and export that states such an
// interval words the count this one way.
func ResamplesNote(drawn, used int) string {
	if used <= 0 || used >= drawn {
		return ""
	}
	return "from " + strconv.Itoa(used) + " of " + strconv.Itoa(drawn) + " resamples"
}

// quantile is the q-th quantile of sorted, non-empty xs, interpolating
// linearly between the order statistics at positions (len-1)*q (Hyndman
// and Fan's type 7, the default of numpy, R and scipy.stats.bootstrap).
// Written here because montanaflynn/stats' Percentile uses a different
// definition and gonum's LinInterp is type 4, so intervals would not match
// what users get from the usual tools.
func quantile(xs []float64, q float64) float64 {
	pos := float64(len(xs)-1) * q
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	frac := pos - float64(lo)
	return xs[lo] + frac*(xs[hi]-xs[lo])
}
