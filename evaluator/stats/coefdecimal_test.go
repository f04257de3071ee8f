package stats

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestCoefDecimal: a coefficient is rounded as its shortest decimal (the
// exported number) rounded half away from zero, on both sides of a half:
// 0.1235 (the float just below the decimal) shows 0.124 as a reader of
// the export rounds it, its neighbours either side round as their own
// decimals say, and a float that prints with more digits (0.12349999999999998)
// keeps its own rounding.
func TestCoefDecimal(t *testing.T) {
	below, above := math.Nextafter(0.1235, 0), math.Nextafter(0.1235, 1)
	for _, tc := range []struct {
		v      float64
		digits int
		want   string
	}{
		{0.1235, 3, "0.124"}, // was 0.123: the float is 0.12349999999999999866…
		{-0.1235, 3, "-0.124"},
		{below, 3, "0.123"}, // 0.12349999999999998
		{above, 3, "0.124"}, // 0.12350000000000001
		{0.12349999999999998, 3, "0.123"},
		{0.285, 2, "0.29"}, // was 0.28: the float is 0.28499999999999998…
		{-0.285, 2, "-0.29"},
		{math.Nextafter(0.285, 0), 2, "0.28"},
		{0.125, 2, "0.13"}, // an exact binary half: rounded away from zero, not to even
		{0.0005, 3, "0.001"},
		{math.Nextafter(0.0005, 0), 3, "0.000"},
		{-0.0004, 3, "-0.000"},
		{0.4567, 3, "0.457"},
		{1, 3, "1.000"},
		{0.5, 3, "0.500"},
		{1e-7, 3, "0.000"},
		{0.6996, 2, "0.70"},
	} {
		if got := CoefDecimal(tc.v, tc.digits); got != tc.want {
			t.Errorf("CoefDecimal(%v, %d) = %q, want %q", tc.v, tc.digits, got, tc.want)
		}
	}
	// Against rounding the shortest decimal exactly, every time.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		v := rng.Float64()*2 - 1
		if rng.IntN(2) == 0 { // a decimal of few places, where halves fall
			v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'f', 1+rng.IntN(4), 64), 64)
		}
		for _, d := range []int{2, 3} {
			r, _ := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
			want := r.FloatString(d)
			got := CoefDecimal(v, d)
			// Only a zero may differ, in its sign ("-0.000", "0.000").
			if got != want && strings.TrimLeft(got, "-0.") != "" {
				t.Fatalf("CoefDecimal(%v, %d) = %q, the shortest decimal rounded is %q", v, d, got, want)
			}
		}
	}
}

// TestSentencesRoundTheExportedDecimal: the readings print a coefficient,
// its interval and the human ceiling by CoefDecimal's rule: the exported
// 0.285 reads 0.29 (its float, 0.28499999999999998…, printed 0.28), while
// 0.28499999999999998 itself, exported as such, stays 0.28.
func TestSentencesRoundTheExportedDecimal(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Interpret(MethodPearson, Correlation{Coef: 0.285, P: 0.001, CILow: 0.125, CIHigh: 0.345, N: 200}),
			"Weak agreement (Pearson r = 0.29) over 200 samples, 95% interval 0.13 to 0.35."},
		{Interpret(MethodPearson, Correlation{Coef: math.Nextafter(0.285, 0), P: 0.001, CILow: -0.615, CIHigh: 0.865, N: 200}),
			"Weak agreement (Pearson r = 0.28), but with 200 samples the 95% interval is wide: -0.62 to 0.87."},
		{InterpretCeiling(MethodPearson, 0.345, 0.285), "The judge agrees with the average human better than one human agrees with the others (Pearson r = 0.35 vs 0.29)."},
		{InterpretCeilingWithAlpha(MethodPearson, math.NaN(), math.NaN(), 0.615, 4), "The judge cannot be compared with the humans: its agreement could not be measured (the humans agree with each other at Krippendorff's α = 0.62)."},
	} {
		if tc.got != tc.want {
			t.Errorf("got  %q\nwant %q", tc.got, tc.want)
		}
	}
}

// BenchmarkCoefDecimal: CoefDecimal against the float rounding it
// replaces (strconv's 'f' with three decimals), on a typical coefficient
// and on one half-way at the shown digits (the only case that goes
// through big.Rat).
func BenchmarkCoefDecimal(b *testing.B) {
	for _, c := range []struct {
		name string
		v    float64
	}{{"typical", 0.7318422019}, {"half-way", 0.1235}} {
		b.Run(c.name+"/strconv", func(b *testing.B) {
			for b.Loop() {
				_ = strconv.FormatFloat(c.v, 'f', 3, 64)
			}
		})
		b.Run(c.name+"/CoefDecimal", func(b *testing.B) {
			for b.Loop() {
				_ = CoefDecimal(c.v, 3)
			}
		})
	}
}
