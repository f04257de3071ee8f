package web

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestPValueCellsFollowTheReadingsRule: the p-value columns of the run
// page's agreement and system-level tables, and of the shared page's and
// HTML report's (ReportCriterion), print a p as the sentences beside them
// do (stats.PText without its "p = "): two decimals from 0.10 on, three
// below, "< 0.050" just under the 5% line. They printed three decimals at
// every size ("0.250" beside a reading's "p = 0.25").
func TestPValueCellsFollowTheReadingsRule(t *testing.T) {
	pearson, spearman, kendall, system := 0.25, 0.0494, 50.0/1001, 0.5
	want := []string{">0.25</td>", ">0.049</td>", ">&lt; 0.050</td>", ">0.50</td>"}
	wrong := []string{">0.250</td>", ">0.500</td>", ">0.050</td>"}
	corr := func(p float64) stats.Correlation {
		return stats.Correlation{Coef: 0.4, P: p, CILow: 0.1, CIHigh: 0.6, N: 30}
	}
	c := report.CriterionReport{HasHuman: true, Pearson: corr(pearson), Spearman: corr(spearman), Kendall: corr(kendall),
		SystemColumn: "system", System: map[stats.Method]stats.SystemLevel{}}
	for _, m := range stats.Methods() {
		c.System[m] = stats.SystemLevel{Coef: 0.8, P: system, CILow: 0.2, CIHigh: 0.9, Systems: 4}
	}
	rows := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		for _, r := range []templ.Component{runCorrelationRow("Pearson r", c.Pearson), runCorrelationRow("Spearman ρ", c.Spearman), runCorrelationRow("Kendall τ-b", c.Kendall), runSystem(RunView{}, c)} {
			if err := r.Render(ctx, w); err != nil {
				return err
			}
		}
		return nil
	})
	for _, tt := range []struct {
		name string
		page templ.Component
	}{
		{"run page", rows},
		{"shared page and HTML report", ReportCriterion(models.Run{}, c, 0, models.SampledAnswers{}, nil)},
	} {
		var buf bytes.Buffer
		if err := tt.page.Render(context.Background(), &buf); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		page := buf.String()
		for _, w := range want {
			if !strings.Contains(page, w) {
				t.Errorf("%s: no p-value cell %q", tt.name, w)
			}
		}
		for _, w := range wrong {
			if strings.Contains(page, w) {
				t.Errorf("%s: p-value cell %q has three decimals above 0.10 or rounds a p below 0.05 up to 0.050", tt.name, w)
			}
		}
	}
}

// TestPCellIsPTextWithoutItsPrefix: a table cell and a sentence print
// the same p the same way.
func TestPCellIsPTextWithoutItsPrefix(t *testing.T) {
	for _, p := range []float64{0.0004, 0.001, 0.0494, 50.0 / 1001, 0.05, 0.0995, 0.25, 1} {
		if got, text := runPUndefined(p), stats.PText(p); !strings.HasSuffix(text, got) || !strings.HasPrefix(text, "p ") {
			t.Errorf("cell %q for p = %g, sentence %q", got, p, text)
		}
	}
}
