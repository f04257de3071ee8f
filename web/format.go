package web

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/internal/money"
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
// money (money.Text): always two decimals ("$0.50", "$12.00"), and below
// a dollar as many more as three significant digits need ("$0.0123",
// "$0.000457"), so small per-sample costs and per-token prices stay
// tellable apart. The run events the models write (a late count's cost)
// use the same words.
func Money(usd float64) string { return money.Text(usd) }

// Count writes a whole number with thousands separators ("12,345").
func Count(n int) string { return runCount(n) }

// StandaloneCSP is the Content-Security-Policy a downloaded report carries
// in its own head: a file opened from disk or a mail has no server to send
// one. It holds its style inline and nothing else (no script, no image or
// font fetched): so no text of a dataset or a judge, were it ever written
// unescaped, could run a script in the file's origin or fetch an address
// that tells a third party who opened the report and when. Links still
// open when followed, without a Referer (the meta referrer beside it).
const StandaloneCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
