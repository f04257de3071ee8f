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

// TestWebhookTextSaysTooFewToTell: a bare "Pearson −0.812" on three
// samples reads as a verdict in a chat channel; the text says the samples
// are too few to tell (stats.TooFewToTell), and only then.
func TestWebhookTextSaysTooFewToTell(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		c    stats.Correlation
		want string
	}{
		{"three samples", stats.Correlation{Coef: -0.8125, P: 0.397, N: 3, CILow: nan, CIHigh: nan},
			"Coherent: Pearson \u22120.813 over 3 samples, too few to tell."},
		{"moderate, not different from chance", stats.Correlation{Coef: 0.45, P: 0.14, N: 12, CILow: nan, CIHigh: nan},
			"Coherent: Pearson 0.450 over 12 samples, too few to tell."},
		{"enough samples", stats.Correlation{Coef: 0.45, P: 0.001, N: 60, CILow: nan, CIHigh: nan},
			"Coherent: Pearson 0.450."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Runner{buildReport: func(context.Context, *models.DB, int64, int64) (*report.Report, error) {
				return &report.Report{Criteria: []report.CriterionReport{{
					Criterion: evaluator.Criterion{Name: "Coherent"}, HasHuman: true, Pearson: tt.c,
				}}}, nil
			}}
			run := models.Run{ID: 7, Name: "Few", Method: models.MethodBatchEval, Status: models.RunSucceeded, BatchesDone: 1}
			if m := r.runMessage(context.Background(), run, ""); !strings.Contains(m.Text, tt.want) {
				t.Errorf("text %q, want %q in it", m.Text, tt.want)
			}
		})
	}
}
