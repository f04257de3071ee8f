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

// TestExperimentRowsDoNotMarkRobustnessRunsBest: a noisy copy of a run
// (and a reworded one) was left out of the headline's ranking but its
// cells were still bold for ρ, average ρ and tokens when its figures were
// the best. The table now marks best only the rows the ranking counts.
func TestExperimentRowsDoNotMarkRobustnessRunsBest(t *testing.T) {
	nan := math.NaN()
	rep := func(p float64) *report.Report {
		return &report.Report{Criteria: []report.CriterionReport{{Criterion: evaluator.Criterion{Name: "Q"}, HasHuman: true,
			Pearson:  stats.Correlation{Coef: p, N: 30, P: nan, CILow: nan, CIHigh: nan},
			Spearman: stats.Correlation{Coef: p + 0.01, N: 30, P: nan, CILow: nan, CIHigh: nan}}}}
	}
	parent := int64(1)
	fig := func(id int64, variant string, p, tokens float64) runFigures {
		r := models.Run{ID: id, Name: variant, Status: models.RunSucceeded, Variant: variant}
		if variant != "" {
			r.ParentRunID = &parent
		}
		rr := rep(p)
		return runFigures{run: r, rep: rr, avgP: p, avgS: p + 0.01, tokens: tokens, calls: 10}
	}
	for _, variant := range []string{runner.VariantNoise, runner.VariantReworded, runner.VariantReseed} {
		figs := []runFigures{
			fig(1, "", 0.40, 1000),
			fig(2, "", 0.30, 900),
			// The robustness run has the best figures of every column.
			fig(3, variant, 0.60, 500),
		}
		rows := experimentRows(figs, 1)
		rob := rows[2]
		for name, c := range map[string]bool{"r": rob.Pearson[0].Best, "ρ": rob.Spearman[0].Best, "average r": rob.AvgPearson.Best,
			"average ρ": rob.AvgSpearman.Best, "tokens": rob.Tokens.Best} {
			if c {
				t.Errorf("%s: the robustness run's %s is marked best", variant, name)
			}
		}
		if !rows[0].AvgPearson.Best || !rows[0].Spearman[0].Best || !rows[0].AvgSpearman.Best || !rows[1].Tokens.Best {
			t.Errorf("%s: want run 1 best on agreement and run 2 on tokens; got %+v / %+v", variant, rows[0], rows[1])
		}
		// The same rows the ranking counts.
		for i, f := range figs {
			if isContender(f) != (i < 2) {
				t.Errorf("%s: row %d contender = %v", variant, i, isContender(f))
			}
		}
	}
}
