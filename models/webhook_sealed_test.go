package models_test

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestWebhookAddressSealedAtRest: a webhook address (often a secret in
// itself) is stored encrypted when the server has a secret key, read back
// whole, sealed at start-up when it was stored before a key existed,
// re-encrypted by a key rotation, and refused, saying why, under another
// key; without any key it is stored as before and still works.
func TestWebhookAddressSealedAtRest(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		const addr = "https://hooks.example.com/services/T000/B000/very-secret-part"
		stored := func() string {
			t.Helper()
			var v string
			if err := db.Gorm.Table("webhooks").Where("workspace_id = ?", ws.ID).Pluck("url", &v).Error; err != nil {
				t.Fatal(err)
			}
			return v
		}
		read := func() models.Webhook {
			t.Helper()
			w, err := db.FindWebhook(ctx, ws.ID)
			if err != nil {
				t.Fatal(err)
			}
			return w
		}

		// No secret key: stored as before, and it works.
		db.Secrets = nil
		if _, err := db.SaveWebhook(ctx, models.Webhook{WorkspaceID: ws.ID, URL: addr, OnFinished: true}); err != nil {
			t.Fatal(err)
		}
		if got := stored(); got != addr {
			t.Fatalf("without a secret key the address is stored as %q", got)
		}
		before := read()
		if before.URL != addr || before.URLProblem != "" {
			t.Fatalf("read back %q (%s)", before.URL, before.URLProblem)
		}

		// A key configured: the start-up sealing encrypts it, keeping the
		// webhook's revision (an open settings form still saves).
		first := newSealer(t)
		db.Secrets = models.NewSecrets(first, "")
		if _, err := db.SealStoredKeys(ctx); err != nil {
			t.Fatal(err)
		}
		if got := stored(); !models.IsSealed(got) || strings.Contains(got, "very-secret") {
			t.Fatalf("after start-up sealing the address is stored as %q", got)
		}
		if w := read(); w.URL != addr || w.Revision() != before.Revision() {
			t.Errorf("sealed at start-up: read %q, revision %s (was %s)", w.URL, w.Revision(), before.Revision())
		}

		// Saved with a key: sealed at once.
		if _, err := db.SaveWebhook(ctx, models.Webhook{WorkspaceID: ws.ID, URL: addr + "-2", OnFailed: true}); err != nil {
			t.Fatal(err)
		}
		if got := stored(); !models.IsSealed(got) || strings.Contains(got, "very-secret") {
			t.Fatalf("saved with a key, the address is stored as %q", got)
		}
		if w := read(); w.URL != addr+"-2" {
			t.Errorf("read back %q", w.URL)
		}

		// Rotation re-encrypts it with the new key.
		second := newSealer(t)
		if _, err := db.RotateSecretKey(ctx, first, second); err != nil {
			t.Fatal(err)
		}
		db.Secrets = models.NewSecrets(second, "")
		if w := read(); w.URL != addr+"-2" || w.URLProblem != "" {
			t.Errorf("after rotation: %q (%s)", w.URL, w.URLProblem)
		}
		db.Secrets = models.NewSecrets(first, "")
		if w := read(); w.URL != "" || !strings.Contains(w.URLProblem, "another secret key") {
			t.Errorf("under the old key after rotation: URL %q, problem %q", w.URL, w.URLProblem)
		}

		// A server with no secret key says which settings would open it.
		db.Secrets = nil
		if w := read(); w.URL != "" || !strings.Contains(w.URLProblem, "BATCHEVAL_SECRET_KEY") {
			t.Errorf("with no secret key: URL %q, problem %q", w.URL, w.URLProblem)
		}
		db.Secrets = models.NewSecrets(first, "")

		// A judge key sealed by the same key is not a webhook address.
		judgeKey, err := first.Seal(addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Gorm.Table("webhooks").Where("workspace_id = ?", ws.ID).Update("url", judgeKey).Error; err != nil {
			t.Fatal(err)
		}
		if w := read(); w.URL != "" || w.URLProblem == "" {
			t.Errorf("a sealed judge key opened as a webhook address: %q", w.URL)
		}
	})
}

func TestWebhookSite(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/secret": "https://hooks.slack.com/…",
		"http://10.0.0.5:8080/hook?token=x":             "http://10.0.0.5:8080/…",
		"::not a url":                                   "an address",
	} {
		if got := models.WebhookSite(in); got != want {
			t.Errorf("WebhookSite(%q) = %q, want %q", in, got, want)
		}
	}
}
