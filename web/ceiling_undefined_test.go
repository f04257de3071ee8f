package web

import (
	"bytes"
	"context"
	"math"
	"regexp"
	"testing"

	"github.com/batcheval/batcheval/report"
)

// TestCeilingUndefinedReadsUndefined: a human ceiling whose Krippendorff's
// α or leave-one-out Pearson cannot be computed (annotators who all give
// one rating, too few samples rated twice) showed "—" on the run page and
// the shared and downloaded reports, while the JSON export gives null and
// the command line "undefined", the word every other coefficient on the
// page uses. A computed figure is rounded as before.
func TestCeilingUndefinedReadsUndefined(t *testing.T) {
	for _, tc := range []struct {
		alpha, loo         float64
		wantAlpha, wantLOO string
	}{
		{math.NaN(), math.NaN(), "undefined", "undefined"}, // was — and —
		{0.8125, math.NaN(), "0.813", "undefined"},
		{-0.0004, 0.4445, "0.000", "0.445"},
	} {
		c := report.CriterionReport{Ceiling: &report.Ceiling{Annotators: 2, Items: 4, Judged: 4, Both: 4, Alpha: tc.alpha, LeaveOneOut: tc.loo}}
		var buf bytes.Buffer
		if err := runCeiling(c).Render(context.Background(), &buf); err != nil {
			t.Fatal(err)
		}
		for _, cell := range []struct{ id, want string }{{"ceiling-alpha", tc.wantAlpha}, {"ceiling-loo", tc.wantLOO}} {
			m := regexp.MustCompile(`data-testid="` + cell.id + `">([^<]*)<`).FindStringSubmatch(buf.String())
			if m == nil || m[1] != cell.want {
				t.Errorf("α %v, leave-one-out %v: %s shows %q, want %q", tc.alpha, tc.loo, cell.id, m, cell.want)
			}
		}
	}
}
