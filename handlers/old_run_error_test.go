package handlers

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestOldRunErrorReadsWithoutTheCodePrefix: runs stored before the runner
// dropped the judge client's code-path prefix have an error beginning
// "judge: " (or "stopping the run: judge: " for one its judge's settings
// stopped). Their page, share link, downloaded report, export and API read
// as a new run's do ("This run failed: judge: the endpoint refused..."
// read as an internal trace); the stored row stays as it was.
func TestOldRunErrorReadsWithoutTheCodePrefix(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		// The judge client's own words (judge.OwnWords): a share link
		// keeps them, without the details.
		const detail = "the endpoint refused the API key (HTTP 401): check the key. Details: Incorrect API key provided"
		for _, tc := range []struct {
			name, stored, shown string
			stoppedBySettings   bool
			// shared is what a share link says, when it does not keep
			// the words shown (TestSharedFailedRunQuotesNoInternalError).
			shared string
		}{
			{"judge client error", "judge: " + detail, detail, false, ""},
			{"stopped by its judge's settings", "stopping the run: judge: " + detail, models.JudgeSettingsStop + ": " + detail, true, ""},
			// Only a leading prefix is the code path's.
			{"new-style error", "the run's spend cap was reached; judge: none", "the run's spend cap was reached; judge: none", false,
				"the run stopped on an internal error (the error itself is on the run's page"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				// A run of its own: reports are cached by the run's state,
				// which an older build's row does not change afterwards.
				runID := env.launch(env.demo().launchForm("1", "10"))
				env.waitRun(runID, 30*time.Second)
				link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(runID, 10)}, "expires": {"7d"}})
				// As stored by an older build: failed, every batch failed.
				must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, error = ?, batches_failed = batches_done WHERE id = ?`,
					models.RunFailed, tc.stored, runID).Error)
				var stored models.Run
				must(t, env.db.Gorm.First(&stored, runID).Error)
				if stored.Error != tc.stored || stored.StoppedByJudgeSettings() != tc.stoppedBySettings {
					t.Fatalf("stored error %q (stopped by settings %v), want %q (%v)", stored.Error, stored.StoppedByJudgeSettings(), tc.stored, tc.stoppedBySettings)
				}
				pages := map[string]string{
					"run page":   fmt.Sprintf("/runs/%d", runID),
					"share page": link,
				}
				for what, path := range pages {
					rec := env.getAs(path)
					body := html.UnescapeString(rec.Body.String())
					want := tc.shown
					if i := strings.Index(want, " Details: "); i >= 0 && what == "share page" {
						// A share link quotes none of the judge's details
						// (TestSharedFailedRunQuotesNoJudgeDetails).
						want = strings.TrimSuffix(want[:i], ".") + " (the judge's own message is on the run's page"
					}
					if tc.shared != "" && what == "share page" {
						want = tc.shared
					}
					if rec.Code != http.StatusOK || !strings.Contains(body, "This run failed: "+want) {
						t.Errorf("%s (%s): %d, does not say %q", what, path, rec.Code, "This run failed: "+want)
					}
					if tc.shown != tc.stored && strings.Contains(body, tc.stored) {
						t.Errorf("%s shows the stored text %q", what, tc.stored)
					}
				}
				api := decode[map[string]any](t, env.get(fmt.Sprintf("/api/v1/runs/%d", runID)), http.StatusOK)
				if api["error"] != tc.shown {
					t.Errorf("API error %q, want %q", api["error"], tc.shown)
				}
				export := decode[map[string]any](t, env.get(fmt.Sprintf("/api/v1/runs/%d/export.json", runID)), http.StatusOK)
				rep, _ := export["report"].(map[string]any)
				if r, _ := rep["run"].(map[string]any); r == nil || r["status_reason"] != tc.shown {
					t.Errorf("export's report.run %v, want status_reason %q", rep["run"], tc.shown)
				}
			})
		}
	})
}
