package report

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestExportCarriesElapsedAndPausedTime: the JSON export's envelope says
// how long the run was going and how long it was paused, the figures of
// the API's elapsed_seconds and paused_seconds; a run not started has a
// null elapsed time, never 0. Before, the export had neither.
func TestExportCarriesElapsedAndPausedTime(t *testing.T) {
	start := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	// Ran 10 minutes, paused 14 hours overnight, continued, ran 5 minutes
	// and 250 ms more, finished.
	finished := start.Add(14*time.Hour + 15*time.Minute + 250*time.Millisecond)
	rep := gevalFixture()
	rep.Run.Status = models.RunSucceeded
	rep.Run.StartedAt, rep.Run.FinishedAt = &start, &finished
	rep.Run.StoppedMS = (14 * time.Hour).Milliseconds()

	envelope := func(r *Report) map[string]any {
		t.Helper()
		raw, _ := exportJSON(t, r)
		var doc struct {
			Envelope map[string]any `json:"envelope"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Envelope
	}
	env := envelope(rep)
	if got, ok := env["elapsed_seconds"].(float64); !ok || got != 900.25 {
		t.Errorf("elapsed_seconds = %v, want 900.25 (15m 00.25s going, the 14h paused left out)", env["elapsed_seconds"])
	}
	if got, ok := env["paused_seconds"].(float64); !ok || got != 14*3600 {
		t.Errorf("paused_seconds = %v, want %d", env["paused_seconds"], 14*3600)
	}
	// The same figures as the API's (both come from RunSeconds).
	elapsed, paused := RunSeconds(rep.Run, time.Now())
	if elapsed == nil || *elapsed != env["elapsed_seconds"] || paused != env["paused_seconds"] {
		t.Errorf("RunSeconds = %v, %v; the export says %v, %v", elapsed, paused, env["elapsed_seconds"], env["paused_seconds"])
	}

	queued := gevalFixture()
	queued.Run.Status, queued.Run.StartedAt, queued.Run.FinishedAt = models.RunQueued, nil, nil
	env = envelope(queued)
	if v, ok := env["elapsed_seconds"]; !ok || v != nil {
		t.Errorf("a run not started: elapsed_seconds = %v (present %v), want null", v, ok)
	}
	if v := env["paused_seconds"]; v != float64(0) {
		t.Errorf("a run not started: paused_seconds = %v, want 0", v)
	}
}
