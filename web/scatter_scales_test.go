package web

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/report"
)

// A criterion judged on 0 to 5 whose human ratings the errors map from the
// rubric's 1 to 3: the chart's human axis spans and ticks 1 to 3 though the
// ratings are only 2 and 3, so that its ends line up with the judge's 0
// and 5 as the mapping has them; ratings taken as given keep an axis over
// the data.
func TestScatterHumanAxisSpansTheMappedScale(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	samples := []report.SampleResult{{RowID: 1, ExternalID: "a", Final: v(4), Human: v(3)}, {RowID: 2, ExternalID: "b", Final: v(2), Human: v(2)},
		{RowID: 3, ExternalID: "c", Final: v(5), Human: v(3)}}
	for _, tc := range []struct {
		name   string
		scale  report.HumanScale
		tickOf bool // a y tick at 1
	}{
		{"mapped from the rubric's 1 to 3", report.HumanScale{Mapped: true, Lo: 1, Hi: 3, Name: "the rubric's 1 to 3"}, true},
		{"as given", report.HumanScale{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := report.CriterionReport{Criterion: evaluator.Criterion{Name: "Q", Lo: 0, Hi: 5}, HasHuman: true, Samples: samples, HumanScale: tc.scale}
			html := renderString(t, Scatter(reportScatter(c, standaloneSampleHref)))
			if got := strings.Contains(html, `text-anchor="end">1</text>`); got != tc.tickOf {
				t.Errorf("y tick at 1: %v, want %v", got, tc.tickOf)
			}
		})
	}
}
