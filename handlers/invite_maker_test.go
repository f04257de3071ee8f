package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestInviteEndsWithItsMakersRightToInvite: an invite stops working once
// the owner who made it is no longer an owner of its workspace (demoted or
// removed): its page says why, neither a new nor an existing account can
// join with it, the members page no longer lists it as open, and the owner
// who made the change is told. Invites of an owner who still is one keep
// working. Such invites used to work for their 7 days, so an owner demoted
// or removed could still hand out places in the workspace.
func TestInviteEndsWithItsMakersRightToInvite(t *testing.T) {
	for _, tc := range []struct {
		name   string
		path   string
		form   url.Values
		wanted string // what the owner who made the change is told
	}{
		{"maker demoted to editor", "role", url.Values{"role": {"editor"}}, "The 2 open invites they made no longer work"},
		{"maker removed", "remove", nil, "The 2 open invites they made no longer work"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				ctx := context.Background()
				maker := env.createUser(env.ws.ID, "maker@a.test", models.RoleOwner)
				keeper := env.createUser(env.ws.ID, "keeper@a.test", models.RoleOwner)
				// An account of another workspace, who would join with its session.
				outsider, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleViewer, models.NewUser{Email: "out@a.test", Name: "Out", Password: testPassword})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := env.db.CreateWorkspace(ctx, "Elsewhere", outsider.ID); err != nil {
					t.Fatal(err)
				}
				if _, err := env.db.RemoveMember(ctx, env.ws.ID, outsider.ID, false); err != nil {
					t.Fatal(err)
				}
				invite := func(u models.User) string {
					t.Helper()
					rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"editor"}}, "", env.sessionCookie(u))
					m := onceLinkRE.FindStringSubmatch(rec.Body.String())
					if rec.Code != http.StatusOK || m == nil || m[1] != "invites" {
						t.Fatalf("make invite = %d, link %v", rec.Code, m)
					}
					return m[2]
				}
				made, made2, kept := invite(maker), invite(maker), invite(keeper)
				if rec := env.send(http.MethodGet, "/members", nil, "", env.sessionCookie(maker)); !strings.Contains(rec.Body.String(), "sooner if you stop being an owner") {
					t.Errorf("the members page does not say invites end with their maker's ownership")
				}

				kc := env.sessionCookie(keeper)
				rec := env.send(http.MethodPost, "/members/"+itoa(maker.ID)+"/"+tc.path, tc.form, "", kc)
				if rec.Code != http.StatusSeeOther {
					t.Fatalf("change = %d: %s", rec.Code, rec.Body)
				}
				next := env.send(http.MethodGet, rec.Header().Get("Location"), nil, "", append([]*http.Cookie{kc}, rec.Result().Cookies()...)...)
				if !strings.Contains(next.Body.String(), tc.wanted) {
					t.Errorf("the owner is not told the maker's invites ended (want %q)", tc.wanted)
				}

				page := env.get("/invites/" + made)
				if page.Code != http.StatusNotFound || !strings.Contains(page.Body.String(), "no longer an owner") {
					t.Errorf("invite page = %d, want 404 saying its maker is no longer an owner (body %.300q)", page.Code, page.Body.String())
				}
				join := url.Values{"email": {"new@a.test"}, "name": {"New"}, "password": {testPassword}}
				if rec := env.send(http.MethodPost, "/invites/"+made, join, ""); rec.Code != http.StatusNotFound || env.sessionFrom(rec) != nil {
					t.Errorf("new account joining = %d, want 404", rec.Code)
				}
				if _, err := env.db.FindUserByEmail(ctx, "new@a.test"); err == nil {
					t.Errorf("the ended invite made an account")
				}
				if rec := env.send(http.MethodPost, "/invites/"+made2, nil, "", env.sessionCookie(outsider)); rec.Code != http.StatusNotFound {
					t.Errorf("existing account joining = %d, want 404", rec.Code)
				}
				if _, err := env.db.MemberRole(ctx, env.ws.ID, outsider.ID); err == nil {
					t.Errorf("the ended invite let an existing account join")
				}
				invs, err := env.db.ListOpenInvites(ctx, env.ws.ID)
				if err != nil {
					t.Fatal(err)
				}
				if len(invs) != 1 || invs[0].CreatedBy == nil || *invs[0].CreatedBy != keeper.ID {
					t.Errorf("open invites = %+v, want only the keeper's", invs)
				}
				if page := env.get("/invites/" + kept); page.Code != http.StatusOK {
					t.Errorf("invite of an owner who still is one = %d, want 200", page.Code)
				}
			})
		})
	}
}
