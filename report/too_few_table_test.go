package report

import (
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
)

// TestCorrelationTableSaysTooFewToTell: the command line's table printed
// "-0.813" on three samples with nothing beside it; a coefficient its
// samples cannot tell from chance gets the run page's reading under the
// table, and one they can does not.
func TestCorrelationTableSaysTooFewToTell(t *testing.T) {
	nan := math.NaN()
	few := stats.Correlation{Coef: -0.8125, P: 0.397, N: 3, CILow: nan, CIHigh: nan}
	many := stats.Correlation{Coef: 0.6, P: 0.0001, N: 80, CILow: nan, CIHigh: nan}
	r := &Report{Criteria: []CriterionReport{
		// Each with its reading, as Build and the stored summaries set
		// it: the table prints that sentence, the run page's.
		{Criterion: evaluator.Criterion{Name: "Few"}, HasHuman: true, Pearson: few, Spearman: few, Kendall: few, Scored: 3,
			Reading: stats.Interpret(stats.MethodPearson, few)},
		{Criterion: evaluator.Criterion{Name: "Many"}, HasHuman: true, Pearson: many, Spearman: many, Kendall: many, Scored: 80,
			Reading: stats.Interpret(stats.MethodPearson, many)},
	}}
	table := r.CorrelationTable()
	if want := "too few samples for Few: Too few samples to tell (3 samples; Pearson r = -0.81, p = 0.40)."; !strings.Contains(table, want) {
		t.Errorf("table lacks %q:\n%s", want, table)
	}
	if strings.Contains(table, "too few samples for Many") {
		t.Errorf("80 samples called too few:\n%s", table)
	}
}
