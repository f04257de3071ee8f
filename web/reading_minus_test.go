package web

import (
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestReadingSentencesUseTheTrueMinus: the reading sentences (built in
// stats, kept with an ASCII hyphen for the JSON export and the API) showed
// "Weak disagreement (Pearson r = -0.21)" on the run page and the report,
// beside a table that writes "−0.210". A hyphen inside a word stays.
func TestReadingSentencesUseTheTrueMinus(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Weak disagreement (Pearson r = -0.21), likely not different from chance (p = 0.09).", "Weak disagreement (Pearson r = −0.21), likely not different from chance (p = 0.09)."},
		{"Weak agreement (Pearson r = 0.20), but with 40 samples the 95% interval is wide: -0.12 to 0.48.", "Weak agreement (Pearson r = 0.20), but with 40 samples the 95% interval is wide: −0.12 to 0.48."},
		{"-0.5 at the start; Holm-adjusted, leave-one-out, 1-5", "−0.5 at the start; Holm-adjusted, leave-one-out, 1-5"},
	} {
		if got := ReadingText(tt.in); got != tt.want {
			t.Errorf("ReadingText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}

	pearson := stats.Correlation{Coef: -0.214, P: 0.09, N: 64, CILow: math.NaN(), CIHigh: math.NaN()}
	c := report.CriterionReport{Criterion: evaluator.Criterion{Name: "Coherent", Lo: 1, Hi: 3}, HasHuman: true,
		Pearson: pearson, Spearman: pearson, Kendall: pearson, Reading: stats.Interpret(stats.MethodPearson, pearson)}
	html := renderString(t, ReportCriterion(models.Run{ID: 1, Method: models.MethodBatchEval}, c, 0, models.SampledAnswers{}, nil))
	if !strings.Contains(html, "Weak disagreement (Pearson r = −0.21)") {
		t.Errorf("report criterion lacks the reading with a true minus:\n%.2000s", html)
	}
	if strings.Contains(html, "= -0.21)") {
		t.Errorf("report criterion shows the reading with an ASCII minus")
	}
}
