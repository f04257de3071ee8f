package report

import (
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestHumanUseTextCountsRatingsInWords: a report recomputed with one
// browser rating said it used "(1 browser ratings made up to …)" on the
// run page, in its "Produced by" and in the exports.
func TestHumanUseTextCountsRatingsInWords(t *testing.T) {
	at := time.Date(2026, 12, 5, 1, 53, 43, 0, time.UTC)
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "imported column and browser ratings (0 browser ratings made up to 2026-12-05 01:53:43 UTC)"},
		{1, "imported column and browser ratings (1 browser rating made up to 2026-12-05 01:53:43 UTC)"},
		{2, "imported column and browser ratings (2 browser ratings made up to 2026-12-05 01:53:43 UTC)"},
	} {
		u := HumanUse{Source: models.HumansBoth, BrowserRatings: tc.n, AsOf: &at}
		if got := u.Text(); got != tc.want {
			t.Errorf("%d ratings: %q, want %q", tc.n, got, tc.want)
		}
	}
}
