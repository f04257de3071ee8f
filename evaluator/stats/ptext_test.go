package stats

import (
	"math"
	"regexp"
	"testing"
)

// TestPValuesPrintByOneRule: every p-value is printed with three decimals
// while its printed value is below 0.100 and with two from there on,
// whatever the sentence or page. A p between 0.0995 and 0.1 printed
// "p = 0.100" (three decimals, chosen on the raw value) beside "p = 0.10"
// for 0.1 itself, and the experiment headline's and compare page's
// formatter (web.PValueText) printed three decimals everywhere ("p =
// 0.500") beside the reading sentences' "p = 0.50".
func TestPValuesPrintByOneRule(t *testing.T) {
	for _, tt := range []struct {
		p    float64
		want string
	}{
		{math.NaN(), "undefined"},
		{0.0004, "p < 0.001"},
		{0.001, "p = 0.001"},
		{0.0494, "p = 0.049"},
		{50.0 / 1001, "p < 0.050"},
		{0.05, "p = 0.050"},
		{0.0994, "p = 0.099"},
		{0.0995, "p = 0.10"},
		{0.0996, "p = 0.10"},
		{0.09999, "p = 0.10"},
		{0.1, "p = 0.10"},
		{0.25, "p = 0.25"},
		{0.5, "p = 0.50"},
		{1, "p = 1.00"},
		// Half-way as exported: rounded as a reader of the export does,
		// half away from zero, whichever side of the half the float lies.
		{0.0445, "p = 0.045"}, // its float is 0.04449999…: printed 0.044
		{math.Nextafter(0.0445, 0), "p = 0.044"},
		{0.285, "p = 0.29"}, // its float is 0.28499999…: printed 0.28
		{math.Nextafter(0.285, 0), "p = 0.28"},
		{0.125, "p = 0.13"}, // exactly a half: printed 0.12 (to even)
	} {
		if got := PText(tt.p); got != tt.want {
			t.Errorf("PText(%g) = %q, want %q", tt.p, got, tt.want)
		}
	}
	// Every permutation p-value of 1,000 swaps, k/1001: three decimals
	// exactly when what they print is below 0.100.
	three := regexp.MustCompile(`^p = 0\.0\d\d$`)
	two := regexp.MustCompile(`^p = [01]\.\d\d$`)
	for k := 1; k <= 1001; k++ {
		p := float64(k) / 1001
		got := PText(p)
		switch {
		case got == "p < 0.001" || got == "p < 0.050":
		case three.MatchString(got):
			if got == "p = 0.100" {
				t.Errorf("PText(%d/1001) = %q: 0.100 printed with three decimals", k, got)
			}
		case two.MatchString(got):
			if got < "p = 0.10" {
				t.Errorf("PText(%d/1001) = %q: below 0.10 with two decimals", k, got)
			}
		default:
			t.Errorf("PText(%d/1001) = %q: neither rule", k, got)
		}
	}
}

// TestPCellIsPTextInATableCell: a table's p-value column prints the
// number PText prints, without the "p = " its heading already says.
func TestPCellIsPTextInATableCell(t *testing.T) {
	for _, tt := range []struct {
		p    float64
		want string
	}{
		{math.NaN(), "undefined"}, {0.0004, "< 0.001"}, {50.0 / 1001, "< 0.050"}, {0.0494, "0.049"}, {0.0995, "0.10"}, {1.0 / 3, "0.33"}, {1, "1.00"},
	} {
		if got := PCell(tt.p); got != tt.want {
			t.Errorf("PCell(%g) = %q, want %q", tt.p, got, tt.want)
		}
	}
}
