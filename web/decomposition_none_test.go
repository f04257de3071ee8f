package web

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/report"
)

// TestDecompositionWithoutSamplesSaysWhy: a criterion without human
// ratings showed "Error of the mean score — = average error of a single
// round — − spread between rounds — (over 0 samples)". Over no sample the
// page says why the decomposition is not computed instead; over some it
// keeps the formula.
func TestDecompositionWithoutSamplesSaysWhy(t *testing.T) {
	nan := stats.Decomposition{EnsembleErr: math.NaN(), MeanRoundErr: math.NaN(), MeanVariance: math.NaN()}
	for _, tc := range []struct {
		name    string
		c       report.CriterionReport
		want    string
		formula bool
	}{
		{"no human column", report.CriterionReport{Decomposition: nan, DecompositionNote: "Needs human ratings."}, "has no human rating column", false},
		{"no sample rated and scored", report.CriterionReport{HasHuman: true, Decomposition: nan}, "no sample has both a human rating and a score", false},
		{"rated samples", report.CriterionReport{HasHuman: true, Decomposition: stats.Decomposition{EnsembleErr: 0.5, MeanRoundErr: 0.75, MeanVariance: 0.25, N: 7}}, "over 7 samples", true},
		// A one-sample run read "(over 1 samples)", and a large one
		// "(over 1080 samples)" where every other count on the page
		// groups its thousands ("1,080").
		{"one rated sample", report.CriterionReport{HasHuman: true, Decomposition: stats.Decomposition{EnsembleErr: 0.49, MeanRoundErr: 0.5, MeanVariance: 0.01, N: 1}}, "over 1 sample)", true},
		{"thousands of rated samples", report.CriterionReport{HasHuman: true, Decomposition: stats.Decomposition{EnsembleErr: 0.5, MeanRoundErr: 0.75, MeanVariance: 0.25, N: 1080}}, "over 1,080 samples", true},
	} {
		var buf bytes.Buffer
		if err := decompositionLines(tc.c).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		page := buf.String()
		if !strings.Contains(page, tc.want) {
			t.Errorf("%s: the decomposition lacks %q:\n%s", tc.name, tc.want, page)
		}
		if got := strings.Contains(page, "Error of the mean score"); got != tc.formula {
			t.Errorf("%s: formula shown %v, want %v:\n%s", tc.name, got, tc.formula, page)
		}
		if strings.Contains(page, "over 0 samples") {
			t.Errorf("%s: the decomposition is written over 0 samples:\n%s", tc.name, page)
		}
	}
}
