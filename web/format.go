package web

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/report"
)

// Minus gives a number written by strconv or fmt ("-0.122", "1e-05") the
// true minus sign U+2212 that pages use ("−0.122"), the one way every
// number on a page, in a shared or standalone report and on a chart label
// is signed. s is one number, so a hyphen in it can only be a sign. CSV and
// JSON exports, the API, the command line and form field values keep the
// ASCII hyphen: programs and the form's own parser read those.
func Minus(s string) string { return strings.ReplaceAll(s, "-", "\u2212") }

// sentenceMinus is an ASCII hyphen that signs a number in a sentence: at
// the start or after a space or an opening parenthesis, before a digit.
// A hyphen inside a word ("Holm-adjusted", "leave-one-out") never matches.
var sentenceMinus = regexp.MustCompile(`(^|[\s(])-([0-9])`)

// ReadingText is a reading sentence built outside this package (stats,
// report, e.g. "Weak disagreement (-0.21)"; those keep the ASCII hyphen in
// the JSON export and the API) with each of its numbers signed the way a
// page signs numbers, with the true minus sign ("(−0.21)").
func ReadingText(s string) string {
	return sentenceMinus.ReplaceAllString(s, "${1}\u2212${2}")
}

// Signed writes a change with its sign: "+0.120", "−0.050", and "±0.000"
// for one that rounds to zero; a dash when it is not a number.
func Signed(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', digits, 64)
	switch {
	case math.Round(v*math.Pow10(digits)) == 0:
		return "±" + s
	case v < 0:
		return Minus("-" + s)
	}
	return "+" + s
}

// Money writes an amount of US dollars the one way the product shows
// money: always two decimals ("$0.50", "$12.00"), and below a dollar as
// many more as three significant digits need ("$0.0123", "$0.000457"),
// so small per-sample costs and per-token prices stay tellable apart.
func Money(usd float64) string {
	if math.IsNaN(usd) || math.IsInf(usd, 0) {
		return "—"
	}
	// A run's cost is a sum in the order its answers arrived: settled, it
	// shows the same digits whatever that order was.
	usd = report.SettledUSD(usd)
	sign := ""
	if usd < 0 {
		sign, usd = Minus("-"), -usd
	}
	digits := 2
	if usd > 0 && usd < 1 {
		// Three significant digits: 0.0123 has its first at the 2nd decimal.
		// Counted on the amount rounded to three digits, so 0.0099996
		// (shown as 0.0100) does not get a fourth.
		rounded, _ := strconv.ParseFloat(strconv.FormatFloat(usd, 'e', 2, 64), 64)
		digits = max(2, 3-int(math.Floor(math.Log10(rounded)))-1)
	}
	s := strconv.FormatFloat(usd, 'f', digits, 64)
	if digits > 2 && exactly(s, usd) {
		// Zeros past the second decimal of an exact amount (a price such as
		// $0.075, or $0.500) say nothing. A rounded one keeps them: $0.0100
		// for 0.0100135 shows its three digits like $0.00774 beside it.
		whole, frac, _ := strings.Cut(s, ".")
		frac = strings.TrimRight(frac, "0")
		for len(frac) < 2 {
			frac += "0"
		}
		s = whole + "." + frac
	}
	return sign + "$" + s
}

// exactly reports whether the written amount s is usd itself, not a
// rounding of it (up to float noise from adding prices).
func exactly(s string, usd float64) bool {
	v, err := strconv.ParseFloat(s, 64)
	return err == nil && math.Abs(v-usd) <= 1e-9*usd
}

// Count writes a whole number with thousands separators ("12,345").
func Count(n int) string { return runCount(n) }
