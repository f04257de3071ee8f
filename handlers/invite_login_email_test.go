package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestInviteLoginPrefillsTheAnsweredEmail: answering an invite without
// signing in sends the person to sign in "as <address>"; that sign-in page
// fills in that address (as the invite's account has it, escaped), for an
// address with a new account and one with an existing account alike. It
// fills in nothing for another invite's link, an unknown token, or the same
// link opened in another browser. QA: the page's email field was empty.
func TestInviteLoginPrefillsTheAnsweredEmail(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		// An existing account, of another workspace.
		other, err := env.db.CreateWorkspace(ctx, "Other", owner.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.db.CreateUser(ctx, other.ID, models.RoleViewer, models.NewUser{Email: "o'hara@a.test", Name: "O'Hara", Password: testPassword}); err != nil {
			t.Fatal(err)
		}
		invite := func() string {
			t.Helper()
			_, token, err := env.db.CreateInvite(ctx, env.ws.ID, models.RoleEditor, owner.ID, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			return token
		}
		field := func(body string) string {
			t.Helper()
			_, after, ok := strings.Cut(body, `<input id="email"`)
			if !ok {
				t.Fatalf("no email field on the sign-in page:\n%s", body)
			}
			before, _, _ := strings.Cut(after, ">")
			_, v, ok := strings.Cut(before, `value="`)
			if !ok {
				return ""
			}
			v, _, _ = strings.Cut(v, `"`)
			return v
		}
		login := func(token string, cookie *http.Cookie) string {
			t.Helper()
			rec := env.send(http.MethodGet, "/login?next="+url.QueryEscape("/invites/"+token), nil, "", cookie)
			if rec.Code != http.StatusOK {
				t.Fatalf("sign-in page: %d", rec.Code)
			}
			return field(rec.Body.String())
		}
		for _, tt := range []struct{ name, typed, want string }{
			{"new account", "  New.Person@A.test ", "new.person@a.test"},
			{"existing account, escaped", "O'Hara@a.test", "o&#39;hara@a.test"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				token, otherToken := invite(), invite()
				rec := env.send(http.MethodPost, "/invites/"+token, url.Values{"email": {tt.typed}, "name": {"Someone"}, "password": {testPassword}}, "192.0.2.7")
				if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login?next=") {
					t.Fatalf("answer = %d to %q", rec.Code, rec.Header().Get("Location"))
				}
				sess := env.sessionFrom(rec)
				if sess == nil {
					t.Fatalf("the answer set no session")
				}
				if got := login(token, sess); got != tt.want {
					t.Errorf("the sign-in page after answering fills in %q, want %q", got, tt.want)
				}
				if got := login(otherToken, sess); got != "" {
					t.Errorf("another invite's sign-in page fills in %q", got)
				}
				if got := login("not-a-token", sess); got != "" {
					t.Errorf("an unknown token's sign-in page fills in %q", got)
				}
				if got := login(token, nil); got != "" {
					t.Errorf("the link's sign-in page in another browser fills in %q", got)
				}
			})
		}
	})
}
