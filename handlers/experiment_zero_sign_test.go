package handlers

import (
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/web"
)

// TestExperimentSentencesSignFiguresAsTheTable: an average Pearson r of
// −0.0004 showed 0.000 in the experiment table (web.CoefText) and
// "−0.000" in the chart's title, "−0.00" in the cost and verdict
// sentences, and an interval bound of −0.0003 "−0.000" in a cell's title
// where the run page shows 0.000: one figure, two signs. fmtNum, which
// writes those, now signs as the table does.
func TestExperimentSentencesSignFiguresAsTheTable(t *testing.T) {
	for _, tc := range []struct {
		v      float64
		digits int
		want   string
	}{
		{-0.0004, 3, "0.000"},
		{-0.004, 2, "0.00"},
		{-0.0005001, 3, "\u22120.001"},
		{0.8125, 3, web.CoefText(0.8125, 3)},
		{-0.25, 2, "\u22120.25"},
		{math.NaN(), 3, "—"},
		{12.6, 0, "13"},
	} {
		if got := fmtNum(tc.v, tc.digits); got != tc.want {
			t.Errorf("fmtNum(%v, %d) = %q, want %q", tc.v, tc.digits, got, tc.want)
		}
		if !math.IsNaN(tc.v) && fmtNum(tc.v, tc.digits) != web.CoefText(tc.v, tc.digits) {
			t.Errorf("fmtNum(%v, %d) = %q, the table's web.CoefText %q", tc.v, tc.digits, fmtNum(tc.v, tc.digits), web.CoefText(tc.v, tc.digits))
		}
	}
	c := stats.Correlation{Coef: 0.01, CILow: -0.0003, CIHigh: 0.2, N: 30}
	if got, want := ciTitle(c), "95% interval 0.000 to 0.200 over 30 samples"; got != want {
		t.Errorf("ciTitle = %q, want %q", got, want)
	}
}

// TestExperimentIntervalTitleSaysItsResamples: the experiment table's
// interval title says how many bootstrap resamples the run's interval is
// from when some were left out, in the run page's words, and nothing
// more when none was.
func TestExperimentIntervalTitleSaysItsResamples(t *testing.T) {
	for _, tc := range []struct {
		drawn, used int
		want        string
	}{
		{1000, 640, "95% interval 0.100 to 0.500 over 60 samples, from 640 of 1000 resamples"},
		{1000, 1000, "95% interval 0.100 to 0.500 over 60 samples"},
		{0, 0, "95% interval 0.100 to 0.500 over 60 samples"},
	} {
		c := stats.Correlation{CILow: 0.1, CIHigh: 0.5, N: 60, Resamples: tc.drawn, ResamplesUsed: tc.used}
		if got := ciTitle(c); got != tc.want {
			t.Errorf("%d of %d: ciTitle = %q, want %q", tc.used, tc.drawn, got, tc.want)
		}
	}
}

// TestExperimentIntervalTitleRoundsAsTheRunPage: a correlation's 95%
// interval is printed in the experiment table's cell title as on the run
// page (and the compare page), web.SignedCoef's rounding of the float the
// export gives: a bound of 0.12349999999999998 reads 0.123 in both, and
// one of -0.0004999999999999999 reads 0.000 (the run page's ±0.000), not
// −0.000. (Once the run page read the first as the decimal 0.1235 and
// showed +0.124, and the title 0.123.)
func TestExperimentIntervalTitleRoundsAsTheRunPage(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0.12349999999999998, "0.123"}, {-0.0004999999999999999, "0.000"}, {-0.2346, "−0.235"}} {
		page := strings.TrimLeft(web.SignedCoef(tc.v, 3), "+±")
		if page != tc.want {
			t.Errorf("bound %v: the run page prints %s, want %s", tc.v, web.SignedCoef(tc.v, 3), tc.want)
		}
		if title := ciTitle(stats.Correlation{CILow: tc.v, CIHigh: 0.9, N: 40}); !strings.Contains(title, "interval "+page+" to") {
			t.Errorf("bound %v: the run page prints %s, the experiment title %q", tc.v, web.SignedCoef(tc.v, 3), title)
		}
	}
}
