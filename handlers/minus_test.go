package handlers

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// TestPageTextUsesTheTrueMinus: the numbers handlers write into page text
// (the experiment table's hover intervals, the verdict, scales, the
// alignment's worst cases) carry the true minus sign, as the pages' own
// formatters do (web.Minus); they wrote "-0.122 to 0.496".
func TestPageTextUsesTheTrueMinus(t *testing.T) {
	alone := verdictOf([]contender{{fig: runFigures{run: models.Run{Name: "A"}, avgP: -0.25}}}, nil)
	bands := verdictOf(nil, []repeatBand{{parent: models.Run{Name: "A"}, runs: 3, min: -0.3, max: -0.1}})
	for _, tt := range []struct{ name, got, want string }{
		{"hover interval", ciTitle(stats.Correlation{CILow: -0.122, CIHigh: 0.496, N: 30}), "95% interval −0.122 to 0.496 over 30 samples"},
		{"table figure", fmtNum(-0.5, 3), "−0.500"},
		{"count", runCount(-1234), "−1,234"},
		{"scale", scaleText(evaluator.Criterion{Lo: -2, Hi: 2}), "−2 to 2"},
		{"alignment score", formatScore(-1.234), "−1.23"},
		{"verdict", alone.Text, "A (average Pearson −0.25) is the only finished run"},
		{"seed band", strings.Join(bands.Bands, ""), "average Pearson −0.300 to −0.100 (spread 0.200)"},
	} {
		if !strings.Contains(tt.got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
