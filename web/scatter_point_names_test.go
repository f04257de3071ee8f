package web

import (
	"html"
	"regexp"
	"testing"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/report"
)

// TestScatterTableNamesSamplesWhole: the judge-versus-human chart's data
// table names each point by its sample's whole id. It named a point by
// the part of its title before the first colon, so an id with a colon of
// its own ("+SUM(A1:A2)", "dialogue:7", "12:30") was listed cut short.
func TestScatterTableNamesSamplesWhole(t *testing.T) {
	ids := []string{"+SUM(A1:A2)", "dialogue:7", "12:30 <b>", "plain", "ends with:"}
	c := report.CriterionReport{Criterion: evaluator.Criterion{Name: "Q", Lo: 1, Hi: 5}, HasHuman: true}
	for i, id := range ids {
		f, h := 1+float64(i)/2, 2+float64(i%3)
		c.Samples = append(c.Samples, report.SampleResult{RowID: int64(i + 1), ExternalID: id, Final: &f, Human: &h})
	}
	href := func(rowID int64) templ.SafeURL { return "#sample" }
	page := renderString(t, Scatter(reportScatter(c, href)))
	var got []string
	for _, m := range regexp.MustCompile(`data-testid="scatter-point">([^<]*)<`).FindAllStringSubmatch(page, -1) {
		got = append(got, html.UnescapeString(m[1]))
	}
	if len(got) != len(ids) {
		t.Fatalf("the data table names %d points %q, want %d", len(got), got, len(ids))
	}
	for i, id := range ids {
		if got[i] != id {
			t.Errorf("point %d is named %q in the data table, its sample's id is %q", i, got[i], id)
		}
	}
}
