package handlers

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestCancelledRunWithoutAnswersSaysThereAreNone: a run cancelled before
// its judge answered anything (a judge that was down, or a run cancelled
// while queued) said "the results below cover only the batches answered
// before that" above "No scores yet.", as if scores were still to come.
// It says the run was cancelled and that the judge answered nothing, as a
// failed run without answers does.
func TestCancelledRunWithoutAnswersSaysThereAreNone(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		// Nothing listens on port 1: every call is refused.
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "Down", BaseURL: "http://127.0.0.1:1/v1", Model: "m", TimeoutSeconds: 5,
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
		must(t, env.db.SaveJudge(ctx, &j))
		form := env.demo().launchForm("2", "10")
		form.Set("judge", strconv.FormatInt(j.ID, 10))
		id := env.launch(form)
		path := fmt.Sprintf("/runs/%d", id)
		if rec := env.postForm(path+"/cancel", nil); rec.Code != 303 {
			t.Fatalf("cancel = %d", rec.Code)
		}
		run := env.waitRun(id, 60*time.Second)
		if run.Status != models.RunCancelled || run.BatchesDone != 0 {
			t.Fatalf("run %s with %d batches done, want cancelled with none", run.Status, run.BatchesDone)
		}
		body := env.get(path).Body.String()
		for _, want := range []string{`data-testid="run-cancelled"`, `data-testid="no-scores"`, "stopped before the judge answered anything"} {
			if !strings.Contains(body, want) {
				t.Errorf("the cancelled run's page lacks %q", want)
			}
		}
		for _, not := range []string{"No scores yet.", "the results below cover only"} {
			if strings.Contains(body, not) {
				t.Errorf("the cancelled run's page says %q, though it has no answer", not)
			}
		}
	})
}
