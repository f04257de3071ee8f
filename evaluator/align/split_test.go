package align

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// shuffledSplit is Split as it was written before (December 5, 2026): the
// sorted ids shuffled themselves, the first round(share × n) held out, each
// part sorted again. Every alignment stored before keeps the split it drew
// this way, so Split must draw the same one from the same ids and seed.
func shuffledSplit(ids []int64, seed int64, share float64) (calibration, heldOut []int64) {
	all := slices.Clone(ids)
	slices.Sort(all)
	all = slices.Compact(all)
	n := len(all)
	k := int(math.Round(share * float64(n)))
	if n >= 2 {
		k = min(max(k, 1), n-1)
	} else {
		k = 0
	}
	rng := rand.New(rand.NewPCG(uint64(seed), splitStream))
	rng.Shuffle(n, func(i, j int) { all[i], all[j] = all[j], all[i] })
	heldOut, calibration = slices.Clone(all[:k]), slices.Clone(all[k:])
	slices.Sort(heldOut)
	slices.Sort(calibration)
	return calibration, heldOut
}

// TestSplitIsTheShuffleOfTheIds: Split shuffles the places of the sorted
// ids rather than the ids and reads the parts in order instead of sorting
// them; the parts are those of the shuffle of the ids (shuffledSplit) for
// any size, share and seed, with ids unsorted, repeated and negative.
func TestSplitIsTheShuffleOfTheIds(t *testing.T) {
	src := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 10, 41, 1000, 100003} {
		ids := make([]int64, n)
		for i := range ids {
			ids[i] = src.Int64N(4*int64(n)+1) - int64(n) // some repeated, some negative
		}
		for _, share := range []float64{0, 0.1, 0.37, 0.5, 0.9, 1} {
			for _, seed := range []int64{0, 1, 7, -5, math.MaxInt64} {
				t.Run(fmt.Sprintf("n=%d share=%v seed=%d", n, share, seed), func(t *testing.T) {
					cal, held := Split(ids, seed, share)
					wantCal, wantHeld := shuffledSplit(ids, seed, share)
					if !slices.Equal(held, wantHeld) || !slices.Equal(cal, wantCal) {
						t.Fatalf("held out %v, calibration %v; the shuffle of the ids holds out %v", firstOf(held), firstOf(cal), firstOf(wantHeld))
					}
				})
			}
		}
	}
	// A fixed split, written out: neither way may drift from it.
	ids := make([]int64, 20)
	for i := range ids {
		ids[i] = int64(100 + i)
	}
	want := []int64{104, 106, 109, 110, 111, 112, 114, 117}
	for name, split := range map[string]func([]int64, int64, float64) ([]int64, []int64){"Split": Split, "the shuffle of the ids": shuffledSplit} {
		if _, held := split(ids, 7, 0.4); !slices.Equal(held, want) {
			t.Errorf("%s holds out %v of 100-119 with seed 7, want %v", name, held, want)
		}
	}
}

func firstOf(ids []int64) []int64 { return ids[:min(len(ids), 12)] }

// BenchmarkSplit draws the default split of a million ids both ways.
func BenchmarkSplit(b *testing.B) {
	ids := make([]int64, 1000000)
	for i := range ids {
		ids[i] = int64(1000000 + 3*i)
	}
	for name, split := range map[string]func([]int64, int64, float64) ([]int64, []int64){"shuffle-ids": shuffledSplit, "shuffle-places": Split} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				split(ids, 1, DefaultHeldOutShare)
			}
		})
	}
}
