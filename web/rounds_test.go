package web

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestRoundsTableMarksMissingValuesOneWay: the rounds table (run page and
// shared report) wrote a round's missing correlation as "—" in some rows
// and "undefined" in others; every missing value is now "—" with its
// reason in a title and in text for screen readers.
func TestRoundsTableMarksMissingValuesOneWay(t *testing.T) {
	nan := math.NaN()
	rounds := []report.RoundStat{
		{Round: 1, Single: stats.Correlation{Coef: nan, N: 10}, Ensemble: stats.Correlation{Coef: 0.5, N: 10}, BatchBias: 0.1},
		{Round: 2, Single: stats.Correlation{Coef: nan, N: 2}, Ensemble: stats.Correlation{Coef: -0.25, N: 10}, BatchBias: 0.1},
	}
	constant := "every sample the same score"
	tooFew := "fewer than 3 samples"
	noHuman := "no human ratings"
	run := models.Run{Method: string(evaluator.MethodBatchEval), Settings: evaluator.DefaultSettings()}
	render := func(c templ.Component) string {
		t.Helper()
		var buf bytes.Buffer
		if err := c.Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	for _, tc := range []struct {
		name     string
		hasHuman bool
		want     []string
	}{
		{"with human ratings", true, []string{constant, tooFew, ">0.500<"}},
		{"without human ratings", false, []string{noHuman}},
	} {
		c := report.CriterionReport{HasHuman: tc.hasHuman, Rounds: rounds}
		if !tc.hasHuman {
			for i := range c.Rounds {
				c.Rounds[i].Single.Coef, c.Rounds[i].Ensemble.Coef = nan, nan
			}
		}
		for page, html := range map[string]string{"run page": render(runRounds(c)), "shared report": render(ReportCriterion(run, c, 0, models.SampledAnswers{}, nil))} {
			i := strings.Index(html, `data-testid="rounds"`)
			if i < 0 {
				t.Fatalf("%s, %s: no rounds table", page, tc.name)
			}
			table := html[i : i+strings.Index(html[i:], "</table>")]
			if strings.Contains(table, "undefined") {
				t.Errorf("%s, %s: the rounds table says \"undefined\" beside \"—\":\n%s", page, tc.name, table)
			}
			for _, w := range tc.want {
				if !strings.Contains(table, w) {
					t.Errorf("%s, %s: the rounds table lacks %q:\n%s", page, tc.name, w, table)
				}
			}
			if n := strings.Count(table, "—"); n != strings.Count(table, `class="sr-only"> (`) {
				// The space inside the span: templ drops one before it,
				// and a screen reader read "—(reason)".
				t.Errorf("%s, %s: %d dashes but %d reasons set apart by a space:\n%s", page, tc.name, n, strings.Count(table, `class="sr-only"> (`), table)
			}
		}
	}
}
