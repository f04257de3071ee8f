package web

import "testing"

// TestCompareDifferenceAsShown: the compare page and its share link round
// a row's exact decimal difference (the API's unit_difference), halves
// away from zero, with the page's signs; data-diff keeps 4 decimals. The
// float beside it only gives the sign of a figure the decimal lacks.
func TestCompareDifferenceAsShown(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		row         CompareRow
		shown, attr string
	}{
		{CompareRow{Diff: f(0.2), DiffDecimal: "0.2"}, "+0.20", "0.2000"},
		{CompareRow{Diff: f(0.125), DiffDecimal: "0.125"}, "+0.13", "0.1250"},
		{CompareRow{Diff: f(-0.125), DiffDecimal: "-0.125"}, "−0.13", "-0.1250"},
		{CompareRow{Diff: f(0.00005), DiffDecimal: "0.00005"}, "±0.00", "0.0001"},
		{CompareRow{Diff: f(-0.00004), DiffDecimal: "-0.00004"}, "±0.00", "0.0000"},
		{CompareRow{Diff: f(0), DiffDecimal: "0"}, "±0.00", "0.0000"},
		// 0.12499999999999997 is not 0.125: the decimal given is rounded.
		{CompareRow{Diff: f(0.12499999999999997), DiffDecimal: "0.12499999999999997"}, "+0.12", "0.1250"},
		{CompareRow{}, "—", ""},
	}
	for _, tt := range tests {
		if got := compareSigned(tt.row); got != tt.shown {
			t.Errorf("%q: shown %q, want %q", tt.row.DiffDecimal, got, tt.shown)
		}
		if got := compareDiffAttr(tt.row); got != tt.attr {
			t.Errorf("%q: data-diff %q, want %q", tt.row.DiffDecimal, got, tt.attr)
		}
	}
}
