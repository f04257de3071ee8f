package handlers

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestSignificanceSentencesFollowTheirFigures: a sentence that calls a
// difference significant prints a p-value below 5%, and names as better
// the run the paired test found better.
//
// With 1000 swaps a permutation p-value is k/1001, and 50/1001 = 0.04995
// was printed "p = 0.050" beside "agrees better" and "significantly
// better". And a run ahead in the table (each run averaged over the
// samples it scored) whose paired test on the samples both scored came
// out significantly behind was headlined "significantly better than the
// next": the test was read by its size, not its sign.
func TestSignificanceSentencesFollowTheirFigures(t *testing.T) {
	justUnder := 50.0 / 1001
	for _, tt := range []struct {
		p    float64
		want string
	}{
		{justUnder, "p < 0.050"}, {0.0494, "p = 0.049"}, {0.05, "p = 0.050"}, {0.0506, "p = 0.051"}, {0.0004, "p < 0.001"},
	} {
		if got := web.PValueText(tt.p); got != tt.want {
			t.Errorf("PValueText(%g) = %q, want %q", tt.p, got, tt.want)
		}
	}

	d := stats.Difference{Method: stats.MethodPearson, A: 0.62, B: 0.55, Diff: 0.07, CILow: 0.01, CIHigh: 0.13,
		Tests: []stats.PairedTest{{Name: "Williams' t", P: justUnder}}}
	if got := agreementReading([]stats.Difference{d}, "Run A", "Run B"); !strings.HasPrefix(got, "Run A agrees better") || !strings.Contains(got, "p < 0.050") {
		t.Errorf("compare reading = %q, want Run A better with p < 0.050", got)
	}

	run := func(id int64, name string) models.Run {
		return models.Run{ID: id, Name: name, Status: models.RunSucceeded}
	}
	best := contender{fig: runFigures{run: run(1, "BatchEval"), avgP: 0.412}}
	for _, tc := range []struct {
		name     string
		test     stats.AveragedDifference
		kind     string
		say, not string
	}{
		{"ahead and significant", stats.AveragedDifference{A: 0.412, B: 0.371, Diff: 0.041, CILow: 0.01, CIHigh: 0.07, P: justUnder},
			web.VerdictBetter, "significantly better than the next, G-Eval (0.37; difference +0.041, Holm-adjusted p < 0.050)", "p = 0.050"},
		{"behind on the shared samples", stats.AveragedDifference{A: 0.350, B: 0.371, Diff: -0.021, CILow: -0.035, CIHigh: -0.006, P: 0.004},
			web.VerdictTied, "G-Eval agrees better than BatchEval on the samples both runs scored", "significantly better"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := contender{fig: runFigures{run: run(2, "G-Eval"), avgP: 0.371}, test: tc.test, adjP: tc.test.P}
			v := verdictOf([]contender{best, other}, nil)
			if v.Kind != tc.kind || !strings.Contains(v.Text, tc.say) || strings.Contains(v.Text, tc.not) {
				t.Errorf("verdict %s: %q\nwant %s saying %q and not %q", v.Kind, v.Text, tc.kind, tc.say, tc.not)
			}
		})
	}
}
