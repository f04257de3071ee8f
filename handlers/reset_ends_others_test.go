package handlers

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestUsingAResetLinkEndsTheOthers: setting a password with one reset link
// ends every other open reset link of the account, in the same
// transaction; another account's links keep working. The other links used
// to keep working for their 24 hours, so whoever held an older copy (a
// link pasted in a chat, the first of two issued) could set the password
// again after its owner had.
func TestUsingAResetLinkEndsTheOthers(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		other := env.createUser(env.ws.ID, "other@a.test", models.RoleOwner)
		target := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		bystander := env.createUser(env.ws.ID, "vi@a.test", models.RoleViewer)
		link := func(issuer, u models.User) string {
			t.Helper()
			_, token, err := env.db.CreatePasswordReset(ctx, issuer.ID, u.ID, models.ResetTTL)
			if err != nil {
				t.Fatal(err)
			}
			return token
		}
		first, second, third := link(owner, target), link(other, target), link(owner, target)
		theirs := link(owner, bystander)

		rec := env.send(http.MethodPost, "/reset/"+second, url.Values{"password": {"the new passphrase"}}, "")
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("reset with the second link = %d, want 303", rec.Code)
		}
		for _, token := range []string{first, third} {
			if rec := env.get("/reset/" + token); rec.Code != http.StatusNotFound {
				t.Errorf("another reset link of the account opens (%d), want 404", rec.Code)
			}
			rec := env.send(http.MethodPost, "/reset/"+token, url.Values{"password": {"a later passphrase"}}, "")
			if rec.Code != http.StatusNotFound || env.sessionFrom(rec) != nil {
				t.Errorf("another reset link of the account sets a password (%d, session %v), want 404", rec.Code, env.sessionFrom(rec))
			}
		}
		if rec := env.login("ed@a.test", "a later passphrase", "198.51.100.2"); rec.Code != http.StatusUnauthorized {
			t.Errorf("sign-in with the password a spent link set = %d, want 401", rec.Code)
		}
		if rec := env.login("ed@a.test", "the new passphrase", "198.51.100.3"); rec.Code != http.StatusSeeOther {
			t.Errorf("sign-in with the new password = %d, want 303", rec.Code)
		}
		if rec := env.get("/reset/" + theirs); rec.Code != http.StatusOK {
			t.Errorf("another account's reset link = %d, want 200 (it is not theirs to end)", rec.Code)
		}
	})
}
