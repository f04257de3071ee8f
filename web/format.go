package web

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/internal/money"
	"github.com/batcheval/batcheval/report"
)

// Minus gives a number written by strconv or fmt ("-0.122", "1e-05") the
// true minus sign U+2212 that pages use ("−0.122"), the one way every
// number on a page, in a shared or standalone report and on a chart label
// is signed. s is one number, so a hyphen in it can only be a sign. CSV and
// JSON exports, the API, the command line and form field values keep the
// ASCII hyphen: programs and the form's own parser read those.
func Minus(s string) string { return strings.ReplaceAll(s, "-", "\u2212") }

// ReadingText is a reading sentence built outside this package (stats,
// report, e.g. "Weak disagreement (Pearson r = -0.21)"; those keep the
// ASCII hyphen in the JSON export and the API) with each of its numbers
// signed the way a page signs numbers, with the true minus sign ("= −0.21").
func ReadingText(s string) string {
	return stats.TrueMinus(s)
}

// Signed writes a change with its sign: "+0.120", "−0.050", and "±0.000"
// for one that rounds to zero; a dash when it is not a number. It rounds
// as Decimal does.
func Signed(v float64, digits int) string {
	return withSign(v, func(abs float64) string { return Decimal(abs, digits) })
}

// SignedCoef writes a figure made of correlation coefficients (a
// coefficient's interval bound, a difference of two coefficients and its
// interval) with digits decimals and a sign, as Signed does, but rounding
// as CoefText does a coefficient (stats.CoefDecimal): the JSON export and
// the API give these figures as the computed floats (not as decimals
// within noise, as they give means), so someone rounding the exported
// 0.12349999999999998 reads 0.123 (Signed read it as the decimal 0.1235
// and showed +0.124), and the exported 0.1235 reads 0.124 (rounding the
// float, 0.12349999999999999866…, showed +0.123).
func SignedCoef(v float64, digits int) string {
	return withSign(v, func(abs float64) string { return stats.CoefDecimal(abs, digits) })
}

// coefFixed writes a coefficient or a figure made of coefficients with
// digits decimals as stats.CoefDecimal rounds it, with a page's minus sign
// and no negative zero (a coefficient just below zero, -0.0004, is 0.000
// as printed, not "−0.000", which reads as a disagreement); a dash when
// it is not a number.
func coefFixed(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return Minus(noNegativeZero(stats.CoefDecimal(v, digits)))
}

// SpreadDecimals is how many decimals, from digits up to six, a spread
// (a standard deviation, a width across seeds) or an interval bound needs
// to show as not zero: 0.0003 printed with three decimals reads 0.000,
// as if the runs had not differed at all (or the bound were 0). Zero and
// non-numbers keep digits; a magnitude below 0.0000005 gets six.
func SpreadDecimals(v float64, digits int) int {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return digits
	}
	for d := digits; d < 6; d++ {
		if strings.Trim(stats.CoefDecimal(math.Abs(v), d), "0.") != "" {
			return d
		}
	}
	return max(digits, 6)
}

// IntervalBound writes a bound of a paired difference's 95% interval (the
// compare page's A − B, the alignment page's after − before, the
// experiment page's runs). SignedCoef writes a bound within half a
// thousandth of 0 as "±0.000", which reads as a margin ("plus or minus")
// and hides what a bound next to 0 must tell: on which side of no
// difference it lies. Such a bound gets the decimals that show its sign
// (SpreadDecimals, up to six: "+0.0003", "−0.00004"); a bound that is 0
// even to six decimals is "0.000", unsigned; a dash when it is not a
// number.
func IntervalBound(v float64) string {
	s := SignedCoef(v, SpreadDecimals(v, 3))
	if strings.HasPrefix(s, "±") {
		return "0.000"
	}
	return s
}

// BoundAsPrinted is a bound as IntervalBound prints it, so that a sentence
// on whether an interval includes no difference reads the bounds its
// reader sees: 0.0003, printed +0.0003, is above 0, and 1e-17, printed
// 0.000, is not. NaN when it is not a number.
func BoundAsPrinted(v float64) float64 {
	s := strings.NewReplacer("−", "-", "+", "").Replace(IntervalBound(v))
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return x
}

// DifferenceInterval writes a paired difference's 95% interval, "lo to
// hi", each bound as IntervalBound writes it; "undefined" when either
// bound is not a number.
func DifferenceInterval(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return "undefined"
	}
	return IntervalBound(lo) + " to " + IntervalBound(hi)
}

// withSign writes v's magnitude as text writes it, signed: "±" when it
// shows as zero, the true minus sign below zero, "+" above; a dash when v
// is not a number.
func withSign(v float64, text func(abs float64) string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	s := text(math.Abs(v))
	switch {
	case strings.Trim(s, "0.") == "":
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
// use the same words. It is the amount the exports write (to the
// micro-dollar) rounded, as a reader of the export rounds it.
func Money(usd float64) string { return money.Text(usd) }

// MoneyPerSample is Money for a cost per sample, which the exports write
// to the nano-dollar (money.PerSampleText).
func MoneyPerSample(usd float64) string { return money.PerSampleText(usd) }

// Count writes a whole number with thousands separators ("12,345").
func Count(n int) string { return runCount(n) }

// Decimal writes a score, a human rating, or a mean or difference of them
// with digits decimals, the one way pages round such figures: the value is
// first read as the decimal the JSON export writes for it
// (report.MeanNumber: 2.175 for 2.1750000000000003 as for 2.175, which the
// same four rounds give when summed in another order), and that decimal is
// rounded half away from zero (2.175 and 2.1750000000000003 both show
// 2.18, 2.125 shows 2.13), as someone rounding the exported figure would.
// Rounding the float directly showed one final of 2.175 as 2.17 and another
// as 2.18, and 2.125 as 2.12 beside 2.375 as 2.38. NaN and infinities are a
// dash. The result keeps the ASCII hyphen; pages pass it through Minus.
func Decimal(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	short := strconv.FormatFloat(v, 'f', -1, 64)
	if i := strings.IndexByte(short, '.'); i < 0 || len(short)-i-1 <= digits {
		// No more decimals than shown (3, 2.5, 2.25): nothing to round,
		// and no decimal to find, the common case kept cheap.
		return noNegativeZero(strconv.FormatFloat(v, 'f', digits, 64))
	}
	r, ok := new(big.Rat).SetString(report.MeanNumber(v))
	if !ok {
		return noNegativeZero(strconv.FormatFloat(v, 'f', digits, 64))
	}
	// big.Rat.FloatString rounds halves away from zero.
	return noNegativeZero(r.FloatString(digits))
}

// noNegativeZero writes a figure that rounds to zero without a sign: a
// score of -0.001 shown with two decimals is 0.00, not -0.00.
func noNegativeZero(s string) string {
	if strings.Trim(s, "-0.") == "" && strings.HasPrefix(s, "-") {
		return s[1:]
	}
	return s
}

// StandaloneCSP is the Content-Security-Policy a downloaded report carries
// in its own head: a file opened from disk or a mail has no server to send
// one. It holds its style inline and nothing else (no script, no image or
// font fetched): so no text of a dataset or a judge, were it ever written
// unescaped, could run a script in the file's origin or fetch an address
// that tells a third party who opened the report and when. Links still
// open when followed, without a Referer (the meta referrer beside it).
const StandaloneCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

// percentText writes p, a percentage, for runPercent: whole percents, one
// decimal under 1%, halves away from zero (big.Rat's rounding). A share
// above none never reads 0.0%, nor one short of all 100% (1 of 3,000
// unreadable read "0.0%", 2,999 of 3,000 "100%", as if none or every one
// had failed): such a share gets the decimals that show it (0.03%,
// 99.97%), up to four, then a bound (< 0.0001%, > 99.9999%).
func percentText(p *big.Rat) string {
	switch {
	case p.Sign() > 0 && p.Cmp(big.NewRat(1, 1)) < 0:
		for d := 1; d <= 4; d++ {
			if s := p.FloatString(d); strings.Trim(s, "0.") != "" {
				return s + "%"
			}
		}
		return "< 0.0001%"
	case p.Cmp(big.NewRat(100, 1)) < 0 && p.FloatString(0) == "100":
		for d := 1; d <= 4; d++ {
			if s := p.FloatString(d); !strings.HasPrefix(s, "100") {
				return s + "%"
			}
		}
		return "> 99.9999%"
	case p.Cmp(big.NewRat(1, 1)) < 0:
		return p.FloatString(1) + "%"
	}
	return p.FloatString(0) + "%"
}
