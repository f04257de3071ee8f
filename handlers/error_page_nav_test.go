package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestErrorPageKeepsTheHeader: a refused or missing page is no dead end for
// a signed-in person. A member removed from their only workspace is told to
// create one on Your account, and the page links it and keeps Sign out; a
// member's 404 keeps the header and their colour theme; an anonymous
// visitor's error page has no account navigation.
func TestErrorPageKeepsTheHeader(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		owner := env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
		viewer := env.createUser(env.ws.ID, "vic@a.test", models.RoleViewer)
		oc, vc := env.sessionCookie(owner), env.sessionCookie(viewer)
		if rec := env.send(http.MethodPost, "/members/"+itoa(viewer.ID)+"/remove", url.Values{}, "", oc); rec.Code != http.StatusSeeOther {
			t.Fatalf("remove = %d %s", rec.Code, rec.Body.String())
		}
		if _, err := env.db.MemberRole(ctx, env.ws.ID, viewer.ID); models.ErrorCode(err) != models.ENotFound {
			t.Fatalf("viewer still a member: %v", err)
		}
		dark := &http.Cookie{Name: web.ThemeCookie, Value: web.ThemeDark}
		cases := []struct {
			name       string
			path       string
			cookies    []*http.Cookie
			status     int
			want, deny []string
		}{
			{"no workspace", "/", []*http.Cookie{vc}, http.StatusForbidden,
				[]string{`data-testid="sign-out"`, `href="/account"`, `data-testid="error-account"`, "create a workspace of your own on Your account"},
				[]string{"Back to projects"}},
			{"member's 404", "/runs/999999", []*http.Cookie{oc, dark}, http.StatusNotFound,
				[]string{`data-testid="sign-out"`, `data-testid="nav-members"`, "Back to projects", `data-theme-current="dark"`},
				[]string{`data-testid="error-account"`}},
			{"anonymous 404", "/s/nosuchlink", nil, http.StatusNotFound,
				nil,
				[]string{`data-testid="sign-out"`, `href="/account"`, `href="/runs"`}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				req := env.send(http.MethodGet, tc.path, nil, "", tc.cookies...)
				body := req.Body.String()
				if req.Code != tc.status {
					t.Fatalf("GET %s = %d, want %d", tc.path, req.Code, tc.status)
				}
				for _, w := range tc.want {
					if !strings.Contains(body, w) {
						t.Errorf("GET %s: page lacks %q", tc.path, w)
					}
				}
				for _, d := range tc.deny {
					if strings.Contains(body, d) {
						t.Errorf("GET %s: page holds %q", tc.path, d)
					}
				}
			})
		}
	})
}
