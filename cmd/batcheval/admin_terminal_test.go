package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/internal/mail/mailtest"
	"github.com/batcheval/batcheval/models"
)

// TestAdminOutputHoldsNoTerminalControls: names are typed by anyone signed
// in (an account's display name, a workspace's name) and may hold an
// escape character; the operator's commands print them to a terminal,
// where "\x1b]0;...\a" retitles the window, "\x1b[2J" clears the screen
// and other sequences hide or rewrite what the command said. Every admin
// command that prints such a name prints it without control characters:
// reset-link --mail (it printed the account's name raw) and network
// grant/revoke (the workspace's name raw), as list-users already did.
func TestAdminOutputHoldsNoTerminalControls(t *testing.T) {
	ctx := context.Background()
	smtpd := mailtest.Start(t)
	dbPath := filepath.Join(t.TempDir(), "app.db")
	env := map[string]string{"BATCHEVAL_DB": dbPath, "BATCHEVAL_SEED_DEMO": "false", "BATCHEVAL_LOG_LEVEL": "error",
		"BATCHEVAL_SMTP_URL": smtpd.URL(), "BATCHEVAL_MAIL_FROM": "BatchEval <batcheval@company.com>"}
	getenv := func(k string) string { return env[k] }

	const evil = "Eve\x1b]0;owned\a\x1b[2J\x1b[1A\u009b31m"
	c := &Config{SQLitePath: dbPath, Addr: "127.0.0.1:0"}
	db, def, err := openWorkspace(ctx, c, c.logger(&bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.CreateFirstOwner(ctx, def.ID, models.NewUser{Email: "eve@company.com", Name: "Eve", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	// A display name with controls is refused now (models.CheckDisplayName);
	// one stored before that rule is written directly.
	if err := db.Gorm.Exec(`UPDATE users SET name = ? WHERE id = ?`, evil, u.ID).Error; err != nil {
		t.Fatal(err)
	}
	u.Name = evil
	ws, err := db.CreateWorkspace(ctx, "Lab "+evil, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Eve owns both workspaces alone, so releasing her address hands them
	// over (the release prints the workspaces' names too).
	if _, err := db.CreateUser(ctx, def.ID, models.RoleEditor, models.NewUser{Email: "ada@company.com", Name: "Ada", Password: "long enough password"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for _, args := range [][]string{
		{"reset-link", "--email", "eve@company.com", "--mail", "--base-url", "https://be.company.com"},
		{"reset-link", "--email", "eve@company.com", "--base-url", "https://be.company.com"},
		{"list-users"},
		{"network", "grant", ws.Slug},
		{"network", "grant", ws.Slug},
		{"network", "list"},
		{"network", "revoke", ws.Slug},
		{"network", "revoke", ws.Slug},
		{"release-address", "--email", "eve@company.com", "--reason", "test", "--transfer-to", "ada@company.com"},
	} {
		var out, errOut bytes.Buffer
		if err := admin(ctx, args, getenv, strings.NewReader(""), &out, &errOut); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if strings.ContainsAny(out.String(), "\x1b\a\u009b") {
			t.Errorf("%q printed a terminal control sequence of a typed name:\n%q", args, out.String())
		}
	}
}
