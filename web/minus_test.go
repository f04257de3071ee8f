package web

import (
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/web/webtest"
)

// TestPageNumbersUseOneMinusSign: every number a page shows is signed
// with the true minus sign U+2212, through Minus. Most formatters wrote an
// ASCII hyphen ("-0.122") while the signed changes wrote "−", so one page
// mixed two signs.
func TestPageNumbersUseOneMinusSign(t *testing.T) {
	v := -0.1224
	for _, tt := range []struct{ name, got, want string }{
		{"runFloat", runFloat(-0.5, 3), "−0.500"},
		{"runScore", runScore(&v), "−0.12"},
		{"CoefText", CoefText(-0.1224, 3), "−0.122"},
		{"runSigned", runSigned(-0.05, 3), "−0.050"},
		{"Signed", Signed(0.12, 3), "+0.120"},
		{"Money", Money(-1.5), "−$1.50"},
		{"runCount", runCount(-12345), "−12,345"},
		{"Count", Count(-7), "−7"},
		{"chartTick", chartTick(-0.25), "−0.25"},
		{"chartTick thousands", chartTick(-2500), "−2,500"},
		{"TickLabels", strings.Join(TickLabels([]float64{-0.1, 0, 0.1}), " "), "−0.1 0.0 0.1"},
		{"runRange", runRange(evaluator.Criterion{Lo: -2, Hi: 2}), "−2 to 2"},
		{"statText", statText(-1.5), "−1.50"},
		{"ratingText", ratingText(&v), "−0.1224"},
		{"DifferenceInterval", DifferenceInterval(-0.2, 0.1), "−0.200 to +0.100"},
		// The run page's and share page's correlation intervals: a bound
		// near 0 shows its side (was "±0.000 to +0.300", figs47).
		{"DifferenceInterval near 0", DifferenceInterval(-0.0002, 0.3), "−0.0002 to +0.300"},
		{"runSpreadText", runSpreadText(stats.Spread{N: 3, Mean: -0.1, SD: 0.02, Min: -0.2, Max: 0.05}), "−0.100 ± 0.020 (−0.200 to 0.050)"},
	} {
		if tt.got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

// asciiMinus is a hyphen before a digit outside a tag: a negative number
// written with the ASCII sign in page text.
var asciiMinus = regexp.MustCompile(`>(?:[^<]*[^\w<])?-[0-9][^<]*<`)

// TestChartsAndFormsSignTheirOwnWay: an SVG chart's labels use the true
// minus sign while its coordinates stay numbers SVG reads; a review
// form's values stay what the form's parser reads ("-2") while the labels
// beside them show "−2".
func TestChartsAndFormsSignTheirOwnWay(t *testing.T) {
	sc := ScatterChart{XLo: -2, XHi: 2, XLabel: "judge final score", YLabel: "human rating"}
	for _, x := range []float64{-2, -1.5, -0.5, 0.5, 1, 2} {
		sc.Points = append(sc.Points, ScatterPoint{X: x, Y: -x})
	}
	h := HistogramChart{XLabel: "judge final score", Bins: []stats.Bin{{Lo: -2, Hi: 0, Count: 3}, {Lo: 0, Hi: 2, Count: 4}}}
	form := ReviewForm{Action: "/r", Criterion: "Tone", Lo: -2, Hi: 2, Levels: []float64{-2, -1, 0, 1, 2}}
	for _, tc := range []struct {
		name  string
		html  string
		want  []string
		attrs []string // attribute values that must keep the ASCII sign
	}{
		{"scatter", renderString(t, Scatter(sc)), []string{">−2<", ">−1<", "<td class=\"num\">−1.5</td>"}, nil},
		{"histogram", renderString(t, Histogram(h)), []string{"−2 to 0: 3 samples", ">−2<"}, nil},
		{"review form", renderString(t, ReviewFormFields(form)), []string{"(−2 to 2)", "> −2</label>"}, []string{`value="-2"`, `value="-1"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if m := asciiMinus.FindString(tc.html); m != "" {
				t.Errorf("page text with an ASCII minus: %q", m)
			}
			for _, w := range append(tc.want, tc.attrs...) {
				if !strings.Contains(tc.html, w) {
					t.Errorf("lacks %q:\n%.3000s", w, tc.html)
				}
			}
		})
	}
}

// TestParseNumberReadsWhatPagesWrite: the tests' one reader of page
// numbers undoes Minus and the thousands separators.
func TestParseNumberReadsWhatPagesWrite(t *testing.T) {
	for _, tt := range []struct {
		shown string
		want  float64
	}{
		{runCount(-2500), -2500},
		{runFloat(-0.122, 3), -0.122},
		{chartTick(-0.25), -0.25},
		{Signed(-0.05, 3), -0.05},
		{Signed(0.05, 3), 0.05},
		{runFloat(3.5, 1), 3.5},
	} {
		if got, err := webtest.ParseNumber(tt.shown); err != nil || got != tt.want {
			t.Errorf("webtest.ParseNumber(%q) = %v, %v; want %v", tt.shown, got, err, tt.want)
		}
	}
}
