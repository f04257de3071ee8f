package runner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestWebhookTextSignsAsPages: the webhook's text wrote a negative Pearson
// with an ASCII hyphen ("-0.062") where the run page writes "−0.062" (the
// true minus sign, web.Minus), and one just below zero as "-0.000", which
// the pages write 0.000. The text, now the page's reading, signs its
// numbers as the page does (stats.TrueMinus); the JSON's pearson stays
// the number.
func TestWebhookTextSignsAsPages(t *testing.T) {
	tests := []struct {
		name         string
		coef, lo, hi float64
		text         string
		wrong        string
	}{
		{"negative", -0.2115, -0.3151, -0.1049, "Coherent: Weak disagreement (Pearson r = \u22120.21) over 300 samples, 95% interval \u22120.32 to \u22120.10.", "-0."},
		{"negative, rounded as the pages", -0.125, -0.2351, -0.0149, "Coherent: Weak disagreement (Pearson r = \u22120.13) over 300 samples, 95% interval \u22120.24 to \u22120.01.", "-0."},
		{"negative zero as printed", -0.0004, -0.1131, 0.1129, "Coherent: Negligible agreement (Pearson r = 0.00) over 300 samples, 95% interval \u22120.11 to 0.11.", "\u22120.00"},
		{"positive", 0.5, 0.41, 0.58, "Coherent: Strong agreement (Pearson r = 0.50) over 300 samples, 95% interval 0.41 to 0.58.", "+0.5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Runner{buildReport: func(context.Context, *models.DB, int64, int64) (*report.Report, error) {
				return readingReport(stats.Correlation{Coef: tt.coef, P: 0.0002, N: 300, CILow: tt.lo, CIHigh: tt.hi}), nil
			}}
			run := models.Run{ID: 7, Name: "Signs", Method: models.MethodBatchEval, Status: models.RunSucceeded, BatchesDone: 1}
			m := r.runMessage(context.Background(), run, "https://eval.example.test")
			if !strings.Contains(m.Text, tt.text) || strings.Contains(m.Text, tt.wrong) {
				t.Errorf("text %q: want %q, not %q", m.Text, tt.text, tt.wrong)
			}
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			var back struct {
				Run struct {
					Criteria []struct {
						Pearson *float64 `json:"pearson"`
					} `json:"criteria"`
				} `json:"run"`
			}
			if err := json.Unmarshal(b, &back); err != nil || len(back.Run.Criteria) != 1 || back.Run.Criteria[0].Pearson == nil || *back.Run.Criteria[0].Pearson != tt.coef {
				t.Errorf("JSON pearson: %s (%v), want the number %v", b, err, tt.coef)
			}
		})
	}
}
