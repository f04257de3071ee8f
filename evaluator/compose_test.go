package evaluator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// checkPartition reports whether batches hold every index 0..n-1 exactly once
// in ceil(n/b) batches of b, with one short last batch of n mod b.
func checkPartition(t *testing.T, name string, batches [][]int, n, b int) {
	t.Helper()
	seen := make([]int, n)
	for _, batch := range batches {
		for _, i := range batch {
			if i < 0 || i >= n {
				t.Errorf("%s: index %d out of range 0..%d", name, i, n-1)
				continue
			}
			seen[i]++
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Errorf("%s: index %d appears %d times, want 1", name, i, c)
		}
	}
	if want := (n + b - 1) / b; len(batches) != want {
		t.Errorf("%s: %d batches, want %d", name, len(batches), want)
	}
	for j, batch := range batches {
		want := b
		if j == len(batches)-1 && n%b != 0 {
			want = n % b
		}
		if len(batch) != want {
			t.Errorf("%s: batch %d has %d samples, want %d", name, j, len(batch), want)
		}
	}
}

func TestComposePartition(t *testing.T) {
	sizes := []struct{ n, b int }{
		{1, 1}, {1, 10}, {5, 1}, {9, 10}, {10, 10}, {11, 10}, {19, 10},
		{20, 10}, {23, 10}, {100, 10}, {101, 3}, {37, 2}, {50, 7}, {64, 8},
	}
	for _, sz := range sizes {
		keys := make([]float64, sz.n)
		for i := range keys {
			keys[i] = float64(i % 7) // plenty of ties
		}
		keys[0] = math.NaN()
		checkPartition(t, fmt.Sprintf("first n=%d b=%d", sz.n, sz.b), ComposeFirstRound(sz.n, sz.b, newRNG(1)), sz.n, sz.b)
		for _, c := range []Composition{Random, Homogeneous, Heterogeneous} {
			name := fmt.Sprintf("%s n=%d b=%d", c, sz.n, sz.b)
			checkPartition(t, name, ComposeRound(c, keys, sz.b, newRNG(2)), sz.n, sz.b)
		}
	}
}

func TestComposeEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		got  [][]int
		want int // number of batches
	}{
		{"first n=0", ComposeFirstRound(0, 10, newRNG(1)), 0},
		{"round no keys", ComposeRound(Heterogeneous, nil, 10, newRNG(1)), 0},
		{"first b=0 acts as 1", ComposeFirstRound(3, 0, newRNG(1)), 3},
		{"heterogeneous b>=n one batch", ComposeRound(Heterogeneous, []float64{1, 2, 3}, 10, newRNG(1)), 1},
		{"heterogeneous b=n one batch", ComposeRound(Heterogeneous, []float64{1, 2, 3}, 3, newRNG(1)), 1},
		{"homogeneous b=1 singletons", ComposeRound(Homogeneous, []float64{1, 2, 3, 4}, 1, newRNG(1)), 4},
		{"heterogeneous b=1 singletons", ComposeRound(Heterogeneous, []float64{1, 2, 3, 4}, 1, newRNG(1)), 4},
	}
	for _, tt := range tests {
		if len(tt.got) != tt.want {
			t.Errorf("%s: %d batches, want %d", tt.name, len(tt.got), tt.want)
		}
	}
}

func TestComposeDeterministic(t *testing.T) {
	keys := make([]float64, 47)
	for i := range keys {
		keys[i] = float64(i % 5)
	}
	for _, c := range []Composition{Random, Homogeneous, Heterogeneous} {
		a := ComposeRound(c, keys, 10, newRNG(7))
		b := ComposeRound(c, keys, 10, newRNG(7))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: same seed gave different batches", c)
		}
		d := ComposeRound(c, keys, 10, newRNG(8))
		if reflect.DeepEqual(a, d) {
			t.Errorf("%s: seeds 7 and 8 gave identical batches", c)
		}
	}
	if !reflect.DeepEqual(ComposeFirstRound(47, 10, newRNG(3)), ComposeFirstRound(47, 10, newRNG(3))) {
		t.Errorf("first round: same seed gave different batches")
	}
	if reflect.DeepEqual(ComposeFirstRound(47, 10, newRNG(3)), ComposeFirstRound(47, 10, newRNG(4))) {
		t.Errorf("first round: seeds 3 and 4 gave identical batches")
	}
}

func TestHeterogeneousSpansRange(t *testing.T) {
	tests := []struct{ n, b int }{{100, 10}, {107, 10}, {30, 3}}
	for _, tt := range tests {
		keys := make([]float64, tt.n)
		for i := range keys {
			keys[i] = float64(i) // sample i has key i
		}
		for seed := uint64(1); seed <= 5; seed++ {
			batches := ComposeRound(Heterogeneous, keys, tt.b, newRNG(seed))
			rem := tt.n % tt.b
			if rem > 0 && len(batches[len(batches)-1]) != rem {
				t.Errorf("n=%d b=%d: remainder batch has %d samples, want %d", tt.n, tt.b, len(batches[len(batches)-1]), rem)
			}
			full := batches
			if rem > 0 {
				full = batches[:len(batches)-1]
			}
			// The set-aside samples are random, so strata are measured on
			// the ranks of the remaining samples.
			aside := map[int]bool{}
			if rem > 0 {
				for _, i := range batches[len(batches)-1] {
					aside[i] = true
				}
			}
			rank := map[int]int{}
			r := 0
			for i := tt.n - 1; i >= 0; i-- {
				if !aside[i] {
					rank[i] = r
					r++
				}
			}
			per := (tt.n - rem) / tt.b
			for j, batch := range full {
				got := make([]int, tt.b)
				for _, i := range batch {
					got[rank[i]/per]++
				}
				for s, c := range got {
					if c != 1 {
						t.Errorf("n=%d b=%d seed %d: batch %d has %d samples from stratum %d, want 1", tt.n, tt.b, seed, j, c, s)
					}
				}
			}
		}
	}
}

func TestHeterogeneousShufflesInsideBatch(t *testing.T) {
	keys := make([]float64, 100)
	for i := range keys {
		keys[i] = float64(i)
	}
	batches := ComposeRound(Heterogeneous, keys, 10, newRNG(11))
	descending := 0
	for _, batch := range batches {
		ordered := true
		for k := 1; k < len(batch); k++ {
			if keys[batch[k]] > keys[batch[k-1]] {
				ordered = false
			}
		}
		if ordered {
			descending++
		}
	}
	if descending == len(batches) {
		t.Errorf("every batch is in descending key order: the order inside batches was not shuffled")
	}
}

func TestHomogeneousContiguous(t *testing.T) {
	tests := []struct{ n, b int }{{100, 10}, {23, 5}, {7, 3}}
	for _, tt := range tests {
		keys := make([]float64, tt.n)
		for i := range keys {
			keys[i] = float64(i)
		}
		batches := ComposeRound(Homogeneous, keys, tt.b, newRNG(5))
		for j, batch := range batches {
			hi := tt.n - 1 - j*tt.b
			for _, i := range batch {
				if i > hi || i <= hi-tt.b {
					t.Errorf("n=%d b=%d: batch %d holds key %d, want keys in (%d, %d]", tt.n, tt.b, j, i, hi-tt.b, hi)
				}
			}
		}
	}
}

func TestComposeTiesAreRandom(t *testing.T) {
	// All keys equal: homogeneous batches must not always be 0..9, 10..19, ...
	keys := make([]float64, 20)
	first := ComposeRound(Homogeneous, keys, 10, newRNG(1))
	same := true
	for k, i := range first[0] {
		if i != k {
			same = false
		}
	}
	if same {
		t.Errorf("ties kept index order %v: want a seeded random order", first[0])
	}
}

func TestComposeMissingKeyGoesToMiddle(t *testing.T) {
	// Sample 2 has no score: it is treated as the mean of the others (2.5),
	// so sorted best first the keys are 5, 4, (2.5), 1, 0 and homogeneous
	// batches of 2 put it with sample 3, not at either end.
	keys := []float64{5, 4, math.NaN(), 1, 0}
	batches := ComposeRound(Homogeneous, keys, 2, newRNG(1))
	want := [][]int{{0, 1}, {2, 3}, {4}}
	if !reflect.DeepEqual(batches, want) {
		t.Errorf("got %v, want %v", batches, want)
	}
}

func TestSortKeys(t *testing.T) {
	nan := math.NaN()
	gappy := [][]float64{
		{1, 2, nan, nan},
		{3, nan, nan, 4},
		{2, nan, nan, nan},
	}
	plain := [][]float64{{1, 3}, {2, nan}, {6, nan}}
	tests := []struct {
		name   string
		key    SortKey
		rounds [][]float64
		want   []float64
	}{
		{"previous with gaps", SortByPrevious, gappy, []float64{2, 2, nan, 4}},
		{"mean with gaps", SortByMean, gappy, []float64{2, 2, nan, 4}},
		{"previous", SortByPrevious, plain, []float64{6, 3}},
		{"mean", SortByMean, plain, []float64{3, 3}},
		{"unknown key acts as previous", SortKey("other"), plain, []float64{6, 3}},
		{"ragged rounds", SortByPrevious, [][]float64{{1, 2, 3}, {4}}, []float64{4, 2, 3}},
		{"no rounds", SortByMean, nil, []float64{}},
	}
	for _, tt := range tests {
		got := SortKeys(tt.key, tt.rounds)
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %d keys, want %d", tt.name, len(got), len(tt.want))
			continue
		}
		for i := range tt.want {
			if math.IsNaN(tt.want[i]) != math.IsNaN(got[i]) || (!math.IsNaN(tt.want[i]) && got[i] != tt.want[i]) {
				t.Errorf("%s: key %d = %v, want %v", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}
