package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestResetLinkRecheckedWhenUsed: a password reset link is issued only by
// an owner of every workspace of the account, and that rule is checked
// again when the link is opened and used. Otherwise a link issued while
// the account was an editor of the issuer's workspace alone still worked
// after the account made a workspace of its own (or joined one the issuer
// does not own), or after the issuer stopped being an owner: whoever held
// the link took the account over, and its workspaces with it.
func TestResetLinkRecheckedWhenUsed(t *testing.T) {
	for _, tc := range []struct {
		name string
		// change happens between issuing the link and using it.
		change func(t *testing.T, env *testEnv, owner, other, target models.User)
	}{
		{"the account made a workspace of its own", func(t *testing.T, env *testEnv, owner, other, target models.User) {
			if _, err := env.db.CreateWorkspace(context.Background(), "Mine", target.ID); err != nil {
				t.Fatal(err)
			}
		}},
		{"the account joined a workspace the issuer does not own", func(t *testing.T, env *testEnv, owner, other, target models.User) {
			ws, err := env.db.CreateWorkspace(context.Background(), "Theirs", other.ID)
			if err != nil {
				t.Fatal(err)
			}
			_, token, err := env.db.CreateInvite(context.Background(), ws.ID, models.RoleViewer, other.ID, models.InviteTTL)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := env.db.AcceptInvite(context.Background(), token, target.ID); err != nil {
				t.Fatal(err)
			}
		}},
		{"the issuer is no longer an owner", func(t *testing.T, env *testEnv, owner, other, target models.User) {
			if err := env.db.SetMemberRole(context.Background(), env.ws.ID, owner.ID, models.RoleEditor); err != nil {
				t.Fatal(err)
			}
		}},
		{"the issuer was removed", func(t *testing.T, env *testEnv, owner, other, target models.User) {
			if _, err := env.db.RemoveMember(context.Background(), env.ws.ID, owner.ID, false); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
				// A second owner, so the first can be demoted or removed.
				other := env.createUser(env.ws.ID, "other@a.test", models.RoleOwner)
				target := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
				rec := env.send(http.MethodPost, "/members/"+itoa(target.ID)+"/reset", nil, "", env.sessionCookie(owner))
				m := onceLinkRE.FindStringSubmatch(rec.Body.String())
				if rec.Code != http.StatusOK || m == nil || m[1] != "reset" {
					t.Fatalf("issue reset = %d, link %v", rec.Code, m)
				}
				token := m[2]
				tc.change(t, env, owner, other, target)

				if rec := env.get("/reset/" + token); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "no longer owns every workspace") {
					t.Errorf("reset page = %d, want 404 saying why (body %.300q)", rec.Code, rec.Body.String())
				}
				rec = env.send(http.MethodPost, "/reset/"+token, url.Values{"password": {"taken over passphrase"}}, "")
				if rec.Code != http.StatusNotFound || env.sessionFrom(rec) != nil {
					t.Errorf("reset = %d (session cookie %v), want 404 and no session", rec.Code, env.sessionFrom(rec))
				}
				if rec := env.login("ed@a.test", "taken over passphrase", "198.51.100.2"); rec.Code != http.StatusUnauthorized {
					t.Errorf("sign-in with the password the stale link set = %d, want 401", rec.Code)
				}
				if rec := env.login("ed@a.test", testPassword, "198.51.100.3"); rec.Code != http.StatusSeeOther {
					t.Errorf("sign-in with the account's own password = %d, want 303", rec.Code)
				}
			})
		})
	}
}
