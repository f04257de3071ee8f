package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestJudgeErrorsReadWithoutCodePrefix: a failed call's error, a failed
// repair's problem and a rate-limited run's waiting message are stored
// with the judge client's code-path prefix "judge: " (by this build's
// runner and by older ones), and the batch page, the list of calls, the
// sample page, the review queue, the run page and the API showed it
// ("the judge's call failed: judge: the endpoint..."). Only the run's own
// error was shown without it (models.Run.ShownError). Every one of them
// now reads without it; the stored text is untouched.
func TestJudgeErrorsReadWithoutCodePrefix(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		d := env.demo()
		runID := env.launch(d.launchForm("1", "5"))
		env.waitRun(runID, 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		row := rows[0]
		scores, err := env.db.ListRowScores(ctx, runID, row.ID)
		must(t, err)
		if len(scores) == 0 {
			t.Fatal("the sample has no stored score")
		}
		batchID := scores[0].BatchID
		const callErr = "judge: the endpoint could not be reached (network error). Details: connection refused"
		const repairErr = "repair request failed: judge: the endpoint timed out after 2m0s"
		must(t, env.db.Gorm.Model(&models.RunBatch{ID: batchID}).Select("status", "error", "error_kind", "problems").
			Updates(models.RunBatch{Status: models.BatchFailed, Error: callErr, ErrorKind: "network", Problems: []string{repairErr}}).Error)
		must(t, env.db.Gorm.Exec(`UPDATE run_scores SET score = NULL WHERE run_id = ? AND batch_id = ?`, runID, batchID).Error)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET batches_failed = 1 WHERE id = ?`, runID).Error)
		env.h.forgetReports(runID)

		callShown := "the endpoint could not be reached (network error). Details: connection refused"
		repairShown := "repair request failed: the endpoint timed out after 2m0s"
		queue := (queueQuery{RunID: runID, Criterion: scores[0].CriterionIndex, Order: orderDisagreement, Seed: defaultQueueSeed})
		var queuePath string
		for i := range rows {
			if p := queue.url(d.dataset.ID, i); strings.Contains(env.get(p).Body.String(), fmt.Sprintf("/samples/%d\"", row.ID)) {
				queuePath = p
				break
			}
		}
		if queuePath == "" {
			t.Fatal("the review queue never shows the sample")
		}
		pages := []struct {
			name, path string
			want       []string
		}{
			{"batch page", fmt.Sprintf("/runs/%d/batches/%d", runID, batchID), []string{callShown, repairShown}},
			// The calls' list and the run page's failures card quote an example of each cause.
			{"list of calls", fmt.Sprintf("/runs/%d/batches?status=failed", runID), []string{callShown}},
			{"run page", fmt.Sprintf("/runs/%d", runID), []string{callShown}},
			{"sample page", fmt.Sprintf("/runs/%d/samples/%d", runID, row.ID), []string{"the judge's call failed: " + callShown, repairShown}},
			{"review queue", queuePath, []string{"the judge's call failed: " + callShown}},
		}
		check := func(name, body string, want []string) {
			for _, w := range want {
				if !strings.Contains(body, escapeText(w)) {
					t.Errorf("%s does not say %q", name, w)
				}
			}
			for _, prefixed := range []string{"judge: the endpoint", "failed: judge:"} {
				if strings.Contains(body, prefixed) {
					t.Errorf("%s shows the code-path prefix: %q", name, prefixed)
				}
			}
		}
		for _, p := range pages {
			rec := env.get(p.path)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d", p.path, rec.Code)
			}
			check(p.name, rec.Body.String(), p.want)
		}
		// A run waiting for its rate-limited judge.
		const wait = "judge: the endpoint is rate limiting (HTTP 429). The run waits 1m0s (as the judge asked), sending nothing, and goes on by itself at 2026-03-04 10:01:00 UTC."
		waitShown := strings.TrimPrefix(wait, "judge: ")
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, waiting_since = ?, waiting_error = ? WHERE id = ?`,
			models.RunRunning, time.Now().UTC(), wait, runID).Error)
		env.h.forgetReports(runID)
		check("run page", env.get(fmt.Sprintf("/runs/%d", runID)).Body.String(), []string{waitShown})
		api := decode[map[string]any](t, env.get(fmt.Sprintf("/api/v1/runs/%d", runID)), http.StatusOK)
		if api["waiting_error"] != waitShown {
			t.Errorf("API waiting_error %q, want %q", api["waiting_error"], waitShown)
		}
		var stored models.Run
		must(t, env.db.Gorm.First(&stored, runID).Error)
		if stored.WaitingError != wait {
			t.Errorf("the stored text changed: %q", stored.WaitingError)
		}
	})
}
