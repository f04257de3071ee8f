package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortsAllocateTheirSizeOnce: the tie counts and the order-free sums
// copy their values once, into an array of their size (a million-sample
// run's figures sort several copies of a million values, and grown by
// appending each took about twice its size), with the figures of the
// values as before: the same tie sums and the same bits of a sum whatever
// the values' order, the values given left as they were.
func TestSortsAllocateTheirSizeOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{0, 1, 7, 10_000} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(rng.Float64()*40) / 10 // 1-decimal scores: many ties
		}
		was := slices.Clone(xs)
		if a := testing.AllocsPerRun(5, func() { tieSums(xs) }); n > 0 && a != 1 {
			t.Errorf("n=%d: tieSums allocated %v times, want once", n, a)
		}
		if a := testing.AllocsPerRun(5, func() { orderFreeSum(xs) }); n > 0 && a != 1 {
			t.Errorf("n=%d: orderFreeSum allocated %v times, want once", n, a)
		}
		if !slices.Equal(xs, was) {
			t.Fatalf("n=%d: the values were changed", n)
		}
		// The same figures as counted directly from a sorted copy.
		sorted := slices.Clone(xs)
		slices.Sort(sorted)
		var want ties
		var sum float64
		for lo := 0; lo < len(sorted); {
			hi := lo + 1
			for hi < len(sorted) && sorted[hi] == sorted[lo] {
				hi++
			}
			k := float64(hi - lo)
			want.pairs += k * (k - 1) / 2
			want.v1 += k * (k - 1) * (2*k + 5)
			want.v2 += k * (k - 1) * (k - 2)
			lo = hi
		}
		for _, v := range sorted {
			sum += v
		}
		if got := tieSums(xs); got != want {
			t.Errorf("n=%d: tieSums %+v, want %+v", n, got, want)
		}
		shuffled := slices.Clone(xs)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if a, b := orderFreeSum(xs), orderFreeSum(shuffled); math.Float64bits(a) != math.Float64bits(sum) || math.Float64bits(b) != math.Float64bits(sum) {
			t.Errorf("n=%d: sums %v and %v, want %v in either order", n, a, b, sum)
		}
		if got := sortedSum(shuffled); math.Float64bits(got) != math.Float64bits(sum) {
			t.Errorf("n=%d: sortedSum %v, want %v", n, got, sum)
		}
	}
}
