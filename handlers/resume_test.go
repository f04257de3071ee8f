package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestResumeRunFromPage: a run that ended with a batch without an answer
// offers a resume button; posting it sends that batch again and the run
// ends complete; a complete run offers none and refuses a resume.
func TestResumeRunFromPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		runID := env.launch(env.demo().launchForm("1", "10"))
		run := env.waitRun(runID, 30*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s (error %q), want succeeded", run.Status, run.Error)
		}
		runPath := fmt.Sprintf("/runs/%d", runID)
		if body := env.get(runPath).Body.String(); strings.Contains(body, `data-testid="resume"`) {
			t.Errorf("a complete run offers to resume")
		}
		// Make one batch a gap, as a judge failure would have left it.
		bs, err := env.db.ListBatches(ctx, runID)
		if err != nil || len(bs) == 0 {
			t.Fatalf("batches: %v (%d)", err, len(bs))
		}
		gap := bs[0]
		must(t, env.db.Gorm.Exec(`UPDATE run_batches SET status = ? WHERE id = ?`, models.BatchFailed, gap.ID).Error)
		must(t, env.db.Gorm.Exec(`UPDATE run_scores SET score = NULL WHERE batch_id = ?`, gap.ID).Error)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET batches_failed = 1, missing_scores = ? WHERE id = ?`, len(gap.RowIDs), runID).Error)

		if body := env.get(runPath).Body.String(); !strings.Contains(body, `data-testid="resume"`) {
			t.Fatalf("a run with a failed batch offers no resume button")
		}
		callsBefore := run.Calls
		steps := []struct {
			name      string
			wantFlash string
		}{
			{"resume the run with a gap", "ok:"},
			{"resume it again while it is queued or done", "error:"},
		}
		for _, s := range steps {
			rec := env.postForm(runPath+"/resume", nil)
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != runPath {
				t.Errorf("%s: status %d to %q, want 303 to %s", s.name, rec.Code, rec.Header().Get("Location"), runPath)
			}
			if got := rec.Header().Get("Set-Cookie"); !strings.Contains(got, s.wantFlash) {
				t.Errorf("%s: flash cookie %q, want kind %s", s.name, got, s.wantFlash)
			}
			if s.wantFlash == "ok:" {
				run = env.waitRun(runID, 30*time.Second)
			}
		}
		if run.Status != models.RunSucceeded || run.BatchesFailed != 0 || run.MissingScores != 0 || run.BatchesDone != run.BatchesTotal {
			t.Errorf("after resume: %s, %d/%d done, %d failed, %d missing", run.Status, run.BatchesDone, run.BatchesTotal, run.BatchesFailed, run.MissingScores)
		}
		if got := run.Calls - callsBefore; got != 1 {
			t.Errorf("resume made %d calls, want 1 (only the gap)", got)
		}
	})
}

// TestWaitingForJudgeShown: a run whose judge is down says so on its page
// (with what to do about it), in its progress events and in /metrics.
func TestWaitingForJudgeShown(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		runID := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(runID, 30*time.Second)
		// The state a worker records when its breaker opens.
		// (and the retries its attempts so far needed, shown as counted).
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, waiting_since = ?, waiting_error = ?, retries = 7 WHERE id = ?`,
			models.RunRunning, time.Now().UTC(), "judge: the endpoint failed (HTTP 503)", runID).Error)
		body := env.get(fmt.Sprintf("/runs/%d", runID)).Body.String()
		for _, want := range []string{models.StatusWaitingForJudge, "HTTP 503", `data-testid="retries">7<`,
			// What to do: start the server, or cancel, fix the judge, relaunch.
			`data-testid="waiting-help"`, `href="/judges"`, "cancel this run", "launch again", "keeps the judge settings it started with"} {
			if !strings.Contains(body, want) {
				t.Errorf("run page does not show %q", want)
			}
		}
		metrics := env.scrapeMetrics()
		if metrics.Code != http.StatusOK || !strings.Contains(metrics.Body.String(), `batcheval_runs{status="waiting for judge"} 1`) {
			t.Errorf("/metrics: status %d, no waiting run counted:\n%.2000s", metrics.Code, metrics.Body.String())
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestResumeNotOfferedWhenEveryBatchAnswered: a run that ended with gaps
// only because scores in answered batches could not be read has nothing a
// resume would send. Its page offers no resume button but says why and
// what would help, and a posted resume is refused with that reason instead
// of queuing the run for nothing.
func TestResumeNotOfferedWhenEveryBatchAnswered(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		runID := env.launch(env.demo().launchForm("1", "10"))
		run := env.waitRun(runID, 30*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s (error %q), want succeeded", run.Status, run.Error)
		}
		// One unreadable score in an answered batch, as the runner records it.
		bs, err := env.db.ListBatches(ctx, runID)
		if err != nil || len(bs) == 0 {
			t.Fatalf("batches: %v (%d)", err, len(bs))
		}
		must(t, env.db.Gorm.Exec(`UPDATE run_scores SET score = NULL WHERE batch_id = ? AND row_id = ?`, bs[0].ID, bs[0].RowIDs[0]).Error)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, missing_scores = 1, error = ? WHERE id = ?`,
			models.RunFinishedWithGaps, "1 of 150 scores are missing (failed calls or unreadable answers)", runID).Error)

		runPath := fmt.Sprintf("/runs/%d", runID)
		body := env.get(runPath).Body.String()
		if strings.Contains(body, `data-testid="resume"`) {
			t.Errorf("a run whose every batch was answered offers to resume")
		}
		if !strings.Contains(body, `data-testid="resume-nothing"`) || !strings.Contains(body, "resuming would send nothing") {
			t.Errorf("the page does not say why there is no resume")
		}
		rec := env.postForm(runPath+"/resume", nil)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != runPath {
			t.Errorf("resume: status %d to %q, want 303 to %s", rec.Code, rec.Header().Get("Location"), runPath)
		}
		if got := rec.Header().Get("Set-Cookie"); !strings.Contains(got, "error:") {
			t.Errorf("resume: flash cookie %q, want an error", got)
		}
		after, err := env.db.FindRun(ctx, env.ws.ID, runID)
		if err != nil {
			t.Fatal(err)
		}
		if after.Status != models.RunFinishedWithGaps || after.Resumes != run.Resumes {
			t.Errorf("after the refused resume: %s, %d resumes; want finished_with_gaps, %d", after.Status, after.Resumes, run.Resumes)
		}
	})
}
