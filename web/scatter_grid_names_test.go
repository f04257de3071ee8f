package web

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/a-h/templ"
)

// TestScatterGridRowsNameTheCellsCounted: the grid of counts under a large
// judge-against-human chart names each row after the span its points were
// counted in. When the human ratings are drawn on a scale of their own
// (ScatterChart.YLo, YHi: an LLM-Eval run's 0 to 5 against the rubric's
// 1 to 5) the y axis spans that scale, but the report counts the points
// per bin of the ratings' own span; a row named over the scale ("1 to
// 1.8") then held the points of another bin of the ratings ("2 to 2.6").
// Each case checks, row by row, that the points counted in a row are
// exactly the points whose human rating lies in the span the row names.
func TestScatterGridRowsNameTheCellsCounted(t *testing.T) {
	cases := []struct {
		name           string
		ylo, yhi       float64 // the drawn human scale; 0, 0: none
		ratingLo, step float64 // ratings: ratingLo + k*step, 13 levels
	}{
		{"ratings inside the rubric's 1 to 5", 1, 5, 2, 0.2},
		{"ratings over the whole 1 to 5", 1, 5, 1, 1.0 / 3},
		{"no scale of their own", 0, 0, 2, 0.2},
	}
	rowRe := regexp.MustCompile(`<tr><th>([^<]+)</th>((?:<td class="num">[0-9,]+</td>)+)</tr>`)
	cellRe := regexp.MustCompile(`<td class="num">([0-9,]+)</td>`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := ScatterChart{XLo: 0, XHi: 5, YLo: c.ylo, YHi: c.yhi, XLabel: "judge final score", YLabel: "human rating"}
			var ys []float64
			for i := range 400 {
				x := float64(i%50) / 10
				y := c.ratingLo + float64(i%13)*c.step
				ys = append(ys, y)
				sc.Points = append(sc.Points, ScatterPoint{X: x, Y: y, Href: templ.SafeURL(fmt.Sprintf("/runs/1/samples/%d", i)), Title: fmt.Sprintf("s%d", i)})
			}
			html := renderString(t, Scatter(digestOf(sc)))
			grid := html[strings.Index(html, `data-testid="scatter-grid"`):]
			rows := rowRe.FindAllStringSubmatch(grid, -1)
			if len(rows) != 5 {
				t.Fatalf("%d rows in the grid, want 5:\n%s", len(rows), grid[:min(len(grid), 2000)])
			}
			total := 0
			for _, r := range rows {
				var lo, hi float64
				if _, err := fmt.Sscanf(r[1], "%g to %g", &lo, &hi); err != nil {
					t.Fatalf("row name %q: %v", r[1], err)
				}
				got := 0
				for _, m := range cellRe.FindAllStringSubmatch(r[2], -1) {
					var n int
					fmt.Sscanf(strings.ReplaceAll(m[1], ",", ""), "%d", &n)
					got += n
				}
				total += got
				want := 0
				top := math.Abs(hi-maxOf(ys)) < 0.01 // the last bin holds its upper end
				for _, y := range ys {
					// The names are rounded to two decimals: compare with
					// half a hundredth of slack.
					if y >= lo-0.005 && (y < hi-0.005 || top && y <= hi+0.005) {
						want++
					}
				}
				if got != want {
					t.Errorf("row %q counts %d points; %d ratings lie in %g to %g", r[1], got, want, lo, hi)
				}
			}
			if total != len(ys) {
				t.Errorf("the grid counts %d points, want %d", total, len(ys))
			}
		})
	}
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}
