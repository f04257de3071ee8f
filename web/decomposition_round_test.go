package web

import (
	"math"
	"testing"
)

func TestRoundedApartOnlyWhenTheShownFiguresDoNotAddUp(t *testing.T) {
	for _, c := range []struct {
		e, m, v float64
		note    bool
	}{
		{1.0625, 1.375, 0.3125, true},   // shown 1.062 = 1.375 − 0.312
		{0.1234, 0.4567, 0.3333, true},  // shown 0.123 = 0.457 − 0.333
		{0.5, 0.75, 0.25, false},        // adds up as shown
		{0.1236, 0.4569, 0.3333, false}, // shown 0.124 = 0.457 − 0.333
		{math.NaN(), 0.5, 0.25, false},  // nothing to add up
	} {
		if got := roundedApart(c.e, c.m, c.v) != ""; got != c.note {
			t.Errorf("roundedApart(%v, %v, %v): note %v, want %v", c.e, c.m, c.v, got, c.note)
		}
	}
}
