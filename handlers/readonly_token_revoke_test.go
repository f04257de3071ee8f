package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestReadOnlyTokenRevokesOnlyItself (tryout46): a read-only token may
// revoke itself (how a script gives it up) but no other token, whatever
// its person's role: revoking the person's own full token, another
// member's token, or an id that does not exist is refused with 403 saying
// the token is read-only and where to revoke instead, and the target
// keeps working. Before, an owner's read-only token revoked every other
// token of its person (the full one a nightly job runs on included), so a
// leaked "read only" token could switch them all off.
func TestReadOnlyTokenRevokesOnlyItself(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		api := newAPIClient(t, env)
		for _, role := range []models.Role{models.RoleViewer, models.RoleEditor, models.RoleOwner} {
			person := env.createUser(env.ws.ID, "ro-"+string(role)+"@a.test", role)
			other := env.createUser(env.ws.ID, "other-"+string(role)+"@a.test", models.RoleEditor)
			reader, readSecret, err := env.db.CreateScopedAPIToken(ctx, env.ws.ID, person.ID, "reader", 0, models.TokenScopeRead)
			if err != nil {
				t.Fatal(err)
			}
			full, fullSecret, err := env.db.CreateScopedAPIToken(ctx, env.ws.ID, person.ID, "nightly", 0, models.TokenScopeFull)
			if err != nil {
				t.Fatal(err)
			}
			othersTok, othersSecret := env.apiToken(env.ws.ID, other.ID)
			for _, tc := range []struct {
				what   string
				id     int64
				secret string // the target's secret, still working after
			}{
				{"its person's full token", full.ID, fullSecret},
				{"another member's token", othersTok.ID, othersSecret},
				{"a token that does not exist", othersTok.ID + 1000, ""},
			} {
				rec := api.json(http.MethodPost, "/api/v1/tokens/"+strconv.FormatInt(tc.id, 10)+"/revoke", readSecret, nil)
				var e APIError
				_ = json.Unmarshal(rec.Body.Bytes(), &e)
				if rec.Code != http.StatusForbidden || e.Error.Code != "forbidden" ||
					!strings.Contains(e.Error.Message, "read-only") || !strings.Contains(e.Error.Message, "/tokens") {
					t.Errorf("%s's read-only token revoking %s = %d %q, want 403 saying it is read-only and where to revoke", role, tc.what, rec.Code, e.Error.Message)
				}
				if tc.secret != "" {
					if rec := api.get("/api/v1/account", tc.secret); rec.Code != http.StatusOK {
						t.Errorf("%s: after %s's read-only token tried to revoke it, it answers %d, want 200", tc.what, role, rec.Code)
					}
				}
			}
			// Itself: allowed, and it stops working at once.
			rec := api.json(http.MethodPost, "/api/v1/tokens/"+strconv.FormatInt(reader.ID, 10)+"/revoke", readSecret, nil)
			if rec.Code != http.StatusOK {
				t.Errorf("%s's read-only token revoking itself = %d %.300s", role, rec.Code, rec.Body)
			}
			if rec := api.get("/api/v1/projects", readSecret); rec.Code != http.StatusUnauthorized {
				t.Errorf("%s's revoked read-only token = %d, want 401", role, rec.Code)
			}
			// The full token still revokes the others as before.
			rec = api.json(http.MethodPost, "/api/v1/tokens/"+strconv.FormatInt(full.ID, 10)+"/revoke", fullSecret, nil)
			if rec.Code != http.StatusOK {
				t.Errorf("%s's full token revoking itself = %d %.300s", role, rec.Code, rec.Body)
			}
		}
	})
}
