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
// against the human ceiling (LeaveOneOutCorrelation), both coefficients of
// kind m, e.g.
//
//	The judge agrees with the average human about as well as one human agrees with the others (Pearson r = 0.71 vs 0.68).
//
// The coefficient is named as Interpret names it (namedCoef): the reading
// printed "(0.71 vs 0.68)" beside readings that say "Pearson r = 0.71",
// and a reader could not tell which coefficient the two figures were.
// The two figures are compared as they are printed, rounded to two
// decimals, so the wording always matches the numbers the reader sees:
// a gap of at most 0.05 reads "about as well", a larger one "less well"
// or "better". A NaN on either side gives a sentence saying why they
// cannot be compared.
func InterpretCeiling(m Method, judge, ceiling float64) string {
	switch jNaN, cNaN := !finite(judge), !finite(ceiling); {
	case jNaN && cNaN:
		return "The judge cannot be compared with the humans: neither the judge's agreement nor the agreement among humans could be measured."
	case jNaN:
		return fmt.Sprintf("The judge cannot be compared with the humans: its agreement could not be measured (humans agree with each other at %s).", namedCoef(m, ceiling))
	case cNaN:
		return fmt.Sprintf("The judge cannot be compared with the humans: their agreement with each other could not be measured (it needs several ratings per sample; the judge's agreement is %s).", namedCoef(m, judge))
	}
	j, c := math.Round(hundredths(judge)*100), math.Round(hundredths(ceiling)*100)
	how := "about as well as"
	switch {
	case j-c > ceilingBand:
		how = "better than"
	case c-j > ceilingBand:
		how = "less well than"
	}
	// The second figure is of the same kind, named once; adding 0 turns
	// a -0 (a coefficient just below zero) into 0, so it never shows
	// "-0.00" (namedCoef sees to the first).
	return fmt.Sprintf("The judge agrees with the average human %s one human agrees with the others (%s vs %.2f).",
		how, namedCoef(m, judge), c/100+0)
}

// InterpretCeilingWithAlpha is InterpretCeiling for a page that also shows
// the humans' Krippendorff's alpha over items rated by two or more. The
// correlation of one human with the others (ceiling) needs minPairs such
// items with varied ratings, alpha only one: with a handful of browser
// ratings alpha is a figure while the ceiling is not, and "their agreement
// could not be measured" beside it would contradict the page. The sentence
// then names alpha and says what the comparison still lacks.
func InterpretCeilingWithAlpha(m Method, judge, ceiling, alpha float64, items int) string {
	if finite(ceiling) || !finite(alpha) {
		return InterpretCeiling(m, judge, ceiling)
	}
	if !finite(judge) {
		return fmt.Sprintf("The judge cannot be compared with the humans: its agreement could not be measured (the humans agree with each other at Krippendorff's α = %.2f).", hundredths(alpha))
	}
	return fmt.Sprintf("The judge cannot be compared with the humans yet: the humans agree with each other at Krippendorff's α = %.2f over %d samples rated by two or more, but the figure set against the judge's (%s) is one human's correlation with the others, and that needs at least %d such samples with ratings that vary.",
		hundredths(alpha), items, namedCoef(m, judge), minPairs)
}
