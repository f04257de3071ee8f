package report

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFinalNumberFastAgreesWithRat: the integer path of FinalNumber (the
// one a JSON export takes for nearly every sample) gives what the exact
// big.Rat path gives, for rounds of 0-6 decimals, negative ones, missing
// ones, means that end and means that do not (thirds), and finals that
// are not the rounds' mean.
func TestFinalNumberFastAgreesWithRat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fast := 0
	for i := range 20000 {
		n := 1 + rng.IntN(12)
		places := rng.IntN(7)
		var rounds []*float64
		sum, k := 0.0, 0
		for range n {
			if rng.IntN(8) == 0 {
				rounds = append(rounds, nil)
				continue
			}
			v := math.Round((rng.Float64()*200-50)*math.Pow(10, float64(places))) / math.Pow(10, float64(places))
			rounds = append(rounds, &v)
			sum += v
			k++
		}
		if k == 0 {
			continue
		}
		final := sum / float64(k)
		if i%10 == 0 {
			final += 0.5 // not the rounds' mean: kept as it is
		}
		want := finalNumberRat(final, rounds)
		got, ok := finalNumberFast(final, rounds)
		if !ok {
			continue
		}
		fast++
		switch {
		case (got == nil) != (want == nil):
			t.Fatalf("rounds %v final %v: fast %v, exact %v", roundsOf(rounds), final, got, want)
		case got != nil && *got != *want:
			t.Fatalf("rounds %v final %v: fast %v, exact %v", roundsOf(rounds), final, *got, *want)
		}
	}
	if fast < 15000 {
		t.Errorf("the integer path took only %d cases", fast)
	}
	// Rounds too long for int64 go to big.Rat, and still read right.
	a, b := 0.1234567890123, 1e10+0.5
	if _, ok := finalNumberFast((a+b)/2, []*float64{&a, &b}); ok {
		t.Errorf("rounds of 16+ digits took the integer path")
	}
	if got := FinalNumber(ptr((a+b)/2), []*float64{&a, &b}); got == nil {
		t.Errorf("no final for long rounds")
	}
}

func roundsOf(ps []*float64) []any {
	out := make([]any, len(ps))
	for i, p := range ps {
		if p != nil {
			out[i] = *p
		}
	}
	return out
}

// BenchmarkFinalNumber: a JSON export writes one a sample (with big.Rat
// alone it cost about 6 µs and 150 allocations).
func BenchmarkFinalNumber(b *testing.B) {
	var rounds []*float64
	sum := 0.0
	for _, v := range []float64{1.01, 2.63, 2.2, 1.7, 2.9} {
		rounds = append(rounds, ptr(v))
		sum += v
	}
	final := sum / 5
	for b.Loop() {
		FinalNumber(&final, rounds)
	}
}
