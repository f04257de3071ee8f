package models_test

import (
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestJudgeBaseURLMustBeHTTP: a judge's base URL without http:// or
// https:// is refused when saved, with the address to write (QA: the form
// and the API saved "api.openai.com/v1", "localhost:11434/v1" and
// "htps://...", and every run on such a judge failed at once, its page
// offering a resume that could only fail again).
func TestJudgeBaseURLMustBeHTTP(t *testing.T) {
	tests := []struct {
		base string
		want string // "" when accepted
	}{
		{"https://api.openai.com/v1", ""},
		{" http://localhost:11434/v1 ", ""},
		{"https://RES.openai.azure.com/openai/deployments/D?api-version=2024-10-21", ""},
		{"api.openai.com/v1", "write https://api.openai.com/v1"},
		{"localhost:11434/v1", "write http://localhost:11434/v1"},
		{"127.0.0.1:8000/v1", "write http://127.0.0.1:8000/v1"},
		{"https//api.openai.com/v1", "write https://api.openai.com/v1"},
		{"http:/localhost:8080/v1", "write http://localhost:8080/v1"},
		{"htps://api.openai.com/v1", "not htps://"},
		{"ftp://example.com/v1", "not ftp://"},
		{"https:///v1", "must start with http:// or https://"},
	}
	for _, tc := range tests {
		t.Run(tc.base, func(t *testing.T) {
			err := models.CheckJudgeBaseURL(tc.base)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if models.ErrorCode(err) != models.EInvalid || !strings.Contains(models.ErrorMessage(err), tc.want) {
				t.Errorf("message %q (code %s), want %q", models.ErrorMessage(err), models.ErrorCode(err), tc.want)
			}
		})
	}
	// Saving checks it, for the API as for the form; the simulated judge
	// has no base URL of its own.
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		j := models.Judge{WorkspaceID: ws.ID, Name: "Local", BaseURL: "localhost:11434/v1", Model: "llama3.1:8b"}
		if err := db.SaveJudge(ctx, &j); models.ErrorCode(err) != models.EInvalid {
			t.Errorf("saving a base URL without a scheme: %v, want refused", err)
		}
	})
}

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
