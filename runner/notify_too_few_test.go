package runner

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// readingReport is the report of one criterion, Coherent, with human
// ratings and Pearson c, its reading as report.Build writes it.
func readingReport(c stats.Correlation) *report.Report {
	return &report.Report{Criteria: []report.CriterionReport{{
		Criterion: evaluator.Criterion{Name: "Coherent"}, HasHuman: true, Pearson: c,
		Reading: stats.Interpret(stats.MethodPearson, c),
	}}}
}

// pageReadings are the run page's readings of run's criteria with human
// ratings (the stored summary's, which the page shows), as the webhook's
// text must carry them: "Name: sentence", numbers signed as the page signs
// them, Slack's markup escaped.
func pageReadings(t *testing.T, env *testEnv, run models.Run) []string {
	t.Helper()
	rep, err := report.LoadSummary(context.Background(), env.db, run.WorkspaceID, run.ID, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range rep.Criteria {
		if c.HasHuman {
			out = append(out, " "+slackText(c.Criterion.Name)+": "+slackText(stats.TrueMinus(c.Reading)))
		}
	}
	if len(out) == 0 {
		t.Fatal("no criterion with human ratings: nothing to compare")
	}
	return out
}

// TestWebhookTextReadsAsTheRunPage: the webhook's text gave a criterion's
// agreement in its own short words ("Coherent: Pearson 0.450." and
// "Coherent: Pearson −0.813 over 3 samples, too few to tell."), where the
// run page reads it in a sentence (stats.Interpret) that names the
// coefficient, the samples and the caveats. It now gives the page's
// sentence, numbers signed as the page signs them and Slack's markup
// escaped ("p < 0.001" as "p &lt; 0.001"); a criterion whose agreement
// cannot be measured says why, where the text said nothing.
func TestWebhookTextReadsAsTheRunPage(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		c    stats.Correlation
		want string
		old  string
	}{
		{"three samples", stats.Correlation{Coef: -0.8125, P: 0.397, N: 3, CILow: nan, CIHigh: nan},
			"Coherent: Too few samples to tell (3 samples; Pearson r = \u22120.81, p = 0.40).", "over 3 samples, too few to tell"},
		{"moderate, not different from chance", stats.Correlation{Coef: 0.45, P: 0.14, N: 12, CILow: nan, CIHigh: nan},
			"Coherent: Too few samples to tell (12 samples; Pearson r = 0.45, p = 0.14).", "Pearson 0.450"},
		{"enough samples", stats.Correlation{Coef: 0.45, P: 0.0001, N: 60, CILow: 0.30, CIHigh: 0.58},
			"Coherent: Moderate agreement (Pearson r = 0.45) over 60 samples, 95% interval 0.30 to 0.58.", "Pearson 0.450"},
		{"wide interval", stats.Correlation{Coef: 0.62, P: 0.00002, N: 40, CILow: 0.38, CIHigh: 0.78},
			"Coherent: Strong agreement (Pearson r = 0.62), but with 40 samples the 95% interval is wide: 0.38 to 0.78.", "Pearson 0.620"},
		{"no interval, markup escaped", stats.Correlation{Coef: -0.5, P: 1e-9, N: 200, CILow: nan, CIHigh: nan},
			"Coherent: Strong disagreement (Pearson r = \u22120.50) over 200 samples, unlikely to be chance (p &lt; 0.001).", "p < 0.001"},
		{"cannot be measured", stats.Correlation{Coef: nan, P: nan, N: 40, CILow: nan, CIHigh: nan},
			"Coherent: Agreement cannot be measured: one side gave the same score to all 40 samples.", "Pearson"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Runner{buildReport: func(context.Context, *models.DB, int64, int64) (*report.Report, error) {
				return readingReport(tt.c), nil
			}}
			run := models.Run{ID: 7, Name: "Few", Method: models.MethodBatchEval, Status: models.RunSucceeded, BatchesDone: 1}
			m := r.runMessage(context.Background(), run, "")
			if !strings.Contains(m.Text, tt.want) || strings.Contains(m.Text, tt.old) {
				t.Errorf("text %q, want %q in it and not %q", m.Text, tt.want, tt.old)
			}
		})
	}
}
