package web

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestTeamProgressTextAtTheBound: a team count that stopped at the bound
// says "or more"; counts are written as the queue writes its others.
func TestTeamProgressTextAtTheBound(t *testing.T) {
	for _, tc := range []struct {
		v    ReviewQueueView
		want string
	}{
		{ReviewQueueView{TeamRated: 0, Samples: 1, RatedByMe: 0}, "Team progress: 0 of the run's 1 sample rated by at least one reviewer (ratings an owner excluded do not count); you rated 0."},
		{ReviewQueueView{TeamRated: models.TeamRatedBound, TeamRatedCapped: true, Samples: 250000, RatedByMe: 12},
			"Team progress: 100,000 or more of the run's 250,000 samples rated by at least one reviewer (ratings an owner excluded do not count); you rated 12."},
	} {
		if got := teamProgressText(tc.v); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	if !strings.Contains(teamProgressText(ReviewQueueView{TeamRated: 3, Samples: 30}), " 3 of the run's 30 samples") {
		t.Error("an uncapped count reads as it is")
	}
}
