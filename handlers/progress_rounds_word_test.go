package handlers

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestProgressRoundsWord: a running run judging two criteria side by side
// says "1 round per criterion" for one round, "5 rounds per criterion"
// for five, not "1 rounds".
func TestProgressRoundsWord(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Rounds", 10)
		line := regexp.MustCompile(`>(\d+ rounds? per criterion)<`)
		for _, tc := range []struct {
			rounds int
			want   string
		}{
			{1, "1 round per criterion"},
			{5, "5 rounds per criterion"},
		} {
			run := env.storedRun(d, fmt.Sprintf("%d rounds", tc.rounds), noisy(d.human, 0.5, 1), func(r *models.Run) {
				r.Settings.Rounds = tc.rounds
				r.RubricSnapshot.Criteria = []evaluator.Criterion{{Name: "Quality", Lo: 1, Hi: 5, HumanColumn: "q"}, {Name: "Clarity", Lo: 1, Hi: 5}}
			})
			must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, run.ID).Error)
			m := line.FindStringSubmatch(env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String())
			if m == nil || m[1] != tc.want {
				t.Errorf("%d rounds: progress says %v, want %q", tc.rounds, m, tc.want)
			}
		}
	})
}
