package web

import (
	"bytes"
	"context"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/a-h/templ"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestCoefficientsRoundTheExportedDecimal: a coefficient, its interval
// bounds, a round's correlation and the human ceiling's figures are shown
// as a reader of the JSON export rounds the number it holds (its shortest
// decimal, half away from zero), on the run page and on the shared page
// and HTML report: the exported 0.1235 shows 0.124 and 0.0625 shows 0.063,
// where rounding the float (0.12349999999999999866…, and 0.0625 to even)
// showed 0.123 and 0.062; figures just off a half (0.12349999999999998,
// 0.4565 whose float lies above it) round as before.
func TestCoefficientsRoundTheExportedDecimal(t *testing.T) {
	below := math.Nextafter(0.1235, 0) // exported 0.12349999999999998
	c := report.CriterionReport{HasHuman: true,
		Pearson:  stats.Correlation{Coef: 0.1235, P: 0.2, CILow: -0.0625, CIHigh: 0.3455, N: 40},
		Spearman: stats.Correlation{Coef: below, P: 0.2, CILow: 0.0625, CIHigh: 0.4565, N: 40},
		Kendall:  stats.Correlation{Coef: -0.0625, P: 0.2, CILow: -0.2345, CIHigh: 0.1875, N: 40},
		Rounds:   []report.RoundStat{{Round: 1, Single: stats.Correlation{Coef: 0.6785, N: 40}, Ensemble: stats.Correlation{Coef: 0.7125, N: 40}}},
		Ceiling:  &report.Ceiling{Annotators: 3, Items: 40, Alpha: 0.8015, LeaveOneOut: 0.5125}}
	want := []string{">0.124<", ">0.123<", ">−0.063<", // the coefficients
		">−0.063 to +0.346<", ">+0.063 to +0.457<", ">−0.235 to +0.188<", // their intervals
		">0.679<", ">0.713<", // a round alone, the rounds so far
		">0.802<", ">0.513<"} // alpha, one human against the others
	wrong := []string{">0.1235<", ">−0.062<", "+0.345<", "+0.062 ", "−0.234 ", ">0.678<", ">0.801<", ">0.512<"}
	run := templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		for _, r := range []templ.Component{runCorrelationRow("Pearson r", c.Pearson), runCorrelationRow("Spearman ρ", c.Spearman),
			runCorrelationRow("Kendall τ-b", c.Kendall), roundsTable(c), runCeiling(c)} {
			if err := r.Render(ctx, w); err != nil {
				return err
			}
		}
		return nil
	})
	for _, tt := range []struct {
		name string
		page templ.Component
		want []string
	}{
		{"run page", run, want},
		// The shared page shows no rounds table.
		{"shared page and HTML report", ReportCriterion(models.Run{}, c, 0, models.SampledAnswers{}, nil), append(want[:6:6], want[8:]...)},
	} {
		var buf bytes.Buffer
		if err := tt.page.Render(context.Background(), &buf); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		page := buf.String()
		for _, w := range tt.want {
			if !strings.Contains(page, w) {
				t.Errorf("%s: no figure %q", tt.name, w)
			}
		}
		for _, w := range wrong {
			if strings.Contains(page, w) {
				t.Errorf("%s: figure %q is the float rounded, not the exported decimal", tt.name, w)
			}
		}
	}
	// The signed figures (a difference of coefficients and its bounds).
	for _, tc := range []struct {
		v    float64
		want string
	}{{0.1235, "+0.124"}, {-0.1235, "−0.124"}, {below, "+0.123"}, {-0.0625, "−0.063"}, {0.4565, "+0.457"}} {
		if got := SignedCoef(tc.v, 3); got != tc.want {
			t.Errorf("SignedCoef(%v, 3) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
