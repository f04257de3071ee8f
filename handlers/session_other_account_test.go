package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestSignInOverAnotherAccountsSession: signing in as one account in a
// browser still signed in as another (a shared computer; "Sign in" again
// without signing out) starts a session that holds nothing of the other
// account's. The new session kept the workspace the other account had
// chosen, so its first page told the new account "You are no longer a
// member of workspace X: an owner removed you", naming a workspace it had
// never been in, and refused its first form ("nothing you sent was
// saved"). Signing in again as the same account keeps its workspace.
func TestSignInOverAnotherAccountsSession(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		ada := env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
		secret, err := env.db.CreateWorkspace(ctx, "Ada private workspace", ada.ID)
		must(t, err)
		bob := env.createUser(env.ws.ID, "bob@a.test", models.RoleEditor)
		for _, tc := range []struct {
			name, email string
			want        int64 // the workspace the new session holds (0: none chosen yet)
		}{
			{"another account", bob.Email, 0},
			{"the same account", ada.Email, secret.ID},
		} {
			t.Run(tc.name, func(t *testing.T) {
				adas := env.workspaceCookie(mustUser(t, env, ada.ID), secret.ID)
				rec := env.send(http.MethodPost, "/login", url.Values{"email": {tc.email}, "password": {testPassword}}, "", adas)
				session := env.sessionFrom(rec)
				if rec.Code != http.StatusSeeOther || session == nil {
					t.Fatalf("sign in as %s: %d, session cookie %v", tc.email, rec.Code, session)
				}
				if session.Value == adas.Value {
					t.Errorf("the session token was not renewed at sign-in")
				}
				sm := env.h.Sessions
				sctx, err := sm.Load(ctx, session.Value)
				must(t, err)
				if got := sm.GetInt64(sctx, sessWorkspaceID); got != tc.want {
					t.Errorf("the session works in workspace %d, want %d", got, tc.want)
				}
				page := env.send(http.MethodGet, "/", nil, "", session)
				body := page.Body.String()
				if page.Code != http.StatusOK || strings.Contains(body, "no longer a member") {
					t.Errorf("first page as %s: %d %.300q", tc.email, page.Code, body)
				}
				if tc.email != ada.Email && strings.Contains(body, secret.Name) {
					t.Errorf("%s's first page names %s's workspace %q", tc.email, ada.Email, secret.Name)
				}
				// The first form of the new session is taken.
				form := url.Values{"name": {"from " + tc.name}}
				if rec := env.send(http.MethodPost, "/projects", form, "", session); rec.Code != http.StatusSeeOther {
					t.Errorf("first form as %s: %d %.300q", tc.email, rec.Code, rec.Body.String())
				}
			})
		}
	})
}
