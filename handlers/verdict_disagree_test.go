package handlers

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestVerdictWhenTestAndIntervalDisagree: the compare page's sentence on
// which run agrees better follows the test whose p-value it quotes, and
// says so when the interval reads the other way.
//
// The demo project's compare page read "The data cannot tell the two runs
// apart … (95% interval −0.006 to +0.284, p = 0.045)": Williams' t below
// 5% beside a verdict of no difference, taken from Zou's interval. The
// sentence must never say "cannot tell … apart" beside a p below 5%, nor
// "agrees better" beside an interval containing 0 without saying so.
func TestVerdictWhenTestAndIntervalDisagree(t *testing.T) {
	nan := math.NaN()
	pearson := func(diff, lo, hi, p float64) stats.Difference {
		return stats.Difference{Method: stats.MethodPearson, A: 0.5 + diff/2, B: 0.5 - diff/2, Diff: diff, CILow: lo, CIHigh: hi,
			Tests: []stats.PairedTest{{Name: "Williams' t", P: p}, {Name: "Steiger's z", P: p}}}
	}
	for _, tt := range []struct {
		name     string
		d        stats.Difference
		say, not []string
	}{
		{"demo: p below 5%, interval contains 0", pearson(0.139, -0.006, 0.284, 0.045),
			[]string{"Williams' t finds that Run A agrees better", "p = 0.045", "still includes no difference", "−0.006 to +0.284", "borderline"},
			[]string{"cannot tell"}},
		{"B ahead, p below 5%, interval touches 0 as printed", pearson(-0.120, -0.2404, 0.0004, 0.031),
			[]string{"finds that Run B agrees better with the humans than Run A", "p = 0.031", "still includes no difference"},
			[]string{"cannot tell"}},
		{"p above 5%, interval excludes 0", pearson(0.100, 0.004, 0.196, 0.062),
			[]string{"Williams' t does not find a difference", "p = 0.062", "lies entirely on one side of 0", "borderline"},
			[]string{"agrees better", "cannot tell"}},
		{"both find a difference", pearson(0.150, 0.040, 0.260, 0.008),
			[]string{"Run A agrees better with the humans than Run B", "p = 0.008", "+0.040 to +0.260"},
			[]string{"cannot tell", "borderline", "includes no difference"}},
		{"neither finds one", pearson(0.050, -0.060, 0.160, 0.380),
			[]string{"cannot tell the two runs apart", "p = 0.38"},
			[]string{"agrees better", "borderline"}},
		{"p below 5%, no interval", pearson(0.150, nan, nan, 0.010),
			[]string{"Run A agrees better", "p = 0.010", "could not be computed"},
			[]string{"cannot tell"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := agreementReading([]stats.Difference{tt.d}, "Run A", "Run B")
			for _, w := range tt.say {
				if !strings.Contains(got, w) {
					t.Errorf("reading %q lacks %q", got, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got, w) {
					t.Errorf("reading %q says %q", got, w)
				}
			}
			// The general rule, whatever the case: no tie beside p < 5%, and
			// no plain winner beside an interval that contains 0.
			if tt.d.P() < 0.05 && strings.Contains(got, "cannot tell") {
				t.Errorf("reading %q calls the runs indistinguishable beside p < 0.05", got)
			}
			lo, hi := web.BoundAsPrinted(tt.d.CILow), web.BoundAsPrinted(tt.d.CIHigh)
			if lo <= 0 && hi >= 0 && strings.Contains(got, "agrees better") && !strings.Contains(got, "still includes no difference") {
				t.Errorf("reading %q names a winner beside an interval containing 0 without saying so", got)
			}
		})
	}

	// The experiment page's "significantly better" verdict, decided by the
	// Holm-adjusted permutation p, says so too when its interval contains 0.
	run := func(id int64, name string) models.Run {
		return models.Run{ID: id, Name: name, Status: models.RunSucceeded}
	}
	best := contender{fig: runFigures{run: run(1, "BatchEval"), avgP: 0.412}}
	for _, tc := range []struct {
		name   string
		lo, hi float64
		note   bool
	}{{"interval contains 0", -0.004, 0.086, true}, {"interval excludes 0", 0.010, 0.070, false}} {
		t.Run("experiment "+tc.name, func(t *testing.T) {
			test := stats.AveragedDifference{A: 0.412, B: 0.371, Diff: 0.041, CILow: tc.lo, CIHigh: tc.hi, P: 0.02}
			other := contender{fig: runFigures{run: run(2, "G-Eval"), avgP: 0.371}, test: test, adjP: test.P}
			v := verdictOf([]contender{best, other}, nil)
			if v.Kind != web.VerdictBetter || !strings.Contains(v.Text, "significantly better") {
				t.Fatalf("verdict %s: %q, want better", v.Kind, v.Text)
			}
			if got := strings.Contains(v.Text, "still includes no difference"); got != tc.note {
				t.Errorf("verdict %q: says the interval includes no difference = %v, want %v", v.Text, got, tc.note)
			}
		})
	}
}

// TestAlignNoteOnTestAndInterval: the held-out before/after table prints
// each paired test's p beside the interval; its note said that an
// interval containing 0 alone means the samples cannot tell the versions
// apart, which a p below 0.05 in the same row contradicts.
func TestAlignNoteOnTestAndInterval(t *testing.T) {
	d := stats.Difference{Method: stats.MethodPearson, A: 0.61, B: 0.47, Diff: 0.139, CILow: -0.006, CIHigh: 0.284, N: 80,
		Interval: "Zou (2007)", Tests: []stats.PairedTest{{Name: "Williams' t", P: 0.045}}}
	v := web.AlignmentView{Accepted: true, BaseVersion: 1, NewVersion: 2, Criterion: "Fluency",
		Comparisons: []web.AlignComparison{{Method: stats.MethodPearson, Difference: d}}}
	var buf strings.Builder
	if err := web.AlignmentPage(v).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	body := buf.String()
	if !strings.Contains(body, `data-testid="comparison"`) {
		t.Fatalf("no before/after table rendered")
	}
	if strings.Contains(body, "an interval that contains 0 means these samples cannot tell the versions apart") {
		t.Error("the note calls an interval containing 0 a tie beside a row with p < 0.05")
	}
	if !strings.Contains(body, "when the test and the interval disagree the evidence is borderline") {
		t.Error("the note does not say what a test and interval that disagree mean")
	}
}
