package handlers

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestMemberTokensNameTheirRoleAndWhoLeft (tryout46): on an owner's API
// tokens page, the members' tokens say whose role a full token acts with
// ("their role (editor)"), and mark a person an owner removed "(no longer
// a member)". Before, every full token there read "your role", the owner's
// reading it, though the token acts with its member's role (an editor's
// token cannot manage judges however much the owner may), and a removed
// member's tokens were listed like anyone else's.
func TestMemberTokensNameTheirRoleAndWhoLeft(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		viewer := env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)
		gone := env.createUser(env.ws.ID, "gone@a.test", models.RoleEditor)
		for _, tk := range []struct {
			user  models.User
			name  string
			scope string
		}{
			{editor, "editor-full", models.TokenScopeFull},
			{viewer, "viewer-read", models.TokenScopeRead},
			{gone, "gone-full", models.TokenScopeFull},
			{owner, "owner-own", models.TokenScopeFull},
		} {
			if _, _, err := env.db.CreateScopedAPIToken(ctx, env.ws.ID, tk.user.ID, tk.name, 0, tk.scope); err != nil {
				t.Fatal(err)
			}
		}
		oc := env.sessionCookie(owner)
		if rec := env.send(http.MethodPost, "/members/"+itoa(gone.ID)+"/remove", nil, "", oc); rec.Code != http.StatusSeeOther {
			t.Fatalf("removing a member = %d %.300s", rec.Code, rec.Body)
		}
		rec := env.send(http.MethodGet, "/tokens", nil, "", oc)
		if rec.Code != http.StatusOK {
			t.Fatalf("tokens page = %d", rec.Code)
		}
		body := rec.Body.String()
		i := strings.Index(body, `data-testid="member-tokens"`)
		if i < 0 {
			t.Fatalf("no members' tokens table: %.500s", body)
		}
		rows := regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(body[i:], -1)
		text := func(s string) string {
			return strings.Join(strings.Fields(html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(s, " "))), " ")
		}
		for _, tc := range []struct {
			token, scope string
			left         bool
		}{
			{"editor-full", "their role (editor)", false},
			{"viewer-read", "read only", false},
			{"gone-full", "their role", true},
		} {
			var row string
			for _, r := range rows {
				if strings.Contains(r[1], ">"+tc.token+"<") {
					row = r[1]
				}
			}
			if row == "" {
				t.Errorf("%s: not in the members' tokens", tc.token)
				continue
			}
			scope := regexp.MustCompile(`data-testid="member-token-scope">([^<]*)<`).FindStringSubmatch(row)
			if scope == nil || scope[1] != tc.scope {
				t.Errorf("%s: access shown %v, want %q (row: %s)", tc.token, scope, tc.scope, text(row))
			}
			if strings.Contains(row, "your role") {
				t.Errorf("%s: a member's token says \"your role\": %s", tc.token, text(row))
			}
			if got := strings.Contains(row, `data-testid="token-member-left"`); got != tc.left {
				t.Errorf("%s: marked as no longer a member = %v, want %v: %s", tc.token, got, tc.left, text(row))
			}
		}
		// The owner's own list keeps "your role": it is theirs.
		own := body[:i]
		if !strings.Contains(own, ">owner-own<") || !strings.Contains(own, `data-testid="token-scope-shown">your role<`) {
			t.Errorf("the owner's own token no longer says \"your role\": %.300s", text(own))
		}
	})
}
