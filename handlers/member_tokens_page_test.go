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

// TestAPITokensSayWhoLeft (tryout46): the API answers as the page marks
// them: in an owner's GET /api/v1/tokens, and in the answer of a revoke,
// a token whose person is no longer a member has "user_left": true, and
// every member's token false. Before, the API had no way to tell them
// apart (the page did not either).
func TestAPITokensSayWhoLeft(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		api := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		editor := env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
		gone := env.createUser(env.ws.ID, "gone@a.test", models.RoleViewer)
		ids := map[string]int64{}
		var editorSecret string
		for _, tk := range []struct {
			user models.User
			name string
		}{{owner, "owner-own"}, {editor, "editor-full"}, {gone, "gone-full"}, {gone, "gone-second"}} {
			made, secret, err := env.db.CreateScopedAPIToken(ctx, env.ws.ID, tk.user.ID, tk.name, 0, models.TokenScopeFull)
			if err != nil {
				t.Fatal(err)
			}
			ids[tk.name] = made.ID
			if tk.name == "editor-full" {
				editorSecret = secret
			}
		}
		_, ownerSecret := env.apiToken(env.ws.ID, owner.ID)
		if rec := env.send(http.MethodPost, "/members/"+itoa(gone.ID)+"/remove", nil, "", env.sessionCookie(owner)); rec.Code != http.StatusSeeOther {
			t.Fatalf("removing a member = %d %.300s", rec.Code, rec.Body)
		}
		list := decode[Page[APIToken]](t, api.get("/api/v1/tokens", ownerSecret), http.StatusOK)
		left := map[string]bool{}
		for _, tk := range list.Items {
			left[tk.Name] = tk.UserLeft
		}
		for _, tc := range []struct {
			name string
			want bool
		}{{"owner-own", false}, {"editor-full", false}, {"gone-full", true}, {"gone-second", true}} {
			if got, ok := left[tc.name]; !ok || got != tc.want {
				t.Errorf("owner's list: %s user_left = %v (listed %v), want %v", tc.name, got, ok, tc.want)
			}
		}
		// An editor's own list: theirs, and they are a member.
		mine := decode[Page[APIToken]](t, api.get("/api/v1/tokens", editorSecret), http.StatusOK)
		for _, tk := range mine.Items {
			if tk.UserLeft {
				t.Errorf("editor's own list: %s says its person left", tk.Name)
			}
		}
		for _, tc := range []struct {
			name string
			want bool
		}{{"gone-second", true}, {"editor-full", false}} {
			got := decode[APIToken](t, api.json(http.MethodPost, "/api/v1/tokens/"+itoa(ids[tc.name])+"/revoke", ownerSecret, nil), http.StatusOK)
			if got.UserLeft != tc.want {
				t.Errorf("owner revoking %s: user_left = %v, want %v", tc.name, got.UserLeft, tc.want)
			}
		}
	})
}
