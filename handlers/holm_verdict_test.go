package handlers

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestVerdictHolmAdjustedByHand: the experiment page's "How the headline
// was decided" lines show each comparison's permutation p and its Holm
// adjustment over the rows compared, worked out by hand here (not with
// stats.Holm): sorted p times the number of hypotheses left, capped at 1,
// then made non-decreasing in sorted order; equal p-values get the same
// adjustment. The rows are ranked A (best) to E, so the best is compared
// with B, C, D and E in that order.
func TestVerdictHolmAdjustedByHand(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    [4]float64 // permutation p of A against B, C, D, E
		want [4]string  // Holm-adjusted, as the page writes it
		kind string
	}{
		// Sorted .005 .01 .03 .04 times 4 3 2 1: .02 .03 .06 .04 -> .02 .03 .06 .06.
		{"distinct", [4]float64{0.01, 0.04, 0.03, 0.005}, [4]string{"p = 0.030", "p = 0.060", "p = 0.060", "p = 0.020"}, "tied"},
		// .002 x4 = .008; the two .02 x3 = .06 and x2 = .04 -> .06 both; .5 x1.
		{"ties", [4]float64{0.02, 0.002, 0.02, 0.5}, [4]string{"p = 0.060", "p = 0.008", "p = 0.060", "p = 0.50"}, "tied"},
		// .3 x4 = 1.2 and .4 x3 = 1.2, capped at 1; .45 x2 = .9 and .9 x1
		// would fall below 1 and are raised to it.
		{"capped at 1", [4]float64{0.3, 0.4, 0.45, 0.9}, [4]string{"p = 1.00", "p = 1.00", "p = 1.00", "p = 1.00"}, "tied"},
		// Every row significantly behind the best: sorted .001 .002 .003
		// .004 times 4 3 2 1: .004 .006 .006 .004 -> .004 .006 .006 .006.
		{"all behind", [4]float64{0.001, 0.004, 0.002, 0.003}, [4]string{"p = 0.004", "p = 0.006", "p = 0.006", "p = 0.006"}, "better"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := []string{"A", "B", "C", "D", "E"}
			var figs []runFigures
			for i, n := range names {
				figs = append(figs, runFigures{run: models.Run{ID: int64(i + 1), Name: n, Status: models.RunSucceeded},
					rep: &report.Report{}, avgP: 0.9 - 0.1*float64(i)})
			}
			cs := rankContenders(figs, func(best, other runFigures) stats.AveragedDifference {
				return stats.AveragedDifference{Diff: best.avgP - other.avgP, P: tc.p[other.run.ID-2], A: best.avgP, B: other.avgP, CILow: 0.05, CIHigh: 0.15}
			})
			v := verdictOf(cs, nil)
			if len(v.Tests) != 4 {
				t.Fatalf("tests %q, want 4 lines", v.Tests)
			}
			for i, line := range v.Tests {
				if !strings.HasPrefix(line, "A − "+names[i+1]+":") || !strings.HasSuffix(line, "Holm-adjusted "+tc.want[i]+")") {
					t.Errorf("line %d = %q, want A − %s … Holm-adjusted %s", i, line, names[i+1], tc.want[i])
				}
			}
			if v.Kind != tc.kind {
				t.Errorf("verdict %s (%q), want %s", v.Kind, v.Text, tc.kind)
			}
		})
	}
}
