package handlers

import (
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestElapsedStopsWhilePaused: the run page's Elapsed and the API's
// elapsed_seconds count only the time the run was going; the paused time
// is said apart. A run paused overnight after 10 minutes read "14h 10m".
func TestElapsedStopsWhilePaused(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	paused := start.Add(10 * time.Minute)
	now := paused.Add(14 * time.Hour)
	run := models.Run{Status: models.RunPaused, StartedAt: &start, PausedAt: &paused, BatchesTotal: 10, BatchesDone: 5}
	p := runProgress(run, 0, now)
	if !strings.HasPrefix(p.Elapsed, "10m 00s") || !strings.Contains(p.Elapsed, "14h 00m paused") {
		t.Errorf("a run paused overnight after 10 minutes shows Elapsed %q; want 10m 00s with the 14h paused said apart", p.Elapsed)
	}
	api := apiRun(run)
	if api.ElapsedSeconds == nil || *api.ElapsedSeconds != 600 || api.PausedSeconds < 14*3600 {
		t.Errorf("API elapsed_seconds %v, paused_seconds %g; want 600 and at least 14 hours", api.ElapsedSeconds, api.PausedSeconds)
	}
	if api := apiRun(models.Run{Status: models.RunQueued}); api.ElapsedSeconds != nil {
		t.Errorf("a run not started has elapsed_seconds %g, want null", *api.ElapsedSeconds)
	}
}
