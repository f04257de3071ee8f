package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Scores that differ only by floating-point noise are one score: the
// G-Eval defect gave Spearman -0.664 on scores that were all 7/3.
func TestNoiseTiesAreTies(t *testing.T) {
	const hi, lo = 2.3333333333333335, 2.333333333333333 // both 7/3, from different sums
	if hi == lo {
		t.Fatal("the test needs two different doubles")
	}
	human := []float64{1, 3, 2, 3, 1, 2, 3, 2}
	noisy := []float64{hi, lo, lo, hi, hi, lo, hi, lo}
	for _, m := range Methods() {
		t.Run("constant/"+string(m), func(t *testing.T) {
			c := WithBootstrap(m, noisy, human, 200, 1)
			if !math.IsNaN(c.Coef) || !math.IsNaN(c.P) || !math.IsNaN(c.CILow) || !math.IsNaN(c.CIHigh) {
				t.Errorf("noise-constant scores: %+v, want every figure NaN (undefined)", c)
			}
			g := GroupedCorrelation(m, noisy, human, []string{"a", "a", "a", "a", "b", "b", "b", "b"})
			if !math.IsNaN(g.Coef) || g.Skipped != 2 {
				t.Errorf("grouped: %+v, want NaN with both groups skipped", g)
			}
		})
	}
	// Mixed with real differences, the noisy copies tie exactly as the
	// clean values would.
	clean := []float64{7.0 / 3, 7.0 / 3, 1, 2, 7.0 / 3, 3, 1, 2}
	mixed := []float64{hi, lo, 1, 2, hi, 3, 1, 2}
	for _, m := range Methods() {
		a, b := Correlate(m, mixed, human), Correlate(m, clean, human)
		if math.Abs(a.Coef-b.Coef) > 1e-12 || math.Abs(a.P-b.P) > 1e-12 {
			t.Errorf("%s: noisy ties give %g (p %g), clean ties %g (p %g)", m, a.Coef, a.P, b.Coef, b.P)
		}
	}
}

func TestSnapTies(t *testing.T) {
	got := snapTies([]float64{2.3333333333333335, 1, 2.333333333333333, 2.3334, 0, 1e-12})
	want := []float64{2.333333333333333, 1, 2.333333333333333, 2.3334, 0, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("snapTies = %v, want %v", got, want)
		}
	}
}

// shuffled returns copies of the slices with the same permutation applied.
func shuffled(seed uint64, xs ...[]float64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 2))
	perm := rng.Perm(len(xs[0]))
	out := make([][]float64, len(xs))
	for k, x := range xs {
		out[k] = make([]float64, len(x))
		for i, j := range perm {
			out[k][i] = x[j]
		}
	}
	return out
}

func bits(vs ...float64) string {
	s := ""
	for _, v := range vs {
		s += fmt.Sprintf("%016x ", math.Float64bits(v))
	}
	return s
}

// The same inputs in another order give the same bits: sums over maps or
// over the caller's order would differ in the last digits.
func TestAggregatesIgnoreInputOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var judge, human, other []float64
	var groups []string
	var positions []int
	for i := range 97 {
		h := math.Round(rng.Float64()*40) / 10
		human = append(human, h)
		// Thirds, tenths and sevenths: sums of these are inexact.
		judge = append(judge, h/3+rng.Float64()/7)
		other = append(other, h/7+rng.Float64()/3)
		groups = append(groups, fmt.Sprintf("g%d", i%9))
		positions = append(positions, 1+i%10)
	}
	type result struct{ name, bits string }
	compute := func(j, h, o []float64, g []string, pos []int) []result {
		var out []result
		for _, m := range Methods() {
			c := WithBootstrap(m, j, h, 300, 3)
			out = append(out, result{"bootstrap " + string(m), bits(c.Coef, c.P, c.CILow, c.CIHigh)})
			out = append(out, result{"grouped " + string(m), bits(GroupedCorrelation(m, j, h, g).Coef)})
			sc := SystemCorrelation(m, j, h, g, 300, 3)
			out = append(out, result{"system " + string(m), bits(sc.Coef, sc.P, sc.CILow, sc.CIHigh)})
			d := CompareCorrelations(m, j, o, h, 300, 3)
			out = append(out, result{"compare " + string(m), bits(d.Diff, d.CILow, d.CIHigh, d.P())})
		}
		out = append(out, result{"entropy", bits(Entropy(j, 0.1), Entropy(j, 0))})
		var ps []float64
		for _, p := range PositionEffect(pos, j, h) {
			ps = append(ps, float64(p.Position), p.MeanScore, p.MeanAbsErr, p.MeanSignedErr)
		}
		out = append(out, result{"positions", bits(ps...)})
		return out
	}
	want := compute(judge, human, other, groups, positions)
	for seed := range uint64(5) {
		s := shuffled(seed, judge, human, other)
		// Shuffle the groups and positions with the same permutation.
		perm := rand.New(rand.NewPCG(seed, 2)).Perm(len(judge))
		g := make([]string, len(groups))
		pos := make([]int, len(positions))
		for i, j := range perm {
			g[i], pos[i] = groups[j], positions[j]
		}
		got := compute(s[0], s[1], s[2], g, pos)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("shuffle %d: %s = %s, in the original order %s", seed, want[i].name, got[i].bits, want[i].bits)
			}
		}
	}
}
