package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

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

// TestRemovedMembersTokensStayRevoked: removing a member revokes their API
// tokens in that workspace. A token only refused while its person was out
// came back to life, with the new role, the day they were invited again
// (the removal may have been for the leaked token itself); the tokens page
// now shows it revoked, and their tokens elsewhere keep working.
func TestRemovedMembersTokensStayRevoked(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		dora := env.createUser(env.ws.ID, "dora@a.test", models.RoleViewer)
		_, inA := env.apiToken(env.ws.ID, dora.ID)
		b, err := env.db.CreateWorkspace(ctx, "B", dora.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, inB := env.apiToken(b.ID, dora.ID)
		call := func(token string) int {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			return rec.Code
		}
		if got := call(inA); got != http.StatusOK {
			t.Fatalf("dora's token before removal = %d, want 200", got)
		}
		if rec := env.send(http.MethodPost, fmt.Sprintf("/members/%d/remove", dora.ID), nil, "", env.sessionCookie(owner)); rec.Code != http.StatusSeeOther {
			t.Fatalf("removing dora = %d, want 303", rec.Code)
		}
		steps := []struct {
			name string
			do   func()
		}{
			{"removed", func() {}},
			{"invited again as editor", func() {
				_, token, err := env.db.CreateInvite(ctx, env.ws.ID, models.RoleEditor, owner.ID, time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := env.db.AcceptInvite(ctx, token, dora.ID); err != nil {
					t.Fatal(err)
				}
			}},
		}
		for _, st := range steps {
			st.do()
			if got := call(inA); got != http.StatusUnauthorized {
				t.Errorf("%s: dora's old token of A = %d, want 401", st.name, got)
			}
			if got := call(inB); got != http.StatusOK {
				t.Errorf("%s: dora's token of B = %d, want 200 (only A removed her)", st.name, got)
			}
		}
		list, err := env.db.ListAPITokens(ctx, env.ws.ID, dora.ID)
		if err != nil || len(list) != 1 || list[0].RevokedAt == nil {
			t.Errorf("dora's tokens in A after removal: %+v (%v), want the one token revoked", list, err)
		}
	})
}
