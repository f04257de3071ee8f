package web

import (
	"math"
	"strconv"
	"strings"
)

// Money writes an amount of US dollars the one way the product shows
// money: always two decimals ("$0.50", "$12.00"), and below a dollar as
// many more as three significant digits need ("$0.0123", "$0.000457"),
// so small per-sample costs and per-token prices stay tellable apart.
func Money(usd float64) string {
	if math.IsNaN(usd) || math.IsInf(usd, 0) {
		return "—"
	}
	sign := ""
	if usd < 0 {
		sign, usd = "-", -usd
	}
	digits := 2
	if usd > 0 && usd < 1 {
		// Three significant digits: 0.0123 has its first at the 2nd decimal.
		digits = max(2, 3-int(math.Floor(math.Log10(usd)))-1)
	}
	s := strconv.FormatFloat(usd, 'f', digits, 64)
	if digits > 2 {
		// Zeros past the second decimal say nothing: $0.500 is $0.50.
		whole, frac, _ := strings.Cut(s, ".")
		frac = strings.TrimRight(frac, "0")
		for len(frac) < 2 {
			frac += "0"
		}
		s = whole + "." + frac
	}
	return sign + "$" + s
}

// Count writes a whole number with thousands separators ("12,345").
func Count(n int) string { return runCount(n) }
