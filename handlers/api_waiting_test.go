package handlers

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestAPIRunSaysWhyItWaits: a script polling a run through the API sees
// what the run page shows: that the run waits for its judge, the judge's
// error with what happens next, and the retries counter.
func TestAPIRunSaysWhyItWaits(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		runID := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(runID, 30*time.Second)
		// Stored with the judge client's code-path prefix, as the runner
		// writes it; shown without (models.ShownJudgeText).
		const why = "judge: the endpoint is rate limiting (HTTP 429). The run waits 10m0s, as the judge asked"
		const shown = "the endpoint is rate limiting (HTTP 429). The run waits 10m0s, as the judge asked"
		tests := []struct {
			name        string
			sql         string
			args        []any
			wantWaiting bool
			wantError   string
			wantRetries int
		}{
			{
				name:        "running",
				sql:         `UPDATE runs SET status = ?, finished_at = NULL, waiting_since = NULL, retries = 2 WHERE id = ?`,
				args:        []any{models.RunRunning, runID},
				wantRetries: 2,
			},
			{
				name:        "waiting for its judge",
				sql:         `UPDATE runs SET status = ?, finished_at = NULL, waiting_since = ?, waiting_error = ?, retries = 5 WHERE id = ?`,
				args:        []any{models.RunRunning, time.Now().UTC(), why, runID},
				wantWaiting: true, wantError: shown, wantRetries: 5,
			},
			{
				// A finished run waits for nothing, whatever was left.
				name:        "cancelled",
				sql:         `UPDATE runs SET status = ?, finished_at = ? WHERE id = ?`,
				args:        []any{models.RunCancelled, time.Now().UTC(), runID},
				wantRetries: 5,
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				must(t, env.db.Gorm.Exec(tt.sql, tt.args...).Error)
				rec := env.get(fmt.Sprintf("/api/v1/runs/%d", runID))
				// As a script reads it: the keys must be there.
				got := decode[map[string]any](t, rec, http.StatusOK)
				if got["waiting_for_judge"] != tt.wantWaiting || got["waiting_error"] != tt.wantError || got["retries"] != float64(tt.wantRetries) {
					t.Errorf("waiting_for_judge %v, waiting_error %v, retries %v; want %v, %q, %d",
						got["waiting_for_judge"], got["waiting_error"], got["retries"], tt.wantWaiting, tt.wantError, tt.wantRetries)
				}
			})
		}
	})
}
