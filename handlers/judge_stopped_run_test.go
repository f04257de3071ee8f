package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

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
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
		}))
		defer srv.Close()
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "Wrong key judge", BaseURL: srv.URL + "/v1", Model: "m", TimeoutSeconds: 5,
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
		if err := env.db.SaveJudge(context.Background(), &j); err != nil {
			t.Fatal(err)
		}
		f := env.demo().launchForm("5", "15")
		f.Set("judge", strconv.FormatInt(j.ID, 10))
		id := env.launch(f)
		run := env.waitRun(id, 60*time.Second)
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
