package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// A run whose judge refuses the API key stops at its first call with
// nothing answered (QA, newcomer with a wrong key). Its page said "This run
// failed: stopping the run: judge: ...", then "0 of 5 batches have no
// answer" above a Resume button, and "No scores yet." where a failed run
// without scores says what happened and to check the judge; its report
// said the judge was never asked. Now the error speaks of the judge's
// settings, the resume counts every unanswered batch, and the page shows
// the "No results" statement with the judge's page and Test connection.
func TestRunStoppedByRefusedKeySaysWhatToDo(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run, j := env.runOnFakeJudge("Wrong key judge", refusingJudge(http.StatusUnauthorized, "Incorrect API key provided"), env.demo().launchForm("5", "15"))
		id := run.ID
		if run.Status != models.RunFailed || run.BatchesDone != 0 || run.BatchesTotal == 0 {
			t.Fatalf("run %s with %d of %d batches done: want a failed run that planned its batches and answered none",
				run.Status, run.BatchesDone, run.BatchesTotal)
		}
		if strings.Contains(run.Error, "stopping the run") || strings.Contains(run.Error, "judge: ") ||
			!strings.Contains(run.Error, "the run stopped, since no call can succeed until the judge's settings are corrected: the endpoint refused the API key (HTTP 401)") {
			t.Errorf("run error %q: want the judge's settings named, without the code path", run.Error)
		}
		body := env.get(fmt.Sprintf("/runs/%d", id)).Body.String()
		for _, want := range []string{
			fmt.Sprintf(`data-testid="resume-what">None of the run&#39;s %d batches has an answer yet. Resuming sends them all.<`, run.BatchesTotal),
			`data-testid="no-scores"`,
			"The run stopped before the judge answered anything",
			fmt.Sprintf(`href="/judges/%d" data-testid="no-scores-judge"`, j.ID),
			"Test connection",
		} {
			if !strings.Contains(body, want) {
				t.Errorf("run page lacks %q", want)
			}
		}
		for _, not := range []string{"0 of ", "No scores yet.", "stopping the run"} {
			if strings.Contains(body, not) {
				t.Errorf("run page says %q", not)
			}
		}
		rep := env.get(fmt.Sprintf("/runs/%d/report.html", id)).Body.String()
		if strings.Contains(rep, "before the judge was asked anything") || !strings.Contains(rep, "The run stopped before the judge answered anything") {
			t.Errorf("report does not say the run stopped before any answer")
		}
	})
}
