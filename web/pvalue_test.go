package web

import (
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
)

// TestPValueTextFollowsTheReadingsRule: the experiment headline's and the
// compare page's p-values are printed as the reading sentences print
// theirs (stats.PText), not with three decimals at every size ("p =
// 0.500" beside a reading's "p = 0.50").
func TestPValueTextFollowsTheReadingsRule(t *testing.T) {
	for _, tt := range []struct {
		p    float64
		want string
	}{
		{0.0995, "p = 0.10"}, {0.25, "p = 0.25"}, {1, "p = 1.00"}, {0.0494, "p = 0.049"}, {50.0 / 1001, "p < 0.050"},
	} {
		if got := PValueText(tt.p); got != tt.want || got != stats.PText(tt.p) {
			t.Errorf("PValueText(%g) = %q, want %q (stats.PText %q)", tt.p, got, tt.want, stats.PText(tt.p))
		}
	}
}
