package web

import (
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/report"
)

// TestPercentRoundsTheExportedShare: a share shown as a percentage is the
// exported share (its shortest decimal) moved two places and rounded half
// away from zero, as a reader of the export rounds it, on both sides of a
// half. Rounding the float share × 100 gave 12% for 1 of 8 (12.5 to even)
// beside 38% for 3 of 8, and 14% for 0.145 (14.499999999999998).
func TestPercentRoundsTheExportedShare(t *testing.T) {
	for _, tc := range []struct {
		share float64
		want  string
	}{
		{1.0 / 8, "13%"}, // was 12%
		{3.0 / 8, "38%"},
		{0.145, "15%"},                    // was 14%
		{math.Nextafter(0.125, 0), "12%"}, // exported 0.12499999999999999
		{math.Nextafter(0.145, 0), "14%"}, // exported 0.14499999999999996
		{0.00125, "0.1%"},                 // 0.125%
		{0.00375, "0.4%"},                 // 0.375%
		{0.0095, "1.0%"},                  // 0.95% is below 1%: one decimal
		{1, "100%"},
		{0, "0%"},
		{math.NaN(), "—"},
	} {
		if got := runPercent(tc.share); got != tc.want {
			t.Errorf("runPercent(%v) = %q, want %q", tc.share, got, tc.want)
		}
	}
	// The run page's sentence: 10 of 80 answered round scores unreadable.
	c := report.CriterionReport{Scored: 70, Missing: 10}
	if got := runUnreadable(c, 0, "round "); !strings.Contains(got, "(13%)") {
		t.Errorf("runUnreadable: %q, want 10 of 80 said as 13%%", got)
	}
}

// TestPercentNeverReadsNoneOrAll: a share above zero never shows as
// 0.0%, nor one below a whole as 100%: 1 unreadable score of 3,000 read
// "1 of 3,000 answered round scores (0.0%)", and 2,999 of 3,000 "(100%)",
// as if none or every one had failed. Such a share gets the decimals that
// show it (up to four, beyond them a bound), rounded as runPercent rounds.
func TestPercentNeverReadsNoneOrAll(t *testing.T) {
	for _, tc := range []struct {
		share float64
		want  string
	}{
		{1.0 / 3000, "0.03%"},     // was 0.0%
		{1.0 / 20000, "0.01%"},    // 0.005% rounds half away at two decimals; was 0.0%
		{1e-9, "< 0.0001%"},       // beyond four decimals: said as a bound
		{0.0004, "0.04%"},         // was 0.0%
		{0.0005, "0.1%"},          // 0.05% rounds up to one decimal's 0.1
		{2999.0 / 3000, "99.97%"}, // was 100%
		{0.995, "99.5%"},          // was 100%
		{0.999999, "99.9999%"},    // the most shown below 100
		{0.9999999, "> 99.9999%"},
		{0.994, "99%"},
		{0.5, "50%"},
		{1, "100%"},
		{0, "0%"},
	} {
		if got := runPercent(tc.share); got != tc.want {
			t.Errorf("runPercent(%v) = %q, want %q", tc.share, got, tc.want)
		}
	}
	c := report.CriterionReport{Scored: 2999, Missing: 1}
	if got := runUnreadable(c, 0, "round "); !strings.Contains(got, "1 of 3000 answered round scores (0.03%)") {
		t.Errorf("runUnreadable: %q, want 1 of 3000 said as 0.03%%", got)
	}
}

// TestRatingSummaryRoundsHalfAway: the dataset page's mean (and SD, min,
// max) of a rating column rounds as a mean of ratings is rounded
// elsewhere (Decimal): 1.125, the mean of 1 and 1.25, shows 1.13 as
// someone averaging the exported ratings rounds it, where the float
// rounded to even showed 1.12; 2.675 (its float 2.67499999…) shows 2.68.
func TestRatingSummaryRoundsHalfAway(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{1.125, "1.13"}, {2.675, "2.68"}, {2.674, "2.67"}, {-1.125, "−1.13"}, {-0.001, "0.00"}, {math.NaN(), "—"}} {
		if got := statText(tc.v); got != tc.want {
			t.Errorf("statText(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestRunFiguresRoundTheExportedDecimal: the run page's other figures
// exported as floats (batch bias, the decomposition's errors, entropy)
// round as a reader of the export rounds them: 0.0445 shows 0.045, where
// the float (0.04449999…) showed 0.044; the decomposition's note on
// figures rounded apart reads them as shown.
func TestRunFiguresRoundTheExportedDecimal(t *testing.T) {
	for _, tc := range []struct {
		v      float64
		digits int
		want   string
	}{{0.0445, 3, "0.045"}, {math.Nextafter(0.0445, 0), 3, "0.044"}, {-0.0445, 3, "−0.045"}, {-0.0004, 3, "0.000"},
		{2.5, -1, "2.5"}, {12.5, 0, "13"}, {math.NaN(), 3, "—"}} {
		if got := runFloat(tc.v, tc.digits); got != tc.want {
			t.Errorf("runFloat(%v, %d) = %q, want %q", tc.v, tc.digits, got, tc.want)
		}
	}
	// Shown 0.045 = 0.091 − 0.046: adds up as shown, no note; shown
	// 0.045 = 0.091 − 0.047, it does not, and the note says so.
	if got := roundedApart(0.0445, 0.0905, 0.046); got != "" {
		t.Errorf("roundedApart: %q for figures shown 0.045 = 0.091 − 0.046", got)
	}
	if got := roundedApart(0.0445, 0.0905, 0.0465); got == "" {
		t.Errorf("roundedApart: no note for figures shown 0.045 = 0.091 − 0.047")
	}
}
