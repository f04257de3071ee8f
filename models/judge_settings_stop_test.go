package models_test

import (
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestStoppedByJudgeSettings: a failed run the runner stopped because no
// call can succeed with its judge's settings is known by its error, as
// written now and as written before; other failures are not.
func TestStoppedByJudgeSettings(t *testing.T) {
	tests := []struct {
		status, err string
		want        bool
	}{
		{models.RunFailed, models.JudgeSettingsStop + ": the endpoint refused the API key (HTTP 401): check the key", true},
		{models.RunFailed, "stopping the run: judge: the endpoint answered 404 Not Found: check the base URL", true},
		{models.RunFailed, "every batch of round 1 failed", false},
		{models.RunFailed, "", false},
		{models.RunCancelled, models.JudgeSettingsStop + ": the endpoint refused the API key (HTTP 401)", false},
	}
	for _, tt := range tests {
		if got := (models.Run{Status: tt.status, Error: tt.err}).StoppedByJudgeSettings(); got != tt.want {
			t.Errorf("%s run with error %q: StoppedByJudgeSettings() = %v, want %v", tt.status, tt.err, got, tt.want)
		}
	}
}
