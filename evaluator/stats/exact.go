package stats

import "math"

// ExactPermutationMax is the largest number of pairs for which Spearman's
// and Kendall's p-values come from the exact permutation distribution
// rather than a large-sample approximation. Every ordering of one series
// against the other is visited: 8! = 40,320 orderings, about a millisecond
// (nine would take ten times as long, on every report of a run with nine
// systems).
//
// Why: on few points the approximations are far off. Spearman's t
// approximation gives p = 0 for a perfect ranking of three systems, where
// one ordering in six ranks them so (p = 1/3, two-sided), and p = 0.037 for
// rho = 0.9 on five systems, where the exact p is 0.083; Kendall's normal
// approximation gives 0.14 for tau = 0.6 on five pairs, where the exact p is
// 0.23. System-level correlations are computed on a handful of systems, so
// these are the figures a leaderboard is read from. R's cor.test does the
// same (exact for small samples); from nine pairs on the approximations are
// kept, as scipy and R keep them for large samples.
const ExactPermutationMax = 8

// exactOrderingP is the two-sided p-value of the Spearman or Kendall
// coefficient of xs and ys (canonical pairs, n ≤ ExactPermutationMax): the
// share of the n! orderings of ys against xs whose statistic is at least as
// far from zero as the observed one. Tied values stay tied under every
// ordering, so the test is conditional on the ties; the tie-corrected
// denominators of rho and tau-b are the same for every ordering, which is
// why comparing the numerators is enough. The statistics are sums of
// products of half-integers (Spearman: centred average ranks) or of signs
// (Kendall), so they are exact in floating point and the comparison needs
// no tolerance.
func exactOrderingP(m Method, xs, ys []float64) float64 {
	n := len(xs)
	if n < minPairs || n > ExactPermutationMax {
		return math.NaN()
	}
	var a, b []float64
	var stat func(perm []int) float64
	switch m {
	case MethodSpearman:
		// Centred ranks: 2*(rank - (n+1)/2) is an integer, so every
		// product and sum below is exact.
		a, b = averageRanks(xs), averageRanks(ys)
		for i := range a {
			a[i] = 2*a[i] - float64(n+1)
			b[i] = 2*b[i] - float64(n+1)
		}
		stat = func(perm []int) float64 {
			var s float64
			for i, j := range perm {
				s += a[i] * b[j]
			}
			return s
		}
	case MethodKendall:
		// The signs of every difference, looked up rather than computed
		// for each of the n! orderings.
		sx, sy := make([]float64, n*n), make([]float64, n*n)
		for i := range n {
			for k := range n {
				sx[i*n+k], sy[i*n+k] = sign(xs[i]-xs[k]), sign(ys[i]-ys[k])
			}
		}
		stat = func(perm []int) float64 {
			var s float64
			for i := range n {
				row := sy[perm[i]*n:]
				for k := i + 1; k < n; k++ {
					s += sx[i*n+k] * row[perm[k]]
				}
			}
			return s
		}
	default:
		return math.NaN()
	}
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	observed := math.Abs(stat(perm))
	var extreme, total int
	// Heap's algorithm visits each of the n! orderings once.
	visit := func() {
		total++
		if math.Abs(stat(perm)) >= observed {
			extreme++
		}
	}
	visit()
	c := make([]int, n)
	for i := 1; i < n; {
		if c[i] < i {
			if i%2 == 0 {
				perm[0], perm[i] = perm[i], perm[0]
			} else {
				perm[c[i]], perm[i] = perm[i], perm[c[i]]
			}
			visit()
			c[i]++
			i = 1
			continue
		}
		c[i] = 0
		i++
	}
	return float64(extreme) / float64(total)
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
