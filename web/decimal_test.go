package web

import (
	"math"
	"strconv"
	"testing"
)

// TestDecimal: a score rounds as the decimal the export writes for it,
// halves away from zero, whatever floating-point noise its sum carries.
func TestDecimal(t *testing.T) {
	sum := func(vs ...float64) float64 {
		s := 0.0
		for _, v := range vs {
			s += v
		}
		return s / float64(len(vs))
	}
	tests := []struct {
		v      float64
		digits int
		want   string
	}{
		{sum(2.1, 2.2, 2.2, 2.2), 2, "2.18"}, // 2.1750000000000003
		{sum(2.2, 2.2, 2.1, 2.2), 2, "2.18"}, // 2.175 (just below in binary): was 2.17
		{2.125, 2, "2.13"},                   // exact half: was 2.12 (to even)
		{2.375, 2, "2.38"},
		{2.675, 2, "2.68"}, // 2.67499999999999982236431605997495353221893310546875
		{-2.125, 2, "-2.13"},
		{3, 2, "3.00"},
		{2.25, 2, "2.25"},
		{2.3333333333333335, 2, "2.33"},
		{2.6666666666666665, 2, "2.67"},
		{87.5, 2, "87.50"},
		{0.3125, 3, "0.313"},
		{-0.001, 2, "0.00"}, // no negative zero
		{1e-7, 2, "0.00"},
		{1e21, 2, "1000000000000000000000.00"},
	}
	for _, tt := range tests {
		if got := Decimal(tt.v, tt.digits); got != tt.want {
			t.Errorf("Decimal(%s, %d) = %q, want %q", strconv.FormatFloat(tt.v, 'g', -1, 64), tt.digits, got, tt.want)
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := Decimal(v, 2); got != "—" {
			t.Errorf("Decimal(%v) = %q, want a dash", v, got)
		}
	}
	// A coefficient just below zero prints without a sign.
	if got := CoefText(-0.0004, 3); got != "0.000" {
		t.Errorf("CoefText(-0.0004) = %q, want 0.000", got)
	}
	if got := runFloat(-0.0004, 3); got != "0.000" {
		t.Errorf("runFloat(-0.0004) = %q, want 0.000", got)
	}
	if got := CoefText(-0.0006, 3); got != "−0.001" {
		t.Errorf("CoefText(-0.0006) = %q, want −0.001", got)
	}
	// Signed rounds the same way.
	if got := Signed(sum(2.2, 2.2, 2.1, 2.2)-2, 2); got != "+0.18" {
		t.Errorf("Signed(0.175) = %q, want +0.18", got)
	}
	if got := Signed(-0.004, 2); got != "±0.00" {
		t.Errorf("Signed(-0.004) = %q, want ±0.00", got)
	}
}

// BenchmarkDecimal compares the page's score text with the plain
// strconv.FormatFloat it replaced, on the two kinds of score a page shows:
// one with no more decimals than shown (2.25, most scores) and a mean of
// rounds with more (2.1750000000000003).
func BenchmarkDecimal(b *testing.B) {
	for _, c := range []struct {
		name string
		v    float64
	}{{"short", 2.25}, {"mean", 2.1750000000000003}, {"third", 2.3333333333333335}} {
		b.Run(c.name+"/FormatFloat", func(b *testing.B) {
			for b.Loop() {
				_ = strconv.FormatFloat(c.v, 'f', 2, 64)
			}
		})
		b.Run(c.name+"/Decimal", func(b *testing.B) {
			for b.Loop() {
				_ = Decimal(c.v, 2)
			}
		})
	}
}

// TestSignedCoef: a figure made of correlation coefficients is rounded from
// its float, as CoefText rounds a coefficient and as someone rounding the
// exported float reads it (0.12349999999999998 is 0.123; Signed reads it
// as the decimal 0.1235 and shows 0.124), signed, with ± for a figure
// that shows as zero and a dash for one that is not a number.
func TestSignedCoef(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0.12349999999999998, "+0.123"},
		{-0.12349999999999998, "−0.123"},
		{0.4567, "+0.457"},
		{-0.0004, "±0.000"},
		{0.0004, "±0.000"},
		{0, "±0.000"},
		{1, "+1.000"},
		{math.NaN(), "—"},
		{math.Inf(-1), "—"},
	} {
		if got := SignedCoef(tc.v, 3); got != tc.want {
			t.Errorf("SignedCoef(%v, 3) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
