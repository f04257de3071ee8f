package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// A run that stopped before any batch was done reads so in its counters
// (QA: a run refused with a 401 showed "Failed batches 0" beside "Status:
// failed", and "Batches 0 / 20"; one that stopped before planning showed
// "Batches 0 / 0").
func TestRunStoppedBeforeAnyBatchCounters(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run, _ := env.runOnFakeJudge("Wrong key judge", refusingJudge(http.StatusUnauthorized, "Incorrect API key provided"), env.demo().launchForm("5", "15"))
		if run.BatchesDone != 0 || run.BatchesTotal == 0 {
			t.Fatalf("run with %d of %d batches done: want none done of a planned run", run.BatchesDone, run.BatchesTotal)
		}
		body := html.UnescapeString(env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String())
		checkExplained(t, body, map[string][]string{
			"progress-none-done": {fmt.Sprintf("None of the %d batches done: the run stopped before its first answer", run.BatchesTotal)},
			"failed-none-done":   {"none done"},
			// QA: "Calls 0" though a call was sent and refused.
			"calls-stop-note": {"not counting the calls refused or failed as the run stopped"},
		})
		for _, not := range []string{`data-field="failed"`, fmt.Sprintf("/ <span data-field=\"batches_total\">%d", run.BatchesTotal)} {
			if strings.Contains(body, not) {
				t.Errorf("the run page still shows %q", not)
			}
		}
		// A run with batches done keeps its counters.
		ok := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 30*time.Second)
		body = env.get(fmt.Sprintf("/runs/%d", ok.ID)).Body.String()
		if !strings.Contains(body, `data-field="failed"`) || strings.Contains(body, "none done") || strings.Contains(body, `data-testid="calls-stop-note"`) {
			t.Errorf("a run with batches done lost its counters")
		}
	})
}

// A run whose judge address cannot be called at all (saved before base
// URLs had to start with http(s)://) is not offered a resume, which keeps
// that address and can only fail (QA: "The run stopped before its batches
// were planned. Resuming starts it."): the page says to fix the judge's
// base URL first, links the judge and says the address to write.
func TestRunWithUncallableJudgeAddressSaysFixItFirst(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "Old local judge", BaseURL: "http://localhost:11434/v1", Model: "llama3.1:8b", TimeoutSeconds: 5,
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
		must(t, env.db.SaveJudge(context.Background(), &j))
		// As saved before base URLs were checked.
		must(t, env.db.Gorm.Exec(`UPDATE judges SET base_url = ? WHERE id = ?`, "localhost:11434/v1", j.ID).Error)
		f := env.demo().launchForm("5", "15")
		f.Set("judge", strconv.FormatInt(j.ID, 10))
		run := env.waitRun(env.launch(f), 30*time.Second)
		if run.Status != models.RunFailed {
			t.Fatalf("run %s, want failed", run.Status)
		}
		body := html.UnescapeString(env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String())
		checkExplained(t, body, map[string][]string{
			"no-scores-fix-address": {"Fix the judge's base URL first.", "write http://localhost:11434/v1",
				"resuming this one can only fail", fmt.Sprintf(`href="/judges/%d"`, j.ID), "launch a new run"},
			"progress-none-done": {"Batches not planned: the run stopped before planning them"},
		})
		// Its error reads without the judge client's code-path prefix
		// (QA: "This run failed: judge: base URL ... is not an http(s) URL").
		if strings.HasPrefix(run.Error, "judge: ") || !strings.Contains(body, `This run failed: base URL "localhost:11434/v1" is not an http(s) URL`) {
			t.Errorf("the run's error %q is not shown as it should read", run.Error)
		}
		for _, not := range []string{"Resuming starts it", `data-testid="resume-form"`, "0 / 0", "failed: judge: "} {
			if strings.Contains(body, not) {
				t.Errorf("the run page says %q", not)
			}
		}
	})
}

// A resume of a run whose judge address cannot be called is refused with
// what its page says (fix the judge's base URL first, naming the judge
// and its page), and the run stays as it was: the page offers no resume,
// but a form posted from an older page, the command line's resume (the
// same Runner.Resume) or a script could still send it, and it only failed
// again.
func TestResumeRefusedWhileTheJudgeAddressCannotBeCalled(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "Old local judge", BaseURL: "http://localhost:11434/v1", Model: "llama3.1:8b", TimeoutSeconds: 5,
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
		must(t, env.db.SaveJudge(ctx, &j))
		must(t, env.db.Gorm.Exec(`UPDATE judges SET base_url = ? WHERE id = ?`, "localhost:11434/v1", j.ID).Error)
		f := env.demo().launchForm("5", "15")
		f.Set("judge", strconv.FormatInt(j.ID, 10))
		run := env.waitRun(env.launch(f), 30*time.Second)
		if run.Status != models.RunFailed || !run.Resumable() {
			t.Fatalf("run %s (resumable %v), want a failed run its status would let resume", run.Status, run.Resumable())
		}
		runPath := fmt.Sprintf("/runs/%d", run.ID)
		rec := env.postForm(runPath+"/resume", nil)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != runPath {
			t.Fatalf("resume: %d to %q, want 303 back to the run", rec.Code, rec.Header().Get("Location"))
		}
		flash := flashOf(rec)
		for _, w := range []string{"Fix the judge's base URL first", `"Old local judge"`, fmt.Sprintf("/judges/%d", j.ID),
			"write http://localhost:11434/v1", "resuming it can only fail", "launch a new run"} {
			if !strings.Contains(flash, w) {
				t.Errorf("the refusal %q does not say %q", flash, w)
			}
		}
		after, err := env.db.FindRun(ctx, env.ws.ID, run.ID)
		must(t, err)
		if after.Status != models.RunFailed || after.Resumes != run.Resumes || after.Error != run.Error {
			t.Errorf("after the refused resume: %s, %d resumes, %q; want it unchanged", after.Status, after.Resumes, after.Error)
		}
	})
}
