package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

func TestLocalMode(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.0.0.2:8080", true},
		{"localhost:8080", true},
		{"[::1]:8080", true},
		{"0.0.0.0:8080", false},
		{":8080", false},
		{"[::]:8080", false},
		{"192.168.1.10:8080", false},
		{"example.com:8080", false},
		{"not an address", false},
	} {
		if got := (&Config{Addr: tc.addr}).LocalMode(); got != tc.want {
			t.Errorf("LocalMode(%q) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

// TestAdminCreateUserAndNetworkRefusal: with no account, serving on a
// network address is refused with a way out; the admin command makes the
// owner (password from stdin, none by default).
func TestAdminCreateUserAndNetworkRefusal(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "app.db")
	env := map[string]string{"BATCHEVAL_DB": dbPath, "BATCHEVAL_SEED_DEMO": "false"}
	getenv := func(k string) string { return env[k] }
	ctx := context.Background()
	var out, errOut bytes.Buffer

	err := run(ctx, []string{"serve", "--addr", "0.0.0.0:0"}, getenv, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "refusing to listen") || !strings.Contains(err.Error(), "admin create-user") {
		t.Fatalf("serve on 0.0.0.0 with no account: %v", err)
	}

	create := func(stdin string, args ...string) error {
		return admin(ctx, append([]string{"create-user"}, args...), getenv, strings.NewReader(stdin), &out, &errOut)
	}
	owner := []string{"--email", "Ada@Example.com", "--name", "Ada", "--role", "owner"}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"no password", "", owner, "no password"},
		{"short password", "short\n", owner, "at least"},
		{"bad role", "a long enough password\n", []string{"--email", "a@b.c", "--name", "A", "--role", "admin"}, "not a role"},
	} {
		if err := create(tc.stdin, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error about %q", tc.name, err, tc.want)
		}
	}
	if err := create("a long enough password\n", owner...); err != nil {
		t.Fatal(err)
	}
	if err := create("another long password\n", owner...); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second create-user with the same address: %v", err)
	}

	db, err := models.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, err := db.Authenticate(ctx, "ada@example.com", "a long enough password")
	if err != nil {
		t.Fatalf("the created owner cannot sign in: %v", err)
	}
	ws, _ := db.EnsureDefaultWorkspace(ctx)
	if role, err := db.MemberRole(ctx, ws.ID, u.ID); err != nil || role != models.RoleOwner {
		t.Errorf("role = %q (%v), want owner", role, err)
	}
	// The setup page is closed by the command's account too.
	if _, err := db.CreateFirstOwner(ctx, ws.ID, models.NewUser{Email: "x@example.com", Name: "X", Password: "a long enough password"}); models.ErrorCode(err) != models.EConflict {
		t.Errorf("setup after create-user: %v, want conflict", err)
	}
}
