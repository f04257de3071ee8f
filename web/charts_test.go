package web

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/report"
)

func renderString(t testing.TB, c templ.Component) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestInsideTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   []float64
	}{
		// The experiment chart's axis: was 0, 577, 1155, 1732, 2309.
		{0, 2309.2, []float64{0, 500, 1000, 1500, 2000}},
		{1, 5, []float64{1, 2, 3, 4, 5}},
		{0, 1, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{0, 100, []float64{0, 20, 40, 60, 80, 100}},
		{-1, 1, []float64{-1, -0.5, 0, 0.5, 1}},
		{0.3, 0.7, []float64{0.3, 0.4, 0.5, 0.6, 0.7}},
		{0, 0.00011, []float64{0, 2e-05, 4e-05, 6e-05, 8e-05, 0.0001}},
	}
	for _, tt := range tests {
		got := insideTicks(tt.lo, tt.hi, 6)
		if !slices.Equal(got, tt.want) {
			t.Errorf("insideTicks(%g, %g) = %v, want %v", tt.lo, tt.hi, got, tt.want)
		}
		for _, v := range got {
			if v < tt.lo-1e-12 || v > tt.hi+1e-12 {
				t.Errorf("insideTicks(%g, %g): tick %g outside the axis", tt.lo, tt.hi, v)
			}
		}
	}
}

// scatterOfN builds a chart of n points; ratings on levels when binary.
func scatterOfN(n int, binary bool) ScatterChart {
	sc := ScatterChart{XLo: 1, XHi: 5, XLabel: "judge final score", YLabel: "human rating", AllHref: "/runs/1#samples"}
	for i := range n {
		x := 1 + float64(i%400)/100
		y := float64(i%97) / 96 * 4
		if binary {
			y = float64(i % 2)
		}
		sc.Points = append(sc.Points, ScatterPoint{X: x, Y: y, Href: templ.SafeURL(fmt.Sprintf("/runs/1/samples/%d", i)),
			Title: fmt.Sprintf("s%d: judge %g, human %g", i, x, y)})
	}
	return sc
}

var (
	circleRe   = regexp.MustCompile(`<circle class="pt" cx="([0-9.]+)" cy="([0-9.]+)"`)
	tabindexRe = regexp.MustCompile(`tabindex="0"`)
)

// TestScatterIsOneFocusableImage: the chart is one focusable image with a
// label; its points are no tab stops and links live in the data table.
func TestScatterIsOneFocusableImage(t *testing.T) {
	html := renderString(t, Scatter(scatterOfN(30, false)))
	svg := html[strings.Index(html, "<svg"):strings.Index(html, "</svg>")]
	if got := len(tabindexRe.FindAllString(html, -1)); got != 1 {
		t.Errorf("%d focusable elements, want 1 (the chart)", got)
	}
	for _, want := range []string{`role="img"`, `aria-label="Scatter chart of judge final score (across) against human rating (up), 30 points.`} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if strings.Contains(svg, "<a ") {
		t.Errorf("the chart holds links, each a tab stop")
	}
	if got := strings.Count(html, `data-testid="scatter-point"`); got != 30 {
		t.Errorf("the data table links %d points, want 30", got)
	}
	if strings.Contains(html, "scatter-sampled") {
		t.Errorf("a chart of 30 points says it is sampled")
	}
}

// TestScatterDrawsAtMostASample: a large scatter draws MaxScatterPoints of
// its points, the same each time, says so, and counts all of them in its
// table.
func TestScatterDrawsAtMostASample(t *testing.T) {
	tests := []struct {
		n         int
		wantDrawn int
		sampled   bool
	}{
		{100, 100, false},
		{MaxScatterPoints, MaxScatterPoints, false},
		{10000, MaxScatterPoints, true},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.n), func(t *testing.T) {
			sc := scatterOfN(tt.n, false)
			html := renderString(t, Scatter(sc))
			if got := len(circleRe.FindAllString(html, -1)); got != tt.wantDrawn {
				t.Errorf("%d points drawn, want %d", got, tt.wantDrawn)
			}
			note := fmt.Sprintf("Showing %s of %s points", runCount(tt.wantDrawn), runCount(tt.n))
			if got := strings.Contains(html, note); got != tt.sampled {
				t.Errorf("note %q shown: %v, want %v", note, got, tt.sampled)
			}
			if again := renderString(t, Scatter(sc)); again != html {
				t.Errorf("the same data drew a different chart")
			}
			if tt.n > maxListedPoints {
				// The grid counts every point, drawn or not.
				total := 0
				for _, m := range regexp.MustCompile(`<td class="num">([0-9,]+)</td>`).FindAllStringSubmatch(html[strings.Index(html, "scatter-grid"):], -1) {
					v, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
					total += v
				}
				if total != tt.n {
					t.Errorf("the data table counts %d points, want %d", total, tt.n)
				}
			}
		})
	}
}

// TestScatterJittersLevels: binary human ratings are spread around their
// two levels, by a fixed seed, and the chart says so; continuous ones are
// drawn where they are.
func TestScatterJittersLevels(t *testing.T) {
	tests := []struct {
		name       string
		binary     bool
		wantJitter bool
	}{
		{"binary ratings", true, true},
		{"continuous ratings", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := scatterOfN(200, tt.binary)
			html := renderString(t, Scatter(sc))
			ys := map[string]bool{}
			for _, m := range circleRe.FindAllStringSubmatch(html, -1) {
				ys[m[2]] = true
			}
			if tt.wantJitter && len(ys) < 50 {
				t.Errorf("binary ratings drawn at %d heights, want them spread", len(ys))
			}
			if got := strings.Contains(html, "scatter-jitter"); got != tt.wantJitter {
				t.Errorf("jitter note shown %v, want %v", got, tt.wantJitter)
			}
			if tt.wantJitter {
				// The levels are the y ticks.
				if !strings.Contains(html, `text-anchor="end">0</text>`) || !strings.Contains(html, `text-anchor="end">1</text>`) {
					t.Errorf("the y axis does not tick the rating levels 0 and 1")
				}
			}
		})
	}
}

// TestHistogramAxes: the histogram has a y axis title and round count
// ticks whose last one is at least the tallest bar, so no bar is clipped.
func TestHistogramAxes(t *testing.T) {
	tests := []struct {
		counts    []int
		wantTicks []string
	}{
		{[]int{3, 17, 9, 1}, []string{"0", "5", "10", "15", "20"}},
		{[]int{1, 0, 2}, []string{"0", "1", "2"}},
		{[]int{0, 0}, []string{"0", "1"}},
		{[]int{1234, 40}, []string{"0", "500", "1,000", "1,500"}},
	}
	for _, tt := range tests {
		var bins []stats.Bin
		for i, c := range tt.counts {
			bins = append(bins, stats.Bin{Lo: float64(i), Hi: float64(i + 1), Count: c})
		}
		html := renderString(t, Histogram(HistogramChart{Bins: bins, XLabel: "final score"}))
		var ticks []string
		for _, m := range regexp.MustCompile(`data-testid="histogram-ytick">([^<]+)<`).FindAllStringSubmatch(html, -1) {
			ticks = append(ticks, m[1])
		}
		if !slices.Equal(ticks, tt.wantTicks) {
			t.Errorf("counts %v: y ticks %v, want %v", tt.counts, ticks, tt.wantTicks)
		}
		if !strings.Contains(html, `data-testid="histogram-ylabel">number of samples<`) {
			t.Errorf("histogram has no y axis title")
		}
		for _, m := range regexp.MustCompile(`<rect class="bar" x="[0-9.]+" y="(-?[0-9.]+)"`).FindAllStringSubmatch(html, -1) {
			if y, _ := strconv.ParseFloat(m[1], 64); y < chartTop-0.05 {
				t.Errorf("counts %v: a bar rises to %g, above the plot (top %g)", tt.counts, y, chartTop)
			}
		}
	}
}

// runPageCriterion is a criterion report of n samples with judge scores
// and human ratings, as the run page charts it.
func runPageCriterion(n int) report.CriterionReport {
	c := report.CriterionReport{Criterion: evaluator.Criterion{Name: "Coherence", Lo: 1, Hi: 5}, HasHuman: true}
	for i := range n {
		f, h := 1+float64(i%400)/100, float64(i%97)/96*4
		c.Samples = append(c.Samples, report.SampleResult{RowID: int64(i + 1), ExternalID: "s" + strconv.Itoa(i), Final: &f, Human: &h})
	}
	return c
}

// BenchmarkRunPageScatter builds and renders the run page's scatter at
// 1k, 10k and 100k samples. Before the drawing was capped and the axis
// range computed once it took 1.9 s at 10k and 182 s at 100k; compare the
// 10k and 100k figures with 1k (BENCHMARKS.md records one run).
func BenchmarkRunPageScatter(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		c := runPageCriterion(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := Scatter(scatterOf(1, c)).Render(context.Background(), &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(buf.Len()), "bytes/page")
		})
	}
}
