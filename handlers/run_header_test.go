package handlers

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestRunHeaderFollowsTheRun: the header badge says what the progress
// block says ("running", not the "queued" it was launched as), a finished
// run shows "Cost" and "Took" instead of "Cost so far" and "Time left",
// token counts have thousands separators, and the page refreshes itself
// without script only while the run is going.
func TestRunHeaderFollowsTheRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		runID := env.launch(env.demo().launchForm("1", "10"))
		env.waitRun(runID, 30*time.Second)
		runPath := fmt.Sprintf("/runs/%d", runID)
		refresh := `<noscript><meta http-equiv="refresh" content="10"></noscript>`
		tests := []struct {
			name    string
			sql     string
			args    []any
			want    []string
			wantNot []string
		}{
			{
				name:    "running",
				sql:     `UPDATE runs SET status = ?, finished_at = NULL, prompt_tokens = 1234000, completion_tokens = 567 WHERE id = ?`,
				args:    []any{models.RunRunning, runID},
				want:    []string{`<span class="badge running" data-testid="run-status" data-run-status>running</span>`, "Cost so far", "Time left", ">1,234,567<", refresh, `data-testid="refresh-hint"`},
				wantNot: []string{">Took<", ">queued<"},
			},
			{
				name:    "waiting for its judge",
				sql:     `UPDATE runs SET status = ?, finished_at = NULL, waiting_since = ?, waiting_error = 'judge: could not reach the endpoint' WHERE id = ?`,
				args:    []any{models.RunRunning, time.Now().UTC(), runID},
				want:    []string{`<span class="badge waiting" data-testid="run-status" data-run-status>waiting for judge</span>`, refresh},
				wantNot: []string{">queued<"},
			},
			{
				name:    "finished",
				sql:     `UPDATE runs SET status = ?, finished_at = ?, waiting_since = NULL WHERE id = ?`,
				args:    []any{models.RunSucceeded, time.Now().UTC(), runID},
				want:    []string{`data-run-status>succeeded</span>`, ">Cost<", ">Took<", ">1,234,567<"},
				wantNot: []string{"Cost so far", "Time left", "http-equiv=\"refresh\"", `data-testid="refresh-hint"`},
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				must(t, env.db.Gorm.Exec(tt.sql, tt.args...).Error)
				body := env.get(runPath).Body.String()
				for _, w := range tt.want {
					if !strings.Contains(body, w) {
						t.Errorf("run page lacks %q", w)
					}
				}
				for _, w := range tt.wantNot {
					if strings.Contains(body, w) {
						t.Errorf("run page has %q", w)
					}
				}
			})
		}
	})
}
