package stats

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Significance and width thresholds for Interpret.
const (
	// alpha is the conventional 5% level: above it the sentence says the
	// agreement may be chance.
	alpha = 0.05
	// wideInterval is the interval width from which Interpret warns that
	// the estimate is loose: 0.3 spans more than one strength band, so the
	// band named could well be the neighbouring one.
	wideInterval = 0.3
)

// Strength names the conventional band of a coefficient's magnitude:
// "negligible" below 0.1, "weak" below 0.3, "moderate" below 0.5, "strong"
// below 0.7, "very strong" from 0.7 (Cohen's bands, extended at the top as
// most applied texts do). It is "undefined" for NaN.
func Strength(coef float64) string {
	a := math.Abs(coef)
	switch {
	case math.IsNaN(a):
		return "undefined"
	case a < 0.1:
		return "negligible"
	case a < 0.3:
		return "weak"
	case a < 0.5:
		return "moderate"
	case a < 0.7:
		return "strong"
	default:
		return "very strong"
	}
}

// Interpret turns c, a coefficient of kind m, into one plain sentence for
// readers who are not statisticians, e.g. (m = MethodPearson)
//
//	Strong agreement (Pearson r = 0.62), but with 40 samples the 95% interval is wide: 0.38 to 0.78.
//	Weak agreement (Pearson r = 0.16), likely not different from chance (p = 0.31).
//	Too few samples to tell (12 samples; Pearson r = 0.45, 95% interval -0.20 to 0.85, p = 0.14).
//	Too few samples to say (n = 2).
//
// Each figure is named as the pages' tables head it (Method.Label): "Strong
// agreement (0.62)" left a newcomer to guess which of the three
// coefficients beside it, if any, 0.62 was. A negative coefficient is
// called disagreement: the judge tends to rank high what humans rank low.
// When the sample cannot tell the coefficient from chance (TooFewToTell)
// no strength band is named: "Very strong disagreement (-0.81), likely not
// different from chance (p = 0.40)" on three samples put a verdict first
// that the next words take back.
func Interpret(m Method, c Correlation) string {
	if c.N < minPairs {
		return fmt.Sprintf("Too few samples to say (n = %d)%s.", c.N, missingNote(c.Missing))
	}
	if math.IsNaN(c.Coef) {
		return fmt.Sprintf("Agreement cannot be measured: one side gave the same score to all %d samples%s.",
			c.N, missingNote(c.Missing))
	}
	// The interval is judged wide on its bounds as printed, so "wide" never
	// sits beside two bounds 0.30 apart.
	lo, hi := hundredths(c.CILow), hundredths(c.CIHigh)
	if TooFewToTell(c) {
		figures := namedCoef(m, c.Coef)
		if !math.IsNaN(lo) && !math.IsNaN(hi) {
			figures += fmt.Sprintf(", 95%% interval %.2f to %.2f", lo, hi)
		}
		if !math.IsNaN(c.P) {
			figures += ", " + PText(c.P)
		}
		return fmt.Sprintf("Too few samples to tell (%d samples; %s)%s.", c.N, figures, missingNote(c.Missing))
	}
	head := headline(m, c.Coef)
	switch {
	case !math.IsNaN(c.P) && c.P >= alpha:
		return fmt.Sprintf("%s, likely not different from chance (%s)%s.", head, PText(c.P), missingNote(c.Missing))
	case !math.IsNaN(lo) && !math.IsNaN(hi) && math.Round((hi-lo)*100) > wideInterval*100:
		return fmt.Sprintf("%s, but with %d samples the 95%% interval is wide: %.2f to %.2f%s.",
			head, c.N, lo, hi, missingNote(c.Missing))
	case !math.IsNaN(lo) && !math.IsNaN(hi):
		return fmt.Sprintf("%s over %d samples, 95%% interval %.2f to %.2f%s.",
			head, c.N, lo, hi, missingNote(c.Missing))
	case !math.IsNaN(c.P):
		return fmt.Sprintf("%s over %d samples, unlikely to be chance (%s)%s.", head, c.N, PText(c.P), missingNote(c.Missing))
	default:
		return fmt.Sprintf("%s over %d samples%s.", head, c.N, missingNote(c.Missing))
	}
}

// TooFewToTell reports whether c's samples are too few for its coefficient
// to carry a verdict: three pairs (no interval can be put on them, see
// minBootstrapPairs, and any three points lie close to some line), or a
// coefficient of a moderate band or above (|r| >= 0.3 as printed) that
// the samples cannot tell from chance (p >= 0.05): a band named there is
// the sample's noise, and more samples are what would tell. A weak or
// negligible coefficient not different from chance is a reading in
// itself ("Weak agreement (Pearson r = 0.16), likely not different from chance") and
// is not too few to tell. False when the coefficient is undefined.
func TooFewToTell(c Correlation) bool {
	if c.N < minPairs || math.IsNaN(c.Coef) {
		return false
	}
	if c.N < minBootstrapPairs {
		return true
	}
	return !math.IsNaN(c.P) && c.P >= alpha && math.Abs(hundredths(c.Coef)) >= 0.3
}

// headline is "Strong agreement (Pearson r = 0.74)", "Weak disagreement
// (Spearman ρ = -0.21)" or "Negligible agreement (Kendall τ-b = 0.03)". The
// band is that of the coefficient as printed: 0.6996 reads "Very strong
// agreement (Pearson r = 0.70)", as a reader holding 0.70 against the bands
// expects.
func headline(m Method, coef float64) string {
	coef = hundredths(coef)
	s := Strength(coef)
	noun := "agreement"
	// A negligible coefficient has no meaningful direction, so it is not
	// called disagreement however its sign falls.
	if coef < 0 && s != "negligible" {
		noun = "disagreement"
	}
	return fmt.Sprintf("%c%s %s (%s)", s[0]-'a'+'A', s[1:], noun, namedCoef(m, coef))
}

// namedCoef is a coefficient of kind m as every reading names it: the
// tables' heading of its kind, then its value to two decimals as the
// sentences print it ("Pearson r = 0.62", "Spearman ρ = -0.21", "Kendall
// τ-b = 0.03"). Interpret and the human ceiling's reading
// (InterpretCeiling) both write it so: the ceiling printed its figures
// bare ("0.71 vs 0.68") beside readings that name theirs.
func namedCoef(m Method, coef float64) string {
	return fmt.Sprintf("%s = %.2f", m.Label(), hundredths(coef))
}

// PText writes a p-value the one way every page and sentence does:
// "p < 0.001" below what three decimals show; "p < 0.050" just under the
// 5% line, where three decimals would round up to 0.050 beside a sentence
// calling it below (a permutation test's 50/1001); three decimals while
// the printed value is below 0.100, so values near the 5% line stay
// distinct; two from there on, where more digits only suggest false
// precision; "undefined" for NaN. Which precision is chosen on the value
// as printed, not the raw one: 0.0996 prints "p = 0.10", as 0.1 does (it
// printed "p = 0.100" beside "p = 0.10").
func PText(p float64) string {
	if math.IsNaN(p) {
		return "undefined"
	}
	// The value as three decimals print it (p*1000 rounded in floating
	// point can fall on the other side: 0.0995 prints 0.100, but
	// math.Round(0.0995*1000) is 99), rounded as coefficients are
	// (CoefDecimal: the exported 0.0445 prints 0.045, as its reader
	// rounds it, not 0.044 as its float, 0.04449999…, rounded).
	three := CoefDecimal(p, 3)
	printed, _ := strconv.ParseFloat(three, 64)
	switch {
	case p < 0.001:
		return "p < 0.001"
	case p < alpha && printed >= alpha:
		return "p < 0.050"
	case printed < 0.1:
		return "p = " + three
	default:
		return "p = " + CoefDecimal(p, 2)
	}
}

// PCell is PText for a table cell under a "p-value" heading: the same
// number by the same rule, without the "p = " the heading already says
// ("0.25", "0.049", "< 0.001", "< 0.050", "undefined"). Tables printed
// three decimals at every size ("0.250") beside sentences' "p = 0.25".
func PCell(p float64) string {
	s := PText(p)
	if t, ok := strings.CutPrefix(s, "p = "); ok {
		return t
	}
	return strings.TrimPrefix(s, "p ")
}

// hundredths rounds v to the two decimals the sentences print
// (CoefDecimal: 0.285 prints 0.29, as a reader of the exported 0.285
// rounds it), without a negative zero (a coefficient or bound just below
// 0 prints "0.00", not "-0.00"). NaN stays NaN.
func hundredths(v float64) float64 {
	return coefHundredths(v)
}

func missingNote(missing int) string {
	switch missing {
	case 0:
		return ""
	case 1:
		return "; 1 sample without both scores was left out"
	default:
		return fmt.Sprintf("; %d samples without both scores were left out", missing)
	}
}

// sentenceMinus is an ASCII hyphen that signs a number in a sentence: at
// the start or after a space or an opening parenthesis, before a digit.
// A hyphen inside a word ("Holm-adjusted", "leave-one-out") never matches.
var sentenceMinus = regexp.MustCompile(`(^|[\s(])-([0-9])`)

// TrueMinus gives each signed number of a reading sentence (Interpret's,
// InterpretCeiling's, e.g. "Weak disagreement (Pearson r = -0.21)") the
// true minus sign U+2212 that people read ("= −0.21"), as the pages and
// the webhook's text show it; the JSON export, the API and the command
// line keep the ASCII hyphen that programs read.
func TrueMinus(s string) string {
	return sentenceMinus.ReplaceAllString(s, "${1}\u2212${2}")
}
