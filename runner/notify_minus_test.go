package runner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestWebhookTextSignsAsPages: the webhook's text wrote a negative Pearson
// with an ASCII hyphen ("-0.062") where the run page writes "−0.062" (the
// true minus sign, web.Minus), and one just below zero as "-0.000", which
// the pages write 0.000. The text now writes coefficients as the pages do;
// the JSON's pearson stays the number.
func TestWebhookTextSignsAsPages(t *testing.T) {
	tests := []struct {
		name  string
		coef  float64
		text  string
		wrong string
	}{
		{"negative", -0.0615, "Coherent: Pearson \u22120.062.", "-0.062"},
		{"negative, rounded as the pages", -0.1235, "Coherent: Pearson \u22120.124.", "-0.124"},
		{"negative zero as printed", -0.0004, "Coherent: Pearson 0.000.", "\u22120.000"},
		{"positive", 0.5, "Coherent: Pearson 0.500.", "+0.500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Runner{buildReport: func(context.Context, *models.DB, int64, int64) (*report.Report, error) {
				return &report.Report{Criteria: []report.CriterionReport{{
					Criterion: evaluator.Criterion{Name: "Coherent"}, HasHuman: true, Pearson: stats.Correlation{Coef: tt.coef},
				}}}, nil
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
