package models_test

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestAPITokenScope (account45): a token is made full (what its person's
// role allows; the default) or read-only, stores its scope and is read
// back with it when it authenticates; another scope is refused naming the
// two there are, and no token is made.
func TestAPITokenScope(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		u, err := db.CreateUser(ctx, ws.ID, models.RoleEditor, models.NewUser{Email: "e@a.test", Name: "e", Password: "correct horse battery"})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			scope, want string
			refused     bool
		}{
			{"", models.TokenScopeFull, false},
			{models.TokenScopeFull, models.TokenScopeFull, false},
			{models.TokenScopeRead, models.TokenScopeRead, false},
			{"write", "", true},
			{"READ", "", true},
		} {
			before, err := db.ListAPITokens(ctx, ws.ID, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			tok, secret, err := db.CreateScopedAPIToken(ctx, ws.ID, u.ID, "script "+tc.scope, 0, tc.scope)
			if tc.refused {
				after, _ := db.ListAPITokens(ctx, ws.ID, u.ID)
				if models.ErrorCode(err) != models.EInvalid || !strings.Contains(models.ErrorMessage(err), `"full"`) ||
					!strings.Contains(models.ErrorMessage(err), `"read"`) || len(after) != len(before) {
					t.Errorf("scope %q: %v (%d tokens, was %d), want EInvalid naming full and read, no token made", tc.scope, err, len(after), len(before))
				}
				continue
			}
			if err != nil {
				t.Fatalf("scope %q: %v", tc.scope, err)
			}
			got, _, _, role, err := db.AuthenticateAPIToken(ctx, secret)
			if err != nil || got.Scope != tc.want || tok.Scope != tc.want || got.ReadOnly() != (tc.want == models.TokenScopeRead) {
				t.Errorf("scope %q: made %q, read back %q (%v), want %q", tc.scope, tok.Scope, got.Scope, err, tc.want)
			}
			// The membership's role is the person's: the scope narrows
			// what the token may do in the handlers, not the role.
			if role != models.RoleEditor {
				t.Errorf("scope %q: role %s, want editor", tc.scope, role)
			}
		}
	})
}
