package web

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestSharedReportCountsSkippedGroups: the shared and standalone report's
// within-groups table gives the groups left out, as the run page does,
// and says why a group is left out. It showed "Groups used 57" alone, so a
// reader of the report could not tell 57 of 60 groups from 57 of 57, nor
// why three were missing. Counts group their thousands like the page's.
func TestSharedReportCountsSkippedGroups(t *testing.T) {
	nan := math.NaN()
	undefined := stats.Correlation{Coef: nan, P: nan, CILow: nan, CIHigh: nan}
	c := report.CriterionReport{
		Criterion:   evaluator.Criterion{Name: "Engaging", Lo: 1, Hi: 3},
		GroupColumn: "context_id",
		HasHuman:    true,
		Pearson:     undefined, Spearman: undefined, Kendall: undefined,
		Entropy: nan, MeanBatchBias: nan,
		Decomposition: stats.Decomposition{EnsembleErr: nan, MeanRoundErr: nan, MeanVariance: nan},
		Grouped: map[stats.Method]stats.Grouped{
			stats.MethodPearson:  {Coef: 0.25, Groups: 57, Skipped: 3, Ungrouped: 1200},
			stats.MethodSpearman: {Coef: 0.2, Groups: 56, Skipped: 4, Ungrouped: 1200},
			stats.MethodKendall:  {Coef: 0.15, Groups: 56, Skipped: 4, Ungrouped: 1200},
		},
	}
	var buf bytes.Buffer
	if err := ReportCriterion(models.Run{ID: 1}, c, 0, models.SampledAnswers{}, nil).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	page := strings.Join(strings.Fields(buf.String()), " ")
	i := strings.Index(page, "Correlation within each context_id")
	if i < 0 {
		t.Fatalf("no within-groups table:\n%s", page)
	}
	table := page[i:]
	if !strings.Contains(table, `<th class="num">Groups skipped</th>`) {
		t.Errorf("the within-groups table has no Groups skipped column")
	}
	for name, want := range map[string]string{"Pearson r": "57 3 1,200", "Spearman ρ": "56 4 1,200", "Kendall τ-b": "56 4 1,200"} {
		row := regexp.MustCompile(regexp.QuoteMeta(name) + `</td>((?:<td class="num">[^<]*</td>)+)`).FindStringSubmatch(table)
		if row == nil {
			t.Errorf("no %s row", name)
			continue
		}
		cells := regexp.MustCompile(`<td class="num">([^<]*)</td>`).FindAllStringSubmatch(row[1], -1)
		var counts []string
		for _, c := range cells[2:] {
			counts = append(counts, c[1])
		}
		if got := strings.Join(counts, " "); got != want {
			t.Errorf("%s: groups used, skipped and samples without a group %q, want %q", name, got, want)
		}
	}
	if !strings.Contains(table, "A group is skipped when") {
		t.Errorf("the report does not say when a group is skipped")
	}
}
