package handlers

import (
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestTiedHeadlineSaysWhatIsTrueOfUntestedRows: a row whose paired test
// against the best could not be computed (p missing: no criterion with
// both runs' Pearson r on the samples both scored) was listed among the
// "statistically tied" with "Holm-adjusted p ≥ 0.05", a p it does not
// have. The headline now says that its test is undefined, and keeps the
// chance wording for the rows whose test was computed.
func TestTiedHeadlineSaysWhatIsTrueOfUntestedRows(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name     string
		p        map[string]float64 // permutation p of A against each other row; NaN: undefined
		say, not []string
	}{
		{"every test computed", map[string]float64{"B": 0.3, "C": 0.6},
			[]string{"A (0.41), B (0.40) and C (0.39) are statistically tied", "(Holm-adjusted p ≥ 0.05)"},
			[]string{"undefined"}},
		{"one test undefined", map[string]float64{"B": 0.3, "C": nan},
			[]string{"no run can be named best among A (0.41), B (0.40) and C (0.39)", "against B, the difference is within what chance gives on these samples (Holm-adjusted p ≥ 0.05)",
				"the paired test of A against C is undefined", "so that difference was not tested"},
			[]string{"statistically tied", "B and C", "differences are within"}},
		{"every test undefined", map[string]float64{"B": nan, "C": nan},
			[]string{"no run can be named best among A (0.41), B (0.40) and C (0.39)", "the paired test of A against B and C is undefined", "those differences were not tested"},
			[]string{"statistically tied", "p ≥ 0.05", "within what chance gives"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var figs []runFigures
			for i, n := range []string{"A", "B", "C"} {
				figs = append(figs, runFigures{run: models.Run{ID: int64(i + 1), Name: n, Status: models.RunSucceeded},
					rep: &report.Report{}, avgP: 0.41 - 0.01*float64(i)})
			}
			cs := rankContenders(figs, func(best, other runFigures) stats.AveragedDifference {
				p := tc.p[other.run.Name]
				if math.IsNaN(p) {
					return stats.AveragedDifference{A: nan, B: nan, Diff: nan, CILow: nan, CIHigh: nan, P: nan}
				}
				return stats.AveragedDifference{A: best.avgP, B: other.avgP, Diff: best.avgP - other.avgP, CILow: -0.05, CIHigh: 0.07, P: p, Criteria: 2}
			})
			v := verdictOf(cs, nil)
			if v.Kind != "tied" {
				t.Errorf("verdict %s, want tied: %q", v.Kind, v.Text)
			}
			for _, s := range tc.say {
				if !strings.Contains(v.Text, s) {
					t.Errorf("headline %q\nshould say %q", v.Text, s)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(v.Text, s) {
					t.Errorf("headline %q\nshould not say %q", v.Text, s)
				}
			}
		})
	}
}
