package handlers

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/web/webtest"
)

var tickRe = regexp.MustCompile(`data-testid="([xy])-tick">([^<]*)<`)

// TestExperimentChartTicks: the cost chart's axes carry nice numbers (steps
// of 1, 2 or 5 times a power of ten, evenly spaced, the same decimals
// throughout), never values like 1004 and 2008, and points are numbered
// with a legend instead of names written over each other.
func TestExperimentChartTicks(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		x := env.demoExperiment()
		body := env.get(fmt.Sprintf("/experiments/%d", x.exp.ID)).Body.String()
		chart := body[strings.Index(body, `data-testid="experiment-chart"`):]
		ticks := map[string][]float64{}
		for _, m := range tickRe.FindAllStringSubmatch(chart, -1) {
			v, err := webtest.ParseNumber(m[2])
			if err != nil {
				t.Fatalf("%s tick %q is not a number", m[1], m[2])
			}
			ticks[m[1]] = append(ticks[m[1]], v)
		}
		for _, axis := range []string{"x", "y"} {
			ts := ticks[axis]
			if len(ts) < 2 || len(ts) > 6 {
				t.Fatalf("%s axis has %d ticks %v, want 2 to 6", axis, len(ts), ts)
			}
			step := ts[1] - ts[0]
			mant := step / math.Pow(10, math.Floor(math.Log10(step)+1e-9))
			if math.Abs(mant-1) > 1e-6 && math.Abs(mant-2) > 1e-6 && math.Abs(mant-5) > 1e-6 {
				t.Errorf("%s axis step %g is not 1, 2 or 5 times a power of ten (ticks %v)", axis, step, ts)
			}
			for i := 1; i < len(ts); i++ {
				if math.Abs(ts[i]-ts[i-1]-step) > step*1e-6 {
					t.Errorf("%s axis ticks uneven: %v", axis, ts)
				}
			}
		}
		if ticks["x"][0] != 0 {
			t.Errorf("cost axis starts at %g, want 0", ticks["x"][0])
		}
		legend := regexp.MustCompile(`(?s)<ol class="chart-legend[^>]*>(.*?)</ol>`).FindStringSubmatch(chart)
		if legend == nil || strings.Count(legend[1], "<li>") != 2 {
			t.Fatalf("chart has no legend naming its two runs")
		}
		if strings.Contains(chart, `class="pt-label"`) {
			t.Error("chart still writes run names beside its points")
		}
	})
}
