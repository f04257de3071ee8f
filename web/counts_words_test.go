package web

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator/stats"
)

// TestCountsOnComparePageAndSampleTable: the counts the compare page and
// the run page's samples table write in their sentences agree in number
// with their noun and group thousands as every other count on the pages
// ("1,080"). A comparison of one-sample runs read "over 1 samples", one
// unmatched sample "1 samples of A have no counterpart", a one-sample run
// "1 of 1 samples", and large runs "Samples 1001 to 1050 of 1080".
func TestCountsOnComparePageAndSampleTable(t *testing.T) {
	render := func(c templ.Component) string {
		t.Helper()
		var buf bytes.Buffer
		if err := c.Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(buf.String()), " ")
	}
	undefined := stats.Correlation{Coef: math.NaN(), P: math.NaN(), CILow: math.NaN(), CIHigh: math.NaN()}
	for _, c := range []struct {
		name  string
		page  func() string
		want  []string
		never []string
	}{
		{"compare, one sample", func() string {
			p, s := undefined, undefined
			p.N, s.N = 1, 1
			return render(ComparePage(CompareView{HasHuman: true, SameDataset: true, Pearson: p, Spearman: s, Total: 1, Unmatched: 1, Rows: make([]CompareRow, 1)}))
		}, []string{"over 1 sample.", "1 sample of A has no counterpart in B."}, []string{"1 samples"}},
		{"compare, thousands", func() string {
			p, s := undefined, undefined
			p.N, s.N = 1080, 1080
			return render(ComparePage(CompareView{HasHuman: true, SameDataset: true, Pearson: p, Spearman: s, Total: 1080, Offset: 1000, PageSize: 50, Unmatched: 1200, Rows: make([]CompareRow, 50)}))
		}, []string{"over 1,080 samples.", "Samples 1,001 to 1,050 of 1,080.", "1,200 samples of A have no counterpart in B."}, []string{"1080", "1001"}},
		{"samples table, one sample", func() string {
			return render(runSampleTable(RunSampleTable{RunID: 1, Total: 1, Matching: 1}))
		}, []string{"1 of 1 sample."}, []string{"1 samples"}},
		{"samples table, thousands", func() string {
			return render(runSampleTable(RunSampleTable{RunID: 1, Total: 1080, Matching: 1001}))
		}, []string{"1,001 of 1,080 samples."}, []string{"1080", "1001"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			page := c.page()
			for _, w := range c.want {
				if !strings.Contains(page, w) {
					t.Errorf("the page lacks %q", w)
				}
			}
			for _, w := range c.never {
				if strings.Contains(page, w) {
					t.Errorf("the page writes %q", w)
				}
			}
		})
	}
}
