package handlers

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestCostBeforeFirstPaidCall: a run of a judge with prices that has paid
// for no call yet (queued, or waiting for a judge that is down, or paused
// before its first answer) costs $0.00 so far, on its page and in the
// spending-cap note beside Continue (a cap binds only with prices), as its probes already read; "unknown"
// is for a judge without prices only.
func TestCostBeforeFirstPaidCall(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Priced", 10)
		in, out := 2.5, 10.0
		cap := 5.0
		runCost := regexp.MustCompile(`data-testid="run-cost">([^<]*)<`)
		for _, tc := range []struct {
			name   string
			priced bool
			want   string
		}{
			{"priced judge", true, "$0.00"},
			{"judge without prices", false, "unknown"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run := env.storedRun(d, tc.name, noisy(d.human, 0.5, 1), func(r *models.Run) {
					r.Simulated, r.JudgeSnapshot.Simulated = false, false
					r.Settings.SpendCapUSD = &cap
					if tc.priced {
						r.JudgeSnapshot.PriceInputPerMTok, r.JudgeSnapshot.PriceOutputPerMTok = &in, &out
					}
				})
				// Paused before any call was paid for: nothing counted.
				must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, cost_usd = NULL, calls = 0, prompt_tokens = 0, completion_tokens = 0 WHERE id = ?`,
					models.RunPaused, run.ID).Error)
				body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				m := runCost.FindStringSubmatch(body)
				if m == nil || m[1] != tc.want {
					t.Errorf("cost so far = %v, want %q", m, tc.want)
				}
				// A cap binds only with prices; its note then says what
				// the run has spent.
				if note := "more than the run has spent so far (" + tc.want + ")"; tc.priced && !strings.Contains(body, note) {
					t.Errorf("spending cap note lacks %q", note)
				}
			})
		}
	})
}
