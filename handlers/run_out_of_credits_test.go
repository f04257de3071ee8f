package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/a-h/templ"

	"github.com/batcheval/batcheval/models"
)

// TestRunOutOfCreditsSaysToAddCredits: a run its judge's account stopped
// at the first call (OpenRouter's 402 "requires more credits", OpenAI's
// 429 insufficient_quota) told the user to correct the judge's address,
// model or key, which are right. The page now says the account is out of
// credits and to add some, then resume; a refused key keeps the old
// advice alone.
func TestRunOutOfCreditsSaysToAddCredits(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		for _, tc := range []struct {
			name    string
			status  int
			message string
			credits bool
		}{
			{"OpenRouter 402", http.StatusPaymentRequired, "This request requires more credits <b>now</b>", true},
			{"refused key", http.StatusUnauthorized, "bad key", false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				run, _ := env.runOnFakeJudge("Judge "+tc.name, refusingJudge(tc.status, tc.message), d.launchForm("1", "10"))
				if run.Status != models.RunFailed || !run.StoppedByJudgeSettings() {
					t.Fatalf("run %s (%q): want failed, stopped", run.Status, run.Error)
				}
				if got := strings.Contains(run.Error, "then resume the run"); got != tc.credits {
					t.Errorf("the run's error %q says to resume it = %v, want %v", run.Error, got, tc.credits)
				}
				body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				if !strings.Contains(body, `data-testid="no-scores-fix-first"`) {
					t.Fatalf("no fix-first advice: %.600s", body)
				}
				if got := strings.Contains(body, `data-testid="no-scores-credits"`) && strings.Contains(body, "add credits with the provider"); got != tc.credits {
					t.Errorf("says to add credits = %v, want %v", got, tc.credits)
				}
				if tc.credits && (strings.Contains(body, "<b>now</b>") || !strings.Contains(body, templ.EscapeString("<b>now</b>"))) {
					t.Errorf("the endpoint's message is not shown escaped")
				}
			})
		}
	})
}
