package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// A failed run without scores whose failure resuming cannot fix (the judge
// refused the key: the run stopped, since no call can succeed until the
// judge's settings are corrected) showed its Resume box above the "No
// results" advice to fix the judge first, and offered "Compare with..." for
// a run with nothing to compare. Now the advice comes first and says
// resuming will fail again until the judge is fixed, the Resume box says
// so too, and no comparison is offered, from the run or to it. A run whose
// calls failed for a reason a resume can outlive (a 400 here: the run
// does not stop for it) keeps the Resume box first.
func TestFailedRunWithoutScoresPutsFixingTheJudgeFirst(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		// Two runs of the simulated judge, with scores to compare.
		var scored models.Run
		for range 2 {
			scored = env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
			if scored.Status != models.RunSucceeded {
				t.Fatalf("the simulated judge's run %s: %s", scored.Status, scored.Error)
			}
		}
		tests := []struct {
			name       string
			status     int
			fixFirst   bool
			stopsOnKey bool
		}{
			{"refused key", http.StatusUnauthorized, true, true},
			{"rejected parameters", http.StatusBadRequest, false, false},
		}
		var noScoreRuns []int64
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				run, _ := env.runOnFakeJudge("Judge "+tt.name, refusingJudge(tt.status, "no"), d.launchForm("1", "10"))
				noScoreRuns = append(noScoreRuns, run.ID)
				if run.Status != models.RunFailed || run.StoppedByJudgeSettings() != tt.stopsOnKey {
					t.Fatalf("run %s (%q): want failed, stopped by the judge's settings = %v", run.Status, run.Error, tt.stopsOnKey)
				}
				body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				advice := strings.Index(body, `data-testid="no-scores"`)
				resume := strings.Index(body, `data-testid="resume-form"`)
				if advice < 0 || resume < 0 {
					t.Fatalf("run page: advice at %d, resume box at %d; want both", advice, resume)
				}
				if got := advice < resume; got != tt.fixFirst {
					t.Errorf("advice before the resume box = %v, want %v", got, tt.fixFirst)
				}
				for _, w := range []string{`data-testid="resume-will-fail"`, `data-testid="no-scores-fix-first"`, "resuming it will fail the same way until the judge is fixed", "resume this run (below)"} {
					if got := strings.Contains(body, w); got != tt.fixFirst {
						t.Errorf("run page says %q = %v, want %v", w, got, tt.fixFirst)
					}
				}
				if !tt.fixFirst && !strings.Contains(body, "resume this run (above)") {
					t.Errorf("the advice does not point to the resume box above it")
				}
				if strings.Contains(body, `data-testid="compare-form"`) {
					t.Errorf("a run without scores offers Compare with…")
				}
			})
		}
		// The scored run is offered comparisons, but not with runs that have no score.
		body := env.get(fmt.Sprintf("/runs/%d", scored.ID)).Body.String()
		if !strings.Contains(body, `data-testid="compare-form"`) {
			t.Fatalf("the scored run offers no comparison with the other scored run")
		}
		for _, id := range noScoreRuns {
			if strings.Contains(body, fmt.Sprintf(`<option value="%d">`, id)) {
				t.Errorf("the scored run offers a comparison with run %d, which has no score", id)
			}
		}
	})
}
