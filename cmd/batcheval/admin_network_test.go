package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAdminNetwork: the operator grants and revokes a workspace's private
// network by slug with `batcheval admin network`, and lists who has it;
// mistakes are refused saying what to write.
func TestAdminNetwork(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "app.db")
	env := map[string]string{"BATCHEVAL_DB": dbPath, "BATCHEVAL_SEED_DEMO": "false", "BATCHEVAL_LOG_LEVEL": "error"}
	getenv := func(k string) string { return env[k] }
	ctx := context.Background()

	c := &Config{SQLitePath: dbPath, Addr: "127.0.0.1:0"}
	db, def, err := openWorkspace(ctx, c, c.logger(&bytes.Buffer{}))
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.CreateFirstOwner(ctx, def.ID, models.NewUser{Email: "o@x.test", Name: "O", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := db.CreateWorkspace(ctx, "Lab\tteam", u.ID)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	for _, tc := range []struct {
		args    []string
		wantOut string
		wantErr string
	}{
		{[]string{"network", "grant", ws.Slug}, "granted: workspace \"" + ws.Slug + "\"", ""},
		{[]string{"network", "grant", ws.Slug}, "already had the grant", ""},
		{[]string{"network", "list"}, "granted ", ""},
		{[]string{"network", "revoke", ws.Slug}, "revoked: workspace", ""},
		{[]string{"network", "revoke", ws.Slug}, "had no grant", ""},
		{[]string{"network", "grant"}, "", "needs one workspace"},
		{[]string{"network", "grant", "default"}, "", "default workspace always"},
		{[]string{"network", "grant", "nope"}, "", `no workspace has the slug or id "nope"`},
		{[]string{"network", "allow", ws.Slug}, "", "write list, grant or revoke"},
		{[]string{"network", "list", ws.Slug}, "", "takes no workspace"},
	} {
		var out, errOut bytes.Buffer
		err := admin(ctx, tc.args, getenv, strings.NewReader(""), &out, &errOut)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%q: %v, want an error saying %q", tc.args, err, tc.wantErr)
		case tc.wantErr == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case !strings.Contains(out.String(), tc.wantOut):
			t.Errorf("%q printed %q, want %q", tc.args, out.String(), tc.wantOut)
		}
		if tc.args[1] == "list" && tc.wantErr == "" {
			if !strings.Contains(out.String(), `"Lab\tteam"`) || !strings.Contains(out.String(), "yes (default workspace)") {
				t.Errorf("list: %q, want the name quoted and the default workspace's line", out.String())
			}
		}
	}
}
