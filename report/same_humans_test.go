package report

import (
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestSameHumans: two reports' correlations compare only when they read
// the same human ratings (TestRobustnessLineNeedsTheSameHumans is the
// page that needs it).
func TestSameHumans(t *testing.T) {
	rep := func(dataset int64, src models.HumanSource, upto int64, browser int) *Report {
		return &Report{Run: models.Run{DatasetID: dataset}, Humans: HumanUse{Source: src, UptoRatingID: upto, BrowserRatings: browser}}
	}
	for _, tt := range []struct {
		name string
		a, b *Report
		want bool
	}{
		{"both imported, same dataset", rep(1, models.HumansImported, 0, 0), rep(1, "", 0, 0), true},
		{"both imported, a noisy copy", rep(1, models.HumansImported, 0, 0), rep(2, models.HumansImported, 0, 0), true},
		{"both with no browser rating is the imported column", rep(1, models.HumansBoth, 9, 0), rep(2, models.HumansImported, 0, 0), true},
		{"imported against both", rep(1, models.HumansImported, 0, 0), rep(1, models.HumansBoth, 9, 10), false},
		{"imported against browser only", rep(1, models.HumansImported, 0, 0), rep(1, models.HumansBrowser, 9, 10), false},
		{"both, same choice", rep(1, models.HumansBoth, 9, 10), rep(1, models.HumansBoth, 9, 10), true},
		{"both, chosen up to other ratings", rep(1, models.HumansBoth, 9, 10), rep(1, models.HumansBoth, 12, 13), false},
		{"both, other datasets", rep(1, models.HumansBoth, 9, 10), rep(2, models.HumansBoth, 9, 10), false},
		{"both against browser only", rep(1, models.HumansBoth, 9, 10), rep(1, models.HumansBrowser, 9, 10), false},
	} {
		if got := SameHumans(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: SameHumans = %v, want %v", tt.name, got, tt.want)
		}
		if got := SameHumans(tt.b, tt.a); got != tt.want {
			t.Errorf("%s (swapped): SameHumans = %v, want %v", tt.name, got, tt.want)
		}
	}
}
