package stats

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/internal/shareddata"
)

// The oracle below recomputes WithBootstrap's interval from its documented
// definition with code of its own, naive on purpose: the resampling unit
// is the (x, y) pair, drawn with replacement n times from the pairs sorted
// by x then y, with PCG seeded by (seed, "batchev"); the coefficient is
// recomputed on each resample by textbook formulas (two-pass Pearson,
// average ranks counted pair by pair, Kendall's τ-b by counting all
// pairs); resamples where it is undefined (a constant series) are left
// out; the bounds are the 2.5th and 97.5th percentiles of the rest,
// interpolated linearly (type 7). Nothing of the package is used but the
// generator's seeding, which is what makes a report reproducible.

func oraclePearson(x, y []float64) float64 {
	// A constant series has no correlation. Checked on the values: the
	// mean of eight 1.8s is 1.8000000000000003, whose tiny deviations
	// would make a coefficient of noise.
	if slices.Min(x) == slices.Max(x) || slices.Min(y) == slices.Max(y) {
		return math.NaN()
	}
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

func oracleRanks(x []float64) []float64 {
	r := make([]float64, len(x))
	for i := range x {
		less, equal := 0, 0
		for j := range x {
			switch {
			case x[j] < x[i]:
				less++
			case x[j] == x[i]:
				equal++
			}
		}
		r[i] = float64(less) + float64(equal+1)/2
	}
	return r
}

func oracleKendallTauB(x, y []float64) float64 {
	var concordant, discordant, tiedX, tiedY, pairs float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			pairs++
			dx, dy := x[i]-x[j], y[i]-y[j]
			switch {
			case dx == 0 && dy == 0:
				tiedX++
				tiedY++
			case dx == 0:
				tiedX++
			case dy == 0:
				tiedY++
			case (dx > 0) == (dy > 0):
				concordant++
			default:
				discordant++
			}
		}
	}
	den := math.Sqrt((pairs - tiedX) * (pairs - tiedY))
	if den == 0 {
		return math.NaN()
	}
	return (concordant - discordant) / den
}

func oracleCoef(m Method, x, y []float64) float64 {
	switch m {
	case MethodPearson:
		return oraclePearson(x, y)
	case MethodSpearman:
		return oraclePearson(oracleRanks(x), oracleRanks(y))
	case MethodKendall:
		return oracleKendallTauB(x, y)
	}
	return math.NaN()
}

// oracleBootstrap is the documented percentile bootstrap; skipped counts
// the resamples whose coefficient was undefined.
func oracleBootstrap(m Method, x, y []float64, resamples int, seed uint64) (lo, hi float64, skipped int) {
	type pair struct{ x, y float64 }
	ps := make([]pair, len(x))
	for i := range x {
		ps[i] = pair{x[i], y[i]}
	}
	slices.SortFunc(ps, func(a, b pair) int {
		if c := cmp.Compare(a.x, b.x); c != 0 {
			return c
		}
		return cmp.Compare(a.y, b.y)
	})
	n := len(ps)
	rng := rand.New(rand.NewPCG(seed, 0x62617463686576))
	var coefs []float64
	bx, by := make([]float64, n), make([]float64, n)
	for range resamples {
		for i := range n {
			p := ps[rng.IntN(n)]
			bx[i], by[i] = p.x, p.y
		}
		r := oracleCoef(m, bx, by)
		if math.IsNaN(r) {
			skipped++
			continue
		}
		coefs = append(coefs, r)
	}
	slices.Sort(coefs)
	at := func(q float64) float64 {
		pos := q * float64(len(coefs)-1)
		k := int(pos)
		if k+1 >= len(coefs) {
			return coefs[k]
		}
		return coefs[k] + (pos-float64(k))*(coefs[k+1]-coefs[k])
	}
	return at(0.025), at(0.975), skipped
}

// TestWithBootstrapMatchesOracleOnFED recomputes the bootstrap interval of
// FED's human ratings (125 dialogues rated on 0-2 and 0-4 scales in fifths,
// so with many ties) with the oracle: all 125, a reversed scale (a
// negative correlation), and the first 8 and 12 dialogues, where many
// resamples draw a constant series and are skipped: the interval's count
// of resamples used (Correlation.ResamplesUsed) is the oracle's.
func TestWithBootstrapMatchesOracleOnFED(t *testing.T) {
	path, _ := shareddata.Path("fed-dialog.jsonl")
	cols := loadHumanScores(t, path, "Coherent", "Overall", "Likeable")
	coherent, overall, _ := Pairs(cols["Coherent"], cols["Overall"])
	likeable, _, _ := Pairs(cols["Likeable"], cols["Overall"])
	reversed := make([]float64, len(overall))
	for i, v := range overall {
		reversed[i] = 4 - v
	}
	tests := []struct {
		name string
		x, y []float64
	}{
		{"coherent vs overall, 125", coherent, overall},
		{"likeable vs reversed overall, 125", likeable, reversed},
		{"coherent vs overall, first 12", coherent[:12], overall[:12]},
		{"coherent vs likeable, first 8", coherent[:8], likeable[:8]},
	}
	const resamples, seed = DefaultResamples, 20240101
	for _, tt := range tests {
		for _, m := range Methods() {
			got := WithBootstrap(m, tt.x, tt.y, resamples, seed)
			lo, hi, skipped := oracleBootstrap(m, tt.x, tt.y, resamples, seed)
			if math.Abs(got.CILow-lo) > 1e-12 || math.Abs(got.CIHigh-hi) > 1e-12 {
				t.Errorf("%s, %s: interval [%.15g, %.15g], oracle [%.15g, %.15g] (%d of %d resamples undefined)",
					tt.name, m, got.CILow, got.CIHigh, lo, hi, skipped, resamples)
			}
			// The interval says how many resamples it is from: the
			// oracle's defined ones, of the drawn.
			if got.Resamples != resamples || got.ResamplesUsed != resamples-skipped || got.LeftOutResamples() != (skipped > 0) {
				t.Errorf("%s, %s: interval from %d of %d resamples (left out: %v); the oracle uses %d of %d",
					tt.name, m, got.ResamplesUsed, got.Resamples, got.LeftOutResamples(), resamples-skipped, resamples)
			}
			if want := ResamplesNote(resamples, resamples-skipped); skipped > 0 && want != fmt.Sprintf("from %d of %d resamples", resamples-skipped, resamples) {
				t.Errorf("%s, %s: note %q", tt.name, m, want)
			}
			if want := oracleCoef(m, tt.x, tt.y); math.Abs(got.Coef-want) > 1e-12 {
				t.Errorf("%s, %s: coefficient %.15g, oracle %.15g", tt.name, m, got.Coef, want)
			}
			t.Logf("%s, %s: r %.4f [%.4f, %.4f], %d of %d resamples undefined", tt.name, m, got.Coef, lo, hi, skipped, resamples)
		}
	}
}

// oraclePaired recomputes CompareCorrelations' paired bootstrap interval
// and permutation p-value from their documented definitions: the samples
// (a, b, h) sorted by h, then a, then b; the bootstrap draws samples with
// replacement from PCG(seed, "pairedb") and takes the type-7 percentiles of
// coef(a, h) − coef(b, h), leaving out draws where either is undefined;
// the permutation test swaps a and b on each sample when PCG(seed,
// "permute!") draws 1 of {0, 1}, and p = (1 + draws at least as extreme)
// / (1 + draws with a difference).
func oraclePaired(m Method, a, b, h []float64, draws int, seed uint64) (lo, hi, p float64, used int) {
	type triple struct{ a, b, h float64 }
	ts := make([]triple, len(h))
	for i := range h {
		ts[i] = triple{a[i], b[i], h[i]}
	}
	slices.SortFunc(ts, func(x, y triple) int {
		return cmp.Or(cmp.Compare(x.h, y.h), cmp.Compare(x.a, y.a), cmp.Compare(x.b, y.b))
	})
	n := len(ts)
	ra, rb, rh := make([]float64, n), make([]float64, n), make([]float64, n)
	boot := rand.New(rand.NewPCG(seed, 0x70616972656462))
	var diffs []float64
	for range draws {
		for i := range n {
			t := ts[boot.IntN(n)]
			ra[i], rb[i], rh[i] = t.a, t.b, t.h
		}
		ca, cb := oracleCoef(m, ra, rh), oracleCoef(m, rb, rh)
		if !math.IsNaN(ca) && !math.IsNaN(cb) {
			diffs = append(diffs, ca-cb)
		}
	}
	slices.Sort(diffs)
	at := func(q float64) float64 {
		pos := q * float64(len(diffs)-1)
		k := int(pos)
		if k+1 >= len(diffs) {
			return diffs[k]
		}
		return diffs[k] + (pos-float64(k))*(diffs[k+1]-diffs[k])
	}
	for i, t := range ts {
		ra[i], rb[i], rh[i] = t.a, t.b, t.h
	}
	observed := math.Abs(oracleCoef(m, ra, rh) - oracleCoef(m, rb, rh))
	perm := rand.New(rand.NewPCG(seed, 0x7065726d75746521))
	extreme, defined := 0, 0
	for range draws {
		for i, t := range ts {
			ra[i], rb[i] = t.a, t.b
			if perm.IntN(2) == 1 {
				ra[i], rb[i] = t.b, t.a
			}
		}
		ca, cb := oracleCoef(m, ra, rh), oracleCoef(m, rb, rh)
		if math.IsNaN(ca) || math.IsNaN(cb) {
			continue
		}
		defined++
		if math.Abs(ca-cb) >= observed-1e-12 {
			extreme++
		}
	}
	return at(0.025), at(0.975), float64(1+extreme) / float64(1+defined), len(diffs)
}

// TestCompareCorrelationsMatchesOracleOnFED: the compare page's paired
// figures for two "judges" of FED's dialogues (the Likeable and
// Understanding ratings, as judges of the Overall rating; and a reversed
// one, a negative correlation), on all 125 and on the first 12: the
// paired bootstrap interval of Spearman's and Kendall's difference and the
// permutation p-value of all three coefficients equal the oracle's.
func TestCompareCorrelationsMatchesOracleOnFED(t *testing.T) {
	path, _ := shareddata.Path("fed-dialog.jsonl")
	cols := loadHumanScores(t, path, "Likeable", "Understanding", "Overall")
	likeable, understanding, _ := Pairs(cols["Likeable"], cols["Understanding"])
	overall, _, _ := Pairs(cols["Overall"], cols["Overall"])
	reversed := make([]float64, len(understanding))
	for i, v := range understanding {
		reversed[i] = 2 - v
	}
	tests := []struct {
		name    string
		a, b, h []float64
	}{
		{"likeable vs understanding, 125", likeable, understanding, overall},
		{"likeable vs reversed understanding, 125", likeable, reversed, overall},
		{"likeable vs understanding, first 12", likeable[:12], understanding[:12], overall[:12]},
	}
	const draws, seed = 400, 20240102
	for _, tt := range tests {
		for _, m := range Methods() {
			d := CompareCorrelations(m, tt.a, tt.b, tt.h, draws, seed)
			lo, hi, p, _ := oraclePaired(m, tt.a, tt.b, tt.h, draws, seed)
			if m != MethodPearson && (math.Abs(d.CILow-lo) > 1e-12 || math.Abs(d.CIHigh-hi) > 1e-12) {
				t.Errorf("%s, %s: paired bootstrap [%.15g, %.15g], oracle [%.15g, %.15g]", tt.name, m, d.CILow, d.CIHigh, lo, hi)
			}
			got := d.Tests[len(d.Tests)-1]
			if got.Name != "paired permutation" || got.P != p {
				t.Errorf("%s, %s: %s p %.15g, oracle's permutation p %.15g", tt.name, m, got.Name, got.P, p)
			}
			t.Logf("%s, %s: diff %.4f [%.4f, %.4f] p %.4f", tt.name, m, d.Diff, d.CILow, d.CIHigh, p)
		}
	}
}

// TestPairedBootstrapCountsTheResamplesUsed: CompareCorrelations says how
// many of its bootstrap resamples the rank coefficients' interval is from,
// the oracle's count of resamples where both coefficients are defined. On
// the first 5 and 6 FED dialogues (Overall ratings with ties) some draws
// hold one rating only and are left out; on all 125 none is. Pearson's
// interval is Zou's, no resamples.
func TestPairedBootstrapCountsTheResamplesUsed(t *testing.T) {
	path, _ := shareddata.Path("fed-dialog.jsonl")
	cols := loadHumanScores(t, path, "Likeable", "Understanding", "Overall")
	likeable, understanding, _ := Pairs(cols["Likeable"], cols["Understanding"])
	overall, _, _ := Pairs(cols["Overall"], cols["Overall"])
	const draws, seed = 1000, 20240102
	for _, n := range []int{5, 6, 125} {
		for _, m := range Methods() {
			d := CompareCorrelations(m, likeable[:n], understanding[:n], overall[:n], draws, seed)
			if m == MethodPearson {
				if d.Resamples != 0 || d.ResamplesUsed != 0 || d.LeftOutResamples() {
					t.Errorf("n %d, pearson: %d of %d resamples counted for Zou's interval", n, d.ResamplesUsed, d.Resamples)
				}
				continue
			}
			_, _, _, used := oraclePaired(m, likeable[:n], understanding[:n], overall[:n], draws, seed)
			if d.Resamples != draws || d.ResamplesUsed != used || d.LeftOutResamples() != (used < draws) {
				t.Errorf("n %d, %s: interval from %d of %d resamples (left out: %v); the oracle uses %d of %d", n, m, d.ResamplesUsed, d.Resamples, d.LeftOutResamples(), used, draws)
			}
			if n < 125 && used == draws {
				t.Errorf("n %d, %s: no resample left out; the test wants a case with some", n, m)
			}
			t.Logf("n %d, %s: %d of %d", n, m, used, draws)
		}
	}
}

// TestSystemKendallCountsTheResamplesUsed: the system level's Kendall
// interval (the bootstrap over the systems' means) keeps how many
// resamples it is from, the oracle's count: over 8 systems whose human
// means are all 3 but one 4, a draw without that system has no
// coefficient and is left out (about a third of them); over 8 systems
// whose means all differ none is.
func TestSystemKendallCountsTheResamplesUsed(t *testing.T) {
	systems := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	judge := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	for _, tt := range []struct {
		name  string
		human []float64
	}{
		{"one system apart", []float64{3, 3, 3, 3, 4, 3, 3, 3}},
		{"every mean different", []float64{2, 1, 4, 3, 6, 5, 8, 7}},
	} {
		const resamples, seed = DefaultResamples, 20240101
		got := SystemCorrelation(MethodKendall, judge, tt.human, systems, resamples, seed)
		_, _, skipped := oracleBootstrap(MethodKendall, judge, tt.human, resamples, seed)
		if got.Interval != IntervalSystemBootstrap || got.Resamples != resamples || got.ResamplesUsed != resamples-skipped {
			t.Errorf("%s: %s interval from %d of %d resamples; the oracle uses %d of %d", tt.name, got.Interval, got.ResamplesUsed, got.Resamples, resamples-skipped, resamples)
		}
		if tt.name == "one system apart" && (skipped < 200 || ResamplesNote(got.Resamples, got.ResamplesUsed) == "") {
			t.Errorf("%s: %d resamples left out, note %q; the test wants some hundreds said", tt.name, skipped, ResamplesNote(got.Resamples, got.ResamplesUsed))
		}
		if tt.name == "every mean different" && skipped != 0 {
			t.Errorf("%s: %d resamples left out, want none", tt.name, skipped)
		}
	}
}
