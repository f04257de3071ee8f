package handlers

import (
	"math"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
)

// TestRobustnessLineAveragesTheParentOverTheSameCriteria: the experiment
// table's robustness line set a variant's average Pearson (over the
// criteria every compared run has, see average_note) against its
// parent's own average over all the parent's criteria, so a criterion
// the variant lacks read as a loss or gain ("noise: ±0.000" for a run
// 0.1 worse on both criteria it shares with its parent). Both are now
// averaged over the same criteria, and the line names those left out.
func TestRobustnessLineAveragesTheParentOverTheSameCriteria(t *testing.T) {
	nan := math.NaN()
	names := []string{"Coherence", "Likeable", "Overall"}
	rep := func(order []string, pearson ...float64) *report.Report {
		r := &report.Report{}
		for k, p := range pearson {
			r.Criteria = append(r.Criteria, report.CriterionReport{Criterion: evaluator.Criterion{Name: order[k]}, HasHuman: true,
				Pearson: stats.Correlation{Coef: p, N: 30, P: nan, CILow: nan, CIHigh: nan}})
		}
		return r
	}
	parentID := int64(7)
	variant := func(kind string, r *report.Report) runFigures {
		return runFigures{run: models.Run{ID: 8, Name: kind, Status: models.RunSucceeded, ParentRunID: &parentID, Variant: kind}, rep: r, avgP: averagePearson(r)}
	}
	parent := rep(names, 0.6, 0.2, 0.4)
	const leftOut = "both averaged over Coherence and Overall, leaving out Likeable, which not every run compared has a Pearson r for"
	for _, tt := range []struct {
		name   string
		f      runFigures
		parent *report.Report
		kept   []int
		want   string
	}{
		{"table averages over the shared criteria", variant(runner.VariantNoise, rep(names, 0.5, nan, 0.3)), parent, []int{0, 2},
			"noise: −0.100 vs run 7 (" + leftOut + ")"},
		{"no table list: the criteria both runs have", variant(runner.VariantNoise, rep(names, 0.5, nan, 0.3)), parent, nil,
			"noise: −0.100 vs run 7 (" + leftOut + ")"},
		{"the parent lacks a criterion", variant(runner.VariantReworded, rep(names, 0.5, 0.1, 0.3)), rep(names, 0.6, nan, 0.4), nil,
			"reworded: −0.100 vs run 7 (" + leftOut + ")"},
		{"reseed", variant(runner.VariantReseed, rep(names, 0.5, nan, 0.3)), parent, []int{0, 2},
			"reseed of run 7: average Pearson 0.400 (the run itself: 0.500; " + leftOut + ")"},
		{"every criterion shared: no note", variant(runner.VariantNoise, rep(names, 0.5, 0.3, 0.3)), parent, []int{0, 1, 2},
			"noise: −0.033 vs run 7"},
		{"parent's criteria in another order", variant(runner.VariantNoise, rep(names, 0.5, 0.2, 0.3)), rep([]string{"Overall", "Coherence", "Likeable"}, 0.4, 0.6, 0.2), []int{0, 2},
			"noise: −0.100 vs run 7 (" + leftOut + ")"},
		{"parent unreadable", variant(runner.VariantNoise, rep(names, 0.5, 0.2, 0.3)), nil, nil,
			"noise: no comparison with run 7 (the figures of run 7 cannot be read)"},
		{"nothing shared", variant(runner.VariantNoise, rep(names, nan, 0.2, nan)), rep(names, 0.6, nan, 0.4), nil,
			"noise: no comparison with run 7 (no criterion has a Pearson r for both this run and run 7)"},
	} {
		if got := robustnessLine(tt.f, tt.parent, tt.kept, names); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
