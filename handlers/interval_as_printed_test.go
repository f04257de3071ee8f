package handlers

import (
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestIntervalReadAsPrinted: the compare page's reading and the experiment
// verdict decide whether the 95% interval of a difference includes 0 "as
// printed", but rounded the bound themselves (math.Round(x·1000)/1000),
// which can differ from the page's printing in the last place: the
// sentence then said the interval "+0.001 to +0.300" still includes no
// difference, or that the data cannot tell the runs apart beside an
// interval clear of 0. A bound is now read as it is printed
// (web.IntervalBound), whichever way a bound at the edge goes: one just
// above 0.0005 is shown +0.001 and read as clear of 0, one just below is
// shown +0.0005 and read so too, and one that is 0 to six decimals is
// shown 0.000 and read as touching it.
func TestIntervalReadAsPrinted(t *testing.T) {
	justAbove := math.Nextafter(0.0005, 1) // shown +0.001
	if got := web.SignedCoef(justAbove, 3); got != "+0.001" {
		t.Fatalf("web.SignedCoef(%v, 3) = %q, want +0.001", justAbove, got)
	}
	justBelow := math.Nextafter(0.0005, 0) // shown ±0.000
	if got := web.SignedCoef(justBelow, 3); got != "±0.000" {
		t.Fatalf("web.SignedCoef(%v, 3) = %q, want ±0.000", justBelow, got)
	}
	pearson := func(diff, lo, hi, p float64) stats.Difference {
		return stats.Difference{Method: stats.MethodPearson, A: 0.5 + diff/2, B: 0.5 - diff/2, Diff: diff, CILow: lo, CIHigh: hi,
			Tests: []stats.PairedTest{{Name: "Williams' t", P: p}}}
	}
	for _, tt := range []struct {
		name     string
		d        stats.Difference
		say, not string
	}{
		{"A ahead, low bound shown +0.001", pearson(0.15, justAbove, 0.3, 0.01),
			"Run A agrees better with the humans than Run B: A − B in Pearson r is +0.150 (95% interval +0.001 to +0.300, p = 0.010).", "includes no difference"},
		{"B ahead, high bound shown −0.001", pearson(-0.15, -0.3, -justAbove, 0.01),
			"Run B agrees better with the humans than Run A: A − B in Pearson r is −0.150 (95% interval −0.300 to −0.001, p = 0.010).", "includes no difference"},
		{"p above 5%, interval shown clear of 0", pearson(0.15, justAbove, 0.3, 0.2),
			"lies entirely on one side of 0", "cannot tell"},
		// A bound below 0.0005 shows the decimals its side needs
		// (web.IntervalBound, figs47): it was "±0.000" and read as 0.
		{"A ahead, low bound shown +0.0005", pearson(0.15, justBelow, 0.3, 0.01),
			"Run A agrees better with the humans than Run B: A − B in Pearson r is +0.150 (95% interval +0.0005 to +0.300, p = 0.010).", "includes no difference"},
		{"A ahead, low bound 0 up to float noise, shown 0.000", pearson(0.15, 1e-17, 0.3, 0.01),
			"still includes no difference", "(95% interval"},
		// Figures half-way at the third decimal as exported (0.1235, whose
		// float lies just below; 0.0625, exactly): shown as a reader of
		// the export rounds them, half away from zero, not +0.123 and
		// +0.062 as the float rounded gave.
		{"half-way figures", pearson(0.1235, 0.0625, 0.2345, 0.01),
			"A − B in Pearson r is +0.124 (95% interval +0.063 to +0.235, p = 0.010).", "+0.123"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := signedAsOnPages(agreementReading([]stats.Difference{tt.d}, "Run A", "Run B"))
			if !strings.Contains(got, tt.say) || strings.Contains(got, tt.not) {
				t.Errorf("reading %q\nwant it to say %q and not %q", got, tt.say, tt.not)
			}
		})
	}

	run := func(id int64, name string) models.Run {
		return models.Run{ID: id, Name: name, Status: models.RunSucceeded}
	}
	best := contender{fig: runFigures{run: run(1, "BatchEval"), avgP: 0.412}}
	test := stats.AveragedDifference{A: 0.412, B: 0.371, Diff: 0.041, CILow: justAbove, CIHigh: 0.086, P: 0.02}
	other := contender{fig: runFigures{run: run(2, "G-Eval"), avgP: 0.371}, test: test, adjP: test.P}
	v := verdictOf([]contender{best, other}, nil)
	if v.Kind != web.VerdictBetter || strings.Contains(v.Text, "still includes no difference") {
		t.Errorf("experiment verdict %s: %q; its interval, shown +0.001 to +0.086, does not include 0", v.Kind, v.Text)
	}
}
