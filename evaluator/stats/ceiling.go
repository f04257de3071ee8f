package stats

import (
	"fmt"
	"math"
)

// ceilingBand is the gap, in hundredths of correlation, within which the
// judge counts as "about as good as" a human. 0.05 is about the sampling
// noise of a correlation near 0.7 on a few hundred samples (its 95%
// interval is roughly ±0.05 there), so smaller gaps are not worth a
// different sentence.
const ceilingBand = 5

// InterpretCeiling compares, in one sentence for readers who are not
// statisticians, the judge's correlation with the average human rating
// against the human ceiling (LeaveOneOutCorrelation), e.g.
//
//	The judge agrees with the average human about as well as one human agrees with the others (0.71 vs 0.68).
//
// The two figures are compared as they are printed, rounded to two
// decimals, so the wording always matches the numbers the reader sees:
// a gap of at most 0.05 reads "about as well", a larger one "less well"
// or "better". Both figures must be computed with the same method. A NaN
// on either side gives a sentence saying why they cannot be compared.
func InterpretCeiling(judge, ceiling float64) string {
	switch jNaN, cNaN := !finite(judge), !finite(ceiling); {
	case jNaN && cNaN:
		return "The judge cannot be compared with the humans: neither the judge's agreement nor the agreement among humans could be measured."
	case jNaN:
		return fmt.Sprintf("The judge cannot be compared with the humans: its agreement could not be measured (humans agree with each other at %.2f).", hundredths(ceiling))
	case cNaN:
		return fmt.Sprintf("The judge cannot be compared with the humans: their agreement with each other could not be measured (it needs several ratings per sample; the judge's agreement is %.2f).", hundredths(judge))
	}
	j, c := math.Round(hundredths(judge)*100), math.Round(hundredths(ceiling)*100)
	how := "about as well as"
	switch {
	case j-c > ceilingBand:
		how = "better than"
	case c-j > ceilingBand:
		how = "less well than"
	}
	// Adding 0 turns a -0 (a coefficient just below zero) into 0, so the
	// sentence never shows "-0.00".
	return fmt.Sprintf("The judge agrees with the average human %s one human agrees with the others (%.2f vs %.2f).",
		how, j/100+0, c/100+0)
}

// InterpretCeilingWithAlpha is InterpretCeiling for a page that also shows
// the humans' Krippendorff's alpha over items rated by two or more. The
// correlation of one human with the others (ceiling) needs minPairs such
// items with varied ratings, alpha only one: with a handful of browser
// ratings alpha is a figure while the ceiling is not, and "their agreement
// could not be measured" beside it would contradict the page. The sentence
// then names alpha and says what the comparison still lacks.
func InterpretCeilingWithAlpha(judge, ceiling, alpha float64, items int) string {
	if finite(ceiling) || !finite(alpha) {
		return InterpretCeiling(judge, ceiling)
	}
	if !finite(judge) {
		return fmt.Sprintf("The judge cannot be compared with the humans: its agreement could not be measured (the humans agree with each other at Krippendorff's α %.2f).", hundredths(alpha))
	}
	return fmt.Sprintf("The judge cannot be compared with the humans yet: the humans agree with each other at Krippendorff's α %.2f over %d samples rated by two or more, but the figure set against the judge's (%.2f) is one human's correlation with the others, and that needs at least %d such samples with ratings that vary.",
		hundredths(alpha), items, hundredths(judge), minPairs)
}
