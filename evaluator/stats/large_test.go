package stats

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// This file keeps, as the oracle of fisherZCorrelations and
// CorrelationIntervals, the large-sample path as it was before they
// shared one canonical copy of the pairs (livemem44): Correlate on the
// caller's pairs, then FisherInterval, or for Kendall the standard error
// of kendallSE below on a second canonical copy.

// oldCorrelate is Correlate as it was: canonicalPairs on its copy of the
// pairs, then coefficient (which canonicalizes them again).
func oldCorrelate(m Method, x, y []float64) Correlation {
	xs, ys, missing := finitePairs(x, y)
	c := Correlation{
		Coef: math.NaN(), P: math.NaN(),
		N: len(xs), Missing: missing,
		CILow: math.NaN(), CIHigh: math.NaN(),
	}
	if !m.Valid() {
		return c
	}
	xs, ys = canonicalPairs(xs, ys)
	c.Coef = coefficient(m, xs, ys)
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

// oldCorrelationInterval is CorrelationInterval as it was.
func oldCorrelationInterval(m Method, x, y []float64, resamples int, seed uint64) (Correlation, IntervalMethod) {
	c, im := oldCorrelationIntervalInner(m, x, y, resamples, seed)
	if PerfectCoef(c.Coef) {
		c.CILow, c.CIHigh = math.NaN(), math.NaN()
	}
	return c, im
}

func oldCorrelationIntervalInner(m Method, x, y []float64, resamples int, seed uint64) (Correlation, IntervalMethod) {
	if completePairs(x, y) <= AnalyticAbove {
		// Unchanged code below the large-sample bound, but for Correlate,
		// which checkAgainstOracle compares with oldCorrelate.
		return correlationInterval(m, x, y, resamples, seed)
	}
	c := oldCorrelate(m, x, y)
	if m == MethodKendall && !math.IsNaN(c.Coef) {
		xs, ys, _ := finitePairs(x, y)
		xs, ys = canonicalPairs(xs, ys)
		c.CILow, c.CIHigh = fisherBounds(c.Coef, kendallSE(xs, ys)/(1-c.Coef*c.Coef))
		return c, IntervalFisherZ
	}
	c.CILow, c.CIHigh = FisherInterval(m, c.Coef, c.N)
	return c, IntervalFisherZ
}

// kendallSE (the former production code, now the oracle of kendallSESorted) is the large-sample standard error of tau-b on finite xs and
// ys, from tau's U-statistic form: each sample i gets c_i, the mean over
// the other samples of sign(x_i−x_j)·sign(y_i−y_j) (counted in O(n log n)
// with a Fenwick tree over y's ranks, x's ties handled a tied group at a
// time); tau-a is the mean of the c_i and its variance about 4·var(c)/n
// (Hoeffding). tau-b is tau-a scaled by n0/√((n0−n1)(n0−n2)), the tie
// counts taken as fixed, and so is its error. Unlike the
// Fieller–Hartley–Pearson error √(0.437/(n−4)), which assumes continuous
// scores, it stays right when ratings on a 1–5 scale are mostly ties
// (there FHP is about a quarter too narrow). NaN when n < 3 or either
// series is constant.
func kendallSE(xs, ys []float64) float64 {
	n := len(xs)
	if n < minPairs || isConstant(xs) || isConstant(ys) {
		return math.NaN()
	}
	// Ranks of y among its distinct values, 1-based for the tree.
	uy := sortedCopy(ys)
	uy = slices.Compact(uy)
	ry := make([]int, n)
	for i, v := range ys {
		r, _ := slices.BinarySearch(uy, v)
		ry[i] = r + 1
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	s := make([]float64, n) // concordant minus discordant, per sample
	tree := make([]int, len(uy)+1)
	add := func(r int) {
		for ; r < len(tree); r += r & -r {
			tree[r]++
		}
	}
	below := func(r int) (c int) { // how many inserted have rank <= r
		for ; r > 0; r -= r & -r {
			c += tree[r]
		}
		return c
	}
	// sweep visits the tied-x groups in the order given: every sample is
	// compared with the samples of earlier groups (sign is +1 when earlier
	// groups have smaller x), then its group is inserted.
	sweep := func(groups [][]int, sign float64) {
		clear(tree)
		inserted := 0
		for _, g := range groups {
			for _, i := range g {
				less := below(ry[i] - 1)
				greater := inserted - below(ry[i])
				s[i] += sign * float64(less-greater)
			}
			for _, i := range g {
				add(ry[i])
			}
			inserted += len(g)
		}
	}
	var groups [][]int
	for a := 0; a < n; {
		b := a + 1
		for b < n && xs[order[b]] == xs[order[a]] {
			b++
		}
		groups = append(groups, order[a:b])
		a = b
	}
	sweep(groups, 1)
	slices.Reverse(groups)
	sweep(groups, -1)
	var mean, m2 float64
	for i, v := range s {
		c := v / float64(n-1)
		d := c - mean
		mean += d / float64(i+1)
		m2 += d * (c - mean)
	}
	varC := m2 / float64(n-1)
	seA := 2 * math.Sqrt(varC/float64(n))
	pairs := func(t float64) float64 { return t * (t - 1) / 2 }
	n0 := pairs(float64(n))
	tx, ty := tieSums(xs), tieSums(ys)
	return seA * n0 / math.Sqrt((n0-tx.pairs)*(n0-ty.pairs))
}

// sameBits reports whether two correlations are identical to the bit.
func sameBits(a, b Correlation) bool {
	f := math.Float64bits
	return f(a.Coef) == f(b.Coef) && f(a.P) == f(b.P) && f(a.CILow) == f(b.CILow) && f(a.CIHigh) == f(b.CIHigh) &&
		a.N == b.N && a.Missing == b.Missing
}

// checkAgainstOracle compares CorrelationIntervals and CorrelationInterval
// with the old code on x and y, bit for bit, and checks neither changed
// its inputs.
func checkAgainstOracle(t *testing.T, x, y []float64) {
	t.Helper()
	x0, y0 := slices.Clone(x), slices.Clone(y)
	got := CorrelationIntervals(x, y, 200, 7)
	for k, m := range Methods() {
		want, wantIM := oldCorrelationInterval(m, x, y, 200, 7)
		one, oneIM := CorrelationInterval(m, x, y, 200, 7)
		all := [...]Correlation{got.Pearson, got.Spearman, got.Kendall}[k]
		if !sameBits(all, want) || got.Interval != wantIM {
			t.Errorf("%s: CorrelationIntervals gives %+v (%s), the old code %+v (%s)", m, all, got.Interval, want, wantIM)
		}
		if !sameBits(one, want) || oneIM != wantIM {
			t.Errorf("%s: CorrelationInterval gives %+v (%s), the old code %+v (%s)", m, one, oneIM, want, wantIM)
		}
	}
	for _, m := range append(Methods(), "nonsense") {
		if got, want := Correlate(m, x, y), oldCorrelate(m, x, y); !sameBits(got, want) {
			t.Errorf("Correlate(%s) gives %+v, the old code %+v", m, got, want)
		}
	}
	for i := range x {
		if math.Float64bits(x[i]) != math.Float64bits(x0[i]) || math.Float64bits(y[i]) != math.Float64bits(y0[i]) {
			t.Fatalf("pair %d changed from (%v, %v) to (%v, %v)", i, x0[i], y0[i], x[i], y[i])
		}
	}
}

// TestCorrelationIntervalsMatchOldCode checks the shared large-sample path
// against the code it replaced, on random data with ties, noise ties,
// missing values (NaN, ±Inf), signed zeros and the degenerate cases, above
// and below AnalyticAbove.
func TestCorrelationIntervalsMatchOldCode(t *testing.T) {
	rng := rand.New(rand.NewPCG(44, 87))
	// gen fills pair i; missing puts NaN or ±Inf on one side of about
	// that share of the pairs.
	type gen func(i int) (x, y float64)
	thirds := func(i int) (float64, float64) {
		// Means of three 1-5 ratings, summed in varying orders: 7/3 comes
		// out with different last bits (noise ties).
		a, b, c := float64(1+rng.IntN(5)), float64(1+rng.IntN(5)), float64(1+rng.IntN(5))
		h := (a + b + c) / 3
		if i%2 == 0 {
			h = a/3 + b/3 + c/3
		}
		return math.Round(h*2) / 2, h
	}
	for _, tc := range []struct {
		name    string
		n       int
		missing float64
		g       gen
	}{
		{"continuous", 6000, 0.05, func(int) (float64, float64) {
			x := rng.NormFloat64()
			return x, x + rng.NormFloat64()
		}},
		{"ratings 1-5", 20000, 0.1, func(int) (float64, float64) {
			x := float64(1 + rng.IntN(5))
			if rng.Float64() < 0.4 {
				return x, x
			}
			return x, float64(1 + rng.IntN(5))
		}},
		{"noise-tied thirds", 12000, 0.02, thirds},
		{"signed zeros", 7000, 0.01, func(int) (float64, float64) {
			z := []float64{math.Copysign(0, -1), 0, 1, 2}
			return z[rng.IntN(4)], z[rng.IntN(4)]
		}},
		{"negative and perfect", 6000, 0, func(i int) (float64, float64) { return float64(i % 97), -float64(i % 97) }},
		{"identical", 5001, 0, func(i int) (float64, float64) { return float64(i % 10), float64(i % 10) }},
		{"constant human", 8000, 0.01, func(i int) (float64, float64) { return float64(i % 7), 3 }},
		{"just above the bound", AnalyticAbove + 1, 0, func(int) (float64, float64) {
			return float64(rng.IntN(11)) / 10, float64(rng.IntN(3))
		}},
		{"at the bound (bootstrap)", AnalyticAbove, 0.001, func(int) (float64, float64) {
			return float64(rng.IntN(11)), float64(rng.IntN(3))
		}},
		{"small (bootstrap)", 300, 0.1, thirds},
		{"few (small-sample rule)", 20, 0.1, thirds},
		{"nine (t test)", 9, 0, thirds},
		{"eight (exact)", 8, 0, thirds},
		{"three (exact)", 3, 0, func(i int) (float64, float64) { return float64(i), float64(i * i) }},
		{"two (undefined)", 2, 0, thirds},
		{"none", 0, 0, thirds},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, y := make([]float64, tc.n), make([]float64, tc.n)
			bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1)}
			for i := range x {
				x[i], y[i] = tc.g(i)
				if rng.Float64() < tc.missing {
					if rng.IntN(2) == 0 {
						x[i] = bad[rng.IntN(3)]
					} else {
						y[i] = bad[rng.IntN(3)]
					}
				}
			}
			checkAgainstOracle(t, x, y)
		})
	}
}

// TestCorrelationIntervalsOnSharedDatasets compares the new and the old
// code on the FED and Topical-Chat ratings, as they are (bootstrap) and
// repeated past AnalyticAbove with each copy's scores shifted by a tiny
// multiple of the copy number (Fisher z, with noise ties).
func TestCorrelationIntervalsOnSharedDatasets(t *testing.T) {
	fedPath := topicalChatPath[:len(topicalChatPath)-len("topical-chat-usr.jsonl")] + "fed-dialog.jsonl"
	for _, set := range []struct {
		path string
		a, b string
	}{
		{topicalChatPath, "overall", "engagingness"},
		{topicalChatPath, "coherence", "groundedness"},
		{fedPath, "Overall", "Coherent"},
		{fedPath, "Understanding", "Error recovery"},
	} {
		t.Run(set.a+"/"+set.b, func(t *testing.T) {
			scores := loadHumanScores(t, set.path, set.a, set.b)
			var x, y []float64
			for i, p := range scores[set.a] {
				q := scores[set.b][i]
				xv, yv := math.NaN(), math.NaN()
				if p != nil {
					xv = *p
				}
				if q != nil {
					yv = *q
				}
				x, y = append(x, xv), append(y, yv)
			}
			checkAgainstOracle(t, x, y)
			copies := AnalyticAbove/len(x) + 2
			var bx, by []float64
			for c := range copies {
				for i := range x {
					bx = append(bx, x[i]+float64(c%3)*1e-12)
					by = append(by, y[i])
				}
			}
			checkAgainstOracle(t, bx, by)
		})
	}
}

// oldSystemCorrelation is SystemCorrelation as it was (livemem44): a
// canonical copy of each system's pairs, means through orderFreeSum.
func oldSystemCorrelation(m Method, x, y []float64, systems []string, resamples int, seed uint64) SystemLevel {
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
	c := oldCorrelate(m, mx, my)
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
		}
		return out
	}
	out.CILow, out.CIHigh = FisherInterval(m, out.Coef, len(groups))
	if !math.IsNaN(out.CILow) {
		out.Interval = IntervalSystemFisherZ
	}
	return out
}

// TestSystemCorrelationMatchesOldCode compares SystemCorrelation with the
// code it replaced, bit for bit, on systems of noise-tied, tied and
// continuous scores with missing values, from one system to many.
func TestSystemCorrelationMatchesOldCode(t *testing.T) {
	rng := rand.New(rand.NewPCG(87, 44))
	f := math.Float64bits
	for _, tc := range []struct {
		name     string
		systems  int
		perSys   int
		levels   int // 0: continuous
		strength float64
	}{
		{"one system", 1, 50, 5, 0.5},
		{"three systems", 3, 40, 5, 0.5},
		{"eight systems, ties", 8, 60, 3, 0.3},
		{"twenty systems, continuous", 20, 30, 0, 0.8},
		{"fifty systems, noise ties", 50, 12, 13, 0.9},
		{"systems on one line", 10, 5, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var x, y []float64
			var sys []string
			for s := range tc.systems {
				q := rng.NormFloat64()
				for i := range tc.perSys {
					h := q + rng.NormFloat64()
					j := tc.strength*h + (1-tc.strength)*rng.NormFloat64()
					if tc.levels > 0 {
						h = math.Round(h*3) / 3 // noise ties of thirds
						if i%2 == 0 {
							h = math.Nextafter(h, math.Inf(1))
						}
						j = float64(int(math.Abs(j*2)) % tc.levels)
					}
					if tc.strength == 1 {
						h, j = float64(s), float64(s)
					}
					if rng.Float64() < 0.05 {
						h = math.NaN()
					}
					x, y, sys = append(x, j), append(y, h), append(sys, fmt.Sprintf("sys-%02d", s))
				}
			}
			for _, m := range append(Methods(), "nonsense") {
				got := SystemCorrelation(m, x, y, sys, 200, 5)
				want := oldSystemCorrelation(m, x, y, sys, 200, 5)
				if f(got.Coef) != f(want.Coef) || f(got.P) != f(want.P) || f(got.CILow) != f(want.CILow) ||
					f(got.CIHigh) != f(want.CIHigh) || got.Interval != want.Interval || got.IntervalWhy != want.IntervalWhy ||
					got.Systems != want.Systems || got.N != want.N {
					t.Errorf("%s: %+v, the old code %+v", m, got, want)
				}
			}
		})
	}
}

// oldPositionEffect is PositionEffect as it was (livemem44): each
// position's slices grown by appending.
func oldPositionEffect(positions []int, scores []float64, human []float64) []PositionStat {
	mustSameLen(len(positions), len(scores))
	if human != nil {
		mustSameLen(len(positions), len(human))
	}
	// Values are collected per position and summed in sorted order, so
	// the means do not depend on the order the scores were listed in.
	type acc struct{ scores, absErr, signedErr []float64 }
	byPos := map[int]*acc{}
	for i, p := range positions {
		if p < 1 || !finite(scores[i]) {
			continue
		}
		a := byPos[p]
		if a == nil {
			a = &acc{}
			byPos[p] = a
		}
		a.scores = append(a.scores, scores[i])
		if human != nil && finite(human[i]) {
			e := scores[i] - human[i]
			a.absErr = append(a.absErr, math.Abs(e))
			a.signedErr = append(a.signedErr, e)
		}
	}
	out := make([]PositionStat, 0, len(byPos))
	for _, p := range slices.Sorted(maps.Keys(byPos)) {
		a := byPos[p]
		st := PositionStat{
			Position: p, N: len(a.scores), MeanScore: sortedSum(a.scores) / float64(len(a.scores)),
			MeanAbsErr: math.NaN(), MeanSignedErr: math.NaN(),
		}
		st.Rated = len(a.absErr)
		if k := len(a.absErr); k > 0 {
			st.MeanAbsErr = sortedSum(a.absErr) / float64(k)
			st.MeanSignedErr = sortedSum(a.signedErr) / float64(k)
		}
		out = append(out, st)
	}
	return out
}

// TestPositionEffectMatchesOldCode compares PositionEffect with the code
// it replaced, bit for bit, with and without human values, on scores with
// noise, missing values and positions below 1.
func TestPositionEffectMatchesOldCode(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	f := math.Float64bits
	for _, tc := range []struct {
		name  string
		n     int
		human bool
	}{{"empty", 0, true}, {"no humans", 500, false}, {"humans", 3000, true}, {"one", 1, true}} {
		t.Run(tc.name, func(t *testing.T) {
			pos, sc := make([]int, tc.n), make([]float64, tc.n)
			var hu []float64
			if tc.human {
				hu = make([]float64, tc.n)
			}
			for i := range pos {
				pos[i] = rng.IntN(12) - 1
				sc[i] = float64(rng.IntN(10))/3 + rng.NormFloat64()*1e-15
				if rng.Float64() < 0.05 {
					sc[i] = math.NaN()
				}
				if hu != nil {
					hu[i] = float64(1+rng.IntN(5)) / 7
					if rng.Float64() < 0.1 {
						hu[i] = math.Inf(1)
					}
				}
			}
			got, want := PositionEffect(pos, sc, hu), oldPositionEffect(pos, sc, hu)
			if len(got) != len(want) {
				t.Fatalf("%d positions, the old code %d", len(got), len(want))
			}
			for k := range got {
				g, w := got[k], want[k]
				if g.Position != w.Position || g.N != w.N || g.Rated != w.Rated || f(g.MeanScore) != f(w.MeanScore) ||
					f(g.MeanAbsErr) != f(w.MeanAbsErr) || f(g.MeanSignedErr) != f(w.MeanSignedErr) {
					t.Errorf("position %d: %+v, the old code %+v", w.Position, g, w)
				}
			}
		})
	}
}
