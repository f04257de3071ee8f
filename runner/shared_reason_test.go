package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// TestSharedReasonKeepsTheRunnersOwnWords: share links show a failed
// run's reason only when models.Run.SharedError knows its form; the
// runner's own stops (the spending cap, a judge whose settings no call can
// succeed with) must read there as they are written, not as an internal
// error.
func TestSharedReasonKeepsTheRunnersOwnWords(t *testing.T) {
	caps := []error{
		&SpendCapError{CapUSD: 0.5, SpentUSD: 0.4999, NextUSD: 0.0012},
		&SpendCapError{CapUSD: 0.000001, SpentUSD: 0.0000015, NextUSD: 0.0000004, ProbeUSD: 0.0000002},
	}
	for _, err := range caps {
		for _, stored := range []string{err.Error(), fmt.Sprintf("generate G-Eval steps for %q: %v", "clarity", err)} {
			if got := (models.Run{Status: models.RunFailed, Error: stored}).SharedError(); got != err.Error() {
				t.Errorf("SharedError of %q = %q, want %q", stored, got, err.Error())
			}
		}
	}
	je := &judge.Error{Kind: judge.KindAuth, Status: 401, Attempts: 1, Message: "Incorrect API key provided: sk-abc1****wxyz"}
	stored := (&judgeUnusable{err: je}).Error()
	want := models.JudgeSettingsStop + ": the endpoint refused the API key (HTTP 401): check the key (the judge's own message is on the run's page"
	if got := (models.Run{Status: models.RunFailed, Error: stored}).SharedError(); !strings.HasPrefix(got, want) {
		t.Errorf("SharedError of %q = %q, want it to open with %q", stored, got, want)
	}
}
