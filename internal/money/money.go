// Package money writes amounts of US dollars the one way the product shows
// them. It sits below models, report and web, so that text stored by the
// models (a run event's words) and the pages format a cost alike.
package money

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// settledSignificant is how many significant digits of a summed cost are
// kept before it is rounded for display. A float64 holds about 16; the
// sum of a run's per-call costs, added in the order the answers arrived,
// is off by a few units of the last one or two, and 12 leave that noise
// out for sums of millions of calls while keeping every micro-dollar of
// any cost below a million dollars.
const settledSignificant = 12

// Settled is a summed cost without its float noise: v to 12 significant
// digits. The same calls' costs added in another order (the answers of a
// run arrive in any order) give the same value, so a cost that lies on a
// rounding boundary, such as 0.1183275, rounds the same way whichever
// order it was summed in, instead of to 0.118328 one time and 0.118327 the
// next. NaN and infinities are returned as they are.
func Settled(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return v
	}
	s, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', settledSignificant, 64), 64)
	if err != nil {
		return v
	}
	return s
}

// Decimal places of an exported amount: a run's cost (and any other
// total) to the micro-dollar, far finer than any judge bills; a cost per
// sample to the nano-dollar, since a cheap judge's cost per sample is a
// few micro-dollars, which six places would leave with one or two digits.
const (
	Places          = 6
	PerSamplePlaces = 9
)

// Decimal writes usd as the exports write an amount: settled (Settled),
// its shortest decimal rounded half away from zero to places decimals,
// the zeros after the last significant digit dropped (0.3, 0.001234, 5);
// "" when it is not a number. 0.0001235 is 0.000124, where rounding the
// float (0.00012349999…) gave 0.000123.
func Decimal(usd float64, places int) string {
	if math.IsNaN(usd) || math.IsInf(usd, 0) {
		return ""
	}
	exact, ok := new(big.Rat).SetString(strconv.FormatFloat(Settled(usd), 'g', -1, 64))
	if !ok {
		return ""
	}
	s := exact.FloatString(places) // big.Rat rounds halves away from zero
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		// A tiny negative correction rounds to zero, not to "minus zero".
		s = "0"
	}
	return s
}

// Text writes an amount of US dollars the one way the product shows
// money: always two decimals ("$0.50", "$12.00"), and below a dollar as
// many more as three significant digits need ("$0.0123", "$0.000457"),
// so small per-sample costs and per-token prices stay tellable apart. A
// negative amount has the true minus sign (U+2212), as pages sign numbers;
// an amount that is not a number is "—". What is shown is the amount the
// exports write (Decimal to Places), rounded: a reader of the export
// rounding its number gets the page's figure.
func Text(usd float64) string { return text(usd, Places) }

// PerSampleText is Text for a cost per sample, which the exports write to
// PerSamplePlaces decimals.
func PerSampleText(usd float64) string { return text(usd, PerSamplePlaces) }

// text is Text of the amount as exported with places decimals.
func text(usd float64, places int) string {
	if math.IsNaN(usd) || math.IsInf(usd, 0) {
		return "—"
	}
	// A run's cost is a sum in the order its answers arrived: settled, it
	// shows the same digits whatever that order was.
	usd = Settled(usd)
	sign := ""
	if usd < 0 {
		sign, usd = "\u2212", -usd
	}
	// The amount is rounded as its reader rounds the number an export
	// writes: the exported decimal, half away from zero ($1.125 is $1.13
	// and $0.1235 is $0.124, where rounding the float gave $1.12, to even,
	// and $0.123, its float lying just below the half). 0.12349951 is
	// exported as 0.1235, so it shows $0.124, not the $0.123 of the
	// unrounded amount.
	exported := Decimal(usd, places)
	exact, ok := new(big.Rat).SetString(exported)
	if !ok {
		return "—"
	}
	shown, _ := exact.Float64()
	digits := 2
	if shown > 0 && shown < 1 {
		// Three significant digits: 0.0123 has its first at the 2nd decimal.
		// Counted on the amount rounded to three digits, so 0.0099996
		// (shown as 0.0100) does not get a fourth.
		digits = sigDigits(shown)
		if r, err := strconv.ParseFloat(exact.FloatString(digits), 64); err == nil && r > 0 {
			digits = min(digits, sigDigits(r))
		}
	}
	s := exact.FloatString(digits) // big.Rat rounds halves away from zero
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
	if s == "0.00" {
		// An amount exported as 0 shows no minus sign.
		sign = ""
	}
	return sign + "$" + s
}

// sigDigits is how many decimals show three significant digits of a
// positive amount below a dollar, two at least.
func sigDigits(usd float64) int {
	return max(2, 3-int(math.Floor(math.Log10(usd)))-1)
}

// exactly reports whether the written amount s is usd itself, not a
// rounding of it (up to float noise from adding prices).
func exactly(s string, usd float64) bool {
	v, err := strconv.ParseFloat(s, 64)
	return err == nil && math.Abs(v-usd) <= 1e-9*usd
}
