package stats

import (
	"math"
	"testing"
)

// TestEntropyIsTheSameBitsEveryCall: the counts come out of a map, whose
// order changes between calls; summed unsorted, the same scores gave
// 3.269576746316394 on one export and 3.269576746316393 on the next.
func TestEntropyIsTheSameBitsEveryCall(t *testing.T) {
	// 20 tenths, bin k holding k+1 scores: uneven counts, so the terms of
	// the sum differ and their order shows in the last bits.
	var values []float64
	for k := range 20 {
		for range k + 1 {
			values = append(values, 1+float64(k)/10+0.01)
		}
	}
	first := Entropy(values, 0.1)
	if math.IsNaN(first) || first <= 0 {
		t.Fatalf("entropy = %v, want a positive number", first)
	}
	for range 200 {
		if got := Entropy(values, 0.1); math.Float64bits(got) != math.Float64bits(first) {
			t.Fatalf("entropy = %v, then %v: the same scores must give the same bits", first, got)
		}
	}
}
