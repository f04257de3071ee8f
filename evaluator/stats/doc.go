// Package stats holds the meta-evaluation arithmetic: how far a judge's
// scores agree with human ratings (Pearson, Spearman, Kendall with p-values
// and bootstrap intervals), how its scores are spread (histogram, entropy),
// how much a batch pulls scores away from their mean (batch bias), and the
// ensemble error decomposition of the BatchEval paper. Around those:
// correlation within groups (per source document or dialogue context), the
// human ceiling (Krippendorff's alpha and leave-one-annotator-out
// correlation) to compare the judge with, the effect of a sample's
// position inside its batch, the spread of a figure over repeated runs,
// and linear rescaling between score ranges. paired.go compares two judges
// on the same samples: the difference of their correlations with the
// humans, its 95% interval and paired tests, and Holm's correction when
// several such differences are read together.
//
// Conventions, applied everywhere in the package:
//   - An undefined figure is NaN, never 0: a 0 would read as "no agreement"
//     when the truth is "cannot be measured" (too few pairs, a constant
//     series, an empty input).
//   - Non-finite values (NaN, ±Inf) count as missing and are left out, so a
//     caller can mark a failed judge answer with math.NaN().
//   - Scores that differ by less than 1e-9 (relative) are the same score
//     (rounding noise of sums), and every figure depends only on the
//     multiset of inputs: the same values in another order give the same
//     bits, and resampling is seeded.
//   - Slices given together must have the same length; a mismatch is a
//     programming error and panics, because silently truncating would
//     pair the wrong samples.
//
// The package is plain computation: no I/O, no HTTP, no storage.
package stats
