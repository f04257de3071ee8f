package stats

import (
	"fmt"
	"math"
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

// Interpret turns c into one plain sentence for readers who are not
// statisticians, e.g.
//
//	Strong agreement (0.62), but with 40 samples the 95% interval is wide: 0.38 to 0.78.
//	Weak agreement (0.16), likely not different from chance (p = 0.31).
//	Too few samples to say (n = 2).
//
// A negative coefficient is called disagreement: the judge tends to rank
// high what humans rank low.
func Interpret(c Correlation) string {
	if c.N < minPairs {
		return fmt.Sprintf("Too few samples to say (n = %d)%s.", c.N, missingNote(c.Missing))
	}
	if math.IsNaN(c.Coef) {
		return fmt.Sprintf("Agreement cannot be measured: one side gave the same score to all %d samples%s.",
			c.N, missingNote(c.Missing))
	}
	head := headline(c.Coef)
	switch {
	case !math.IsNaN(c.P) && c.P >= alpha:
		return fmt.Sprintf("%s, likely not different from chance (%s)%s.", head, formatP(c.P), missingNote(c.Missing))
	case !math.IsNaN(c.CILow) && !math.IsNaN(c.CIHigh) && c.CIHigh-c.CILow > wideInterval:
		return fmt.Sprintf("%s, but with %d samples the 95%% interval is wide: %.2f to %.2f%s.",
			head, c.N, c.CILow, c.CIHigh, missingNote(c.Missing))
	case !math.IsNaN(c.CILow) && !math.IsNaN(c.CIHigh):
		return fmt.Sprintf("%s over %d samples, 95%% interval %.2f to %.2f%s.",
			head, c.N, c.CILow, c.CIHigh, missingNote(c.Missing))
	case !math.IsNaN(c.P):
		return fmt.Sprintf("%s over %d samples, unlikely to be chance (%s)%s.", head, c.N, formatP(c.P), missingNote(c.Missing))
	default:
		return fmt.Sprintf("%s over %d samples%s.", head, c.N, missingNote(c.Missing))
	}
}

// headline is "Strong agreement (0.74)", "Weak disagreement (-0.21)" or
// "Negligible agreement (0.03)".
func headline(coef float64) string {
	s := Strength(coef)
	noun := "agreement"
	// A negligible coefficient has no meaningful direction, so it is not
	// called disagreement however its sign falls.
	if coef < 0 && s != "negligible" {
		noun = "disagreement"
	}
	return fmt.Sprintf("%c%s %s (%.2f)", s[0]-'a'+'A', s[1:], noun, coef)
}

// formatP prints a p-value with the precision a reader needs: two decimals
// normally, three below 0.1 so values near the 5% line stay distinct, and a
// floor below 0.001 where more digits only suggest false precision.
func formatP(p float64) string {
	switch {
	case p < 0.001:
		return "p < 0.001"
	case p < 0.1:
		return fmt.Sprintf("p = %.3f", p)
	default:
		return fmt.Sprintf("p = %.2f", p)
	}
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
