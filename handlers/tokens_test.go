package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestTokensPage: tokens need an account; a name is required; a person
// sees and revokes their own tokens, an owner also the members'; revocation
// is audited.
func TestTokensPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		// Local mode: no account, so no token (the API needs none here).
		if rec := env.get("/tokens"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="tokens-need-account"`) {
			t.Errorf("local-mode tokens page = %d, want the account notice", rec.Code)
		}
		if rec := env.postForm("/tokens", url.Values{"name": {"x"}}); rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("local-mode token creation = %d, want 422", rec.Code)
		}

		alice := env.createUser(env.ws.ID, "alice@a.test", models.RoleViewer)
		bob := env.createUser(env.ws.ID, "bob@a.test", models.RoleOwner)
		as, bs := env.sessionCookie(alice), env.sessionCookie(bob)
		tests := []struct {
			name string
			form url.Values
			want int
			text string
		}{
			{"no name", url.Values{"name": {"  "}}, http.StatusUnprocessableEntity, "give the token a name"},
			{"name too long", url.Values{"name": {strings.Repeat("n", 101)}}, http.StatusUnprocessableEntity, "at most 100"},
			{"named", url.Values{"name": {"laptop <script>"}}, http.StatusCreated, "laptop &lt;script&gt;"},
		}
		for _, tc := range tests {
			rec := env.send(http.MethodPost, "/tokens", tc.form, "", as)
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.text) {
				t.Errorf("%s: %d, want %d with %q: %.300s", tc.name, rec.Code, tc.want, tc.text, rec.Body)
			}
		}
		list, err := env.db.ListAPITokens(t.Context(), env.ws.ID, alice.ID)
		if err != nil || len(list) != 1 {
			t.Fatalf("alice's tokens: %v %v", list, err)
		}
		// Carol, an editor, neither sees nor revokes Alice's token; Bob,
		// owner, sees it among the members' tokens and revokes it.
		carol := env.createUser(env.ws.ID, "carol@a.test", models.RoleEditor)
		cs := env.sessionCookie(carol)
		if rec := env.send(http.MethodGet, "/tokens", nil, "", cs); strings.Contains(rec.Body.String(), list[0].Prefix) {
			t.Errorf("carol (editor) sees alice's token")
		}
		if rec := env.send(http.MethodGet, "/tokens", nil, "", bs); !strings.Contains(rec.Body.String(), `data-testid="member-tokens"`) ||
			!strings.Contains(rec.Body.String(), list[0].Prefix) {
			t.Errorf("bob (owner) does not see alice's token among the members' tokens")
		}
		revoke := fmt.Sprintf("/tokens/%d/revoke", list[0].ID)
		if rec := env.send(http.MethodPost, revoke, nil, "", cs); rec.Code != http.StatusNotFound {
			t.Errorf("carol revoking alice's token = %d, want 404", rec.Code)
		}
		if rec := env.send(http.MethodPost, revoke, nil, "", bs); rec.Code != http.StatusSeeOther {
			t.Errorf("bob (owner) revoking alice's token = %d, want 303", rec.Code)
		}
		if got, err := env.db.ListAPITokens(t.Context(), env.ws.ID, alice.ID); err != nil || got[0].RevokedAt == nil {
			t.Errorf("alice's token after bob revoked it: %+v %v", got, err)
		}
		if rec := env.send(http.MethodPost, revoke, nil, "", as); rec.Code != http.StatusSeeOther {
			t.Errorf("alice revoking her (already revoked) token = %d, want 303", rec.Code)
		}
		actions := env.auditActions()
		if !hasAction(actions, auditTokenCreated) || !hasAction(actions, auditTokenRevoked) {
			t.Errorf("audit log %v lacks token creation or revocation", actions)
		}
	})
}
