package models_test

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestStoredBaseURLFragmentIsHidden: a judge stored with a bare key after
// # in its base URL (before fragments were refused) is flagged for its
// owner to move it to the key field and shown with the fragment redacted,
// on the judge and on a run's recorded judge; the check that saving and
// `batcheval run` apply refuses it. None of them looked past a name=.
func TestStoredBaseURLFragmentIsHidden(t *testing.T) {
	const secret = "sk-abc123def456"
	base := "https://h.example/v1#" + secret
	j := models.Judge{Name: "old", BaseURL: base, Model: "m"}
	if !j.BaseURLHoldsCredentials() {
		t.Error("BaseURLHoldsCredentials = false for a bare key after #")
	}
	if got := j.ShownBaseURL(); got != "https://h.example/v1#REDACTED" {
		t.Errorf("ShownBaseURL = %q", got)
	}
	if got := j.Snapshot().Shown().BaseURL; strings.Contains(got, secret) {
		t.Errorf("a run's judge shows %q", got)
	}
	err := models.CheckBaseURLCredentials(base)
	if models.ErrorCode(err) != models.EInvalid || strings.Contains(models.ErrorMessage(err), secret) ||
		!strings.Contains(models.ErrorMessage(err), "must not have a fragment") {
		t.Errorf("CheckBaseURLCredentials = %v, want it refused without the key", err)
	}
	if (models.Judge{BaseURL: "https://h.example/v1?api-version=1", Model: "m"}).BaseURLHoldsCredentials() {
		t.Error("a base URL with no secret is flagged")
	}
}
