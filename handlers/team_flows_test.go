package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestTeamLifecycle walks what a new team does, as its people would, with
// the sessions and API tokens they already hold: an owner invites Bob, who
// answers without an account, signs in and joins; his role is lowered to
// viewer, he is removed, and invited back; then the owner hands the
// workspace over to him (makes him owner, lowers herself) and the last
// owner cannot leave. Each change takes effect on the very next request of
// a session or token opened before it.
func TestTeamLifecycle(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		ada := env.createUser(env.ws.ID, "ada@team.test", models.RoleOwner)
		ac := env.sessionCookie(ada)
		invite := func(role string) string {
			t.Helper()
			rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {role}}, "", ac)
			m := onceLinkRE.FindStringSubmatch(rec.Body.String())
			if rec.Code != http.StatusOK || m == nil {
				t.Fatalf("invite as %s = %d: %s", role, rec.Code, rec.Body)
			}
			return m[2]
		}
		role := func(u models.User) models.Role {
			t.Helper()
			r, err := env.db.MemberRole(ctx, env.ws.ID, u.ID)
			if models.ErrorCode(err) == models.ENotFound {
				return ""
			}
			must(t, err)
			return r
		}
		status := func(what string, got, want int) {
			t.Helper()
			if got != want {
				t.Fatalf("%s = %d, want %d", what, got, want)
			}
		}

		// Invite → answer → sign in → joined.
		token := invite("editor")
		rec := env.send(http.MethodPost, "/invites/"+token, url.Values{"email": {"Bob@Team.test"}, "name": {"Bob"}, "password": {testPassword}}, "")
		status("answer the invite", rec.Code, http.StatusSeeOther)
		rec = env.login("bob@team.test", testPassword, "192.0.2.10")
		status("Bob signs in", rec.Code, http.StatusSeeOther)
		bc := env.sessionFrom(rec)
		status("back to the link", env.send(http.MethodGet, "/invites/"+token, nil, "", bc).Code, http.StatusSeeOther)
		bob, err := env.db.FindUserByEmail(ctx, "bob@team.test")
		must(t, err)
		if r := role(bob); r != models.RoleEditor {
			t.Fatalf("Bob joined as %q, want editor", r)
		}
		_, plain := env.apiToken(env.ws.ID, bob.ID)
		bearer := func(method, path, body string) int {
			t.Helper()
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+plain)
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			return rec.Code
		}
		status("editor makes a project", env.send(http.MethodPost, "/projects", url.Values{"name": {"Bob's"}}, "", bc).Code, http.StatusSeeOther)
		status("editor's token makes a project", bearer(http.MethodPost, "/api/v1/projects", `{"name":"Bob's API"}`), http.StatusCreated)

		// Role change: his open session and token are a viewer's at once.
		status("lower Bob to viewer", env.send(http.MethodPost, "/members/"+itoa(bob.ID)+"/role", url.Values{"role": {"viewer"}}, "", ac).Code, http.StatusSeeOther)
		status("viewer's session makes a project", env.send(http.MethodPost, "/projects", url.Values{"name": {"again"}}, "", bc).Code, http.StatusForbidden)
		status("viewer's token makes a project", bearer(http.MethodPost, "/api/v1/projects", `{"name":"again"}`), http.StatusForbidden)
		status("viewer reads", env.send(http.MethodGet, "/", nil, "", bc).Code, http.StatusOK)

		// Removed: the session and token open nothing of the workspace.
		status("remove Bob", env.send(http.MethodPost, "/members/"+itoa(bob.ID)+"/remove", nil, "", ac).Code, http.StatusSeeOther)
		if r := role(bob); r != "" {
			t.Fatalf("Bob is still %q after removal", r)
		}
		if rec := env.send(http.MethodGet, "/", nil, "", bc); rec.Code == http.StatusOK && strings.Contains(rec.Body.String(), "Bob&#39;s") {
			t.Fatalf("a removed member's session still lists the workspace's projects")
		}
		if code := bearer(http.MethodGet, "/api/v1/projects", ""); code != http.StatusUnauthorized && code != http.StatusForbidden {
			t.Fatalf("a removed member's token reads projects: %d", code)
		}

		// Re-invited: he joins again with the account he has, signed in.
		token = invite("viewer")
		status("Bob joins again", env.send(http.MethodPost, "/invites/"+token, nil, "", bc).Code, http.StatusSeeOther)
		if r := role(bob); r != models.RoleViewer {
			t.Fatalf("Bob rejoined as %q, want viewer", r)
		}
		status("rejoined viewer reads", env.send(http.MethodGet, "/", nil, "", bc).Code, http.StatusOK)
		status("rejoined viewer writes", env.send(http.MethodPost, "/projects", url.Values{"name": {"x"}}, "", bc).Code, http.StatusForbidden)
		// The token he had before removal ended with it, and stays ended.
		if code := bearer(http.MethodGet, "/api/v1/projects", ""); code != http.StatusUnauthorized {
			t.Fatalf("a token made before the removal works again after the re-invite: %d", code)
		}

		// Hand-over: Bob becomes owner, Ada lowers herself; Ada's open
		// invite ends with her ownership; the last owner cannot leave.
		invite("editor")
		status("make Bob owner", env.send(http.MethodPost, "/members/"+itoa(bob.ID)+"/role", url.Values{"role": {"owner"}}, "", ac).Code, http.StatusSeeOther)
		status("Bob opens Members", env.send(http.MethodGet, "/members", nil, "", bc).Code, http.StatusOK)
		status("Ada lowers herself", env.send(http.MethodPost, "/members/"+itoa(ada.ID)+"/role", url.Values{"role": {"editor"}}, "", ac).Code, http.StatusSeeOther)
		status("Ada opens Members", env.send(http.MethodGet, "/members", nil, "", ac).Code, http.StatusForbidden)
		if invs, err := env.db.ListOpenInvites(ctx, env.ws.ID); err != nil || len(invs) != 0 {
			t.Fatalf("Ada's invite still open after she stopped being an owner: %+v %v", invs, err)
		}
		status("the last owner lowers himself", env.send(http.MethodPost, "/members/"+itoa(bob.ID)+"/role", url.Values{"role": {"editor"}}, "", bc).Code, http.StatusConflict)
		status("the last owner removes himself", env.send(http.MethodPost, "/members/"+itoa(bob.ID)+"/remove", nil, "", bc).Code, http.StatusConflict)
		if r := role(bob); r != models.RoleOwner {
			t.Fatalf("the last owner is now %q", r)
		}
		acts := env.auditActions()
		for _, a := range []string{models.AuditMemberJoined, models.AuditMemberRole, models.AuditMemberRemoved} {
			if !hasAction(acts, a) {
				t.Errorf("the audit log lacks %s: %v", a, acts)
			}
		}
	})
}

// TestShareRevokedWhileOpen: someone has a share link's page open (and
// its sample page and report one click away) when an editor revokes the
// link. Whatever that reader's browser asks next, a reload, a HEAD of a
// link checker, a revalidation with what it was sent before, the sample
// or the report, is refused (404) and shows nothing of the run; the open
// page's answer was never cacheable.
func TestShareRevokedWhileOpen(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		run := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 60*time.Second)
		must(t, env.db.Gorm.Model(&models.Run{}).Where("id = ?", run.ID).Update("name", "Secret run").Error)
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}})
		open := env.getAs(link)
		if open.Code != http.StatusOK || !strings.Contains(open.Body.String(), "Secret run") {
			t.Fatalf("open the link = %d", open.Code)
		}
		if cc := open.Header().Get("Cache-Control"); !strings.Contains(cc, "no-store") {
			t.Fatalf("the open page may be cached (Cache-Control %q): a revoked link would still show it", cc)
		}
		m := regexp.MustCompile(`href="(` + regexp.QuoteMeta(link) + `/samples/[0-9]+)"`).FindStringSubmatch(open.Body.String())
		if m == nil {
			t.Fatalf("the shared page links no sample:\n%s", open.Body)
		}
		links, err := env.db.ListShareLinks(ctx, env.ws.ID)
		must(t, err)
		if rec := env.postForm("/shares/"+itoa(links[0].ID)+"/revoke", nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("revoke = %d: %s", rec.Code, rec.Body)
		}
		for _, tc := range []struct {
			name, method, path string
			header             map[string]string
		}{
			{"reload", http.MethodGet, link, nil},
			{"link checker", http.MethodHead, link, nil},
			{"revalidation", http.MethodGet, link, map[string]string{"If-None-Match": open.Header().Get("ETag"), "If-Modified-Since": time.Now().UTC().Format(http.TimeFormat)}},
			{"sample", http.MethodGet, m[1], nil},
			{"report", http.MethodGet, link + "/report.html", nil},
		} {
			req := httptest.NewRequest(tc.method, tc.path, nil)
			for k, v := range tc.header {
				if v != "" {
					req.Header.Set(k, v)
				}
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			if rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "Secret run") {
				t.Errorf("%s (%s %s) after revocation = %d, want 404 showing nothing of the run", tc.name, tc.method, tc.path, rec.Code)
			}
		}
	})
}

// TestOwnerHandingOverLandsOnAPageTheyMayOpen: an owner who made someone
// else owner then lowers their own role, or leaves, is sent where they may
// still go, told what changed in their own words: the workspace's projects
// as an editor, their other workspace, or, left with none, their account
// page (where a workspace is made). Before, each was sent back to Members,
// which answered 403 "Your role ... does not allow this".
func TestOwnerHandingOverLandsOnAPageTheyMayOpen(t *testing.T) {
	cases := []struct {
		name string
		// act is the form Ada sends about herself.
		path   string
		form   url.Values
		other  bool // Ada also belongs to another workspace
		to     string
		saying string
	}{
		{name: "lowers her own role", path: "role", form: url.Values{"role": {"editor"}}, to: "/", saying: "You are now editor in"},
		{name: "leaves, another workspace left", path: "remove", other: true, to: "/", saying: "You left"},
		{name: "leaves her only workspace", path: "remove", to: "/account", saying: "You belong to no workspace now"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				ada := env.createUser(env.ws.ID, "ada@team.test", models.RoleOwner)
				env.createUser(env.ws.ID, "bob@team.test", models.RoleOwner)
				if tc.other {
					_, err := env.db.CreateWorkspace(t.Context(), "Ada's own", ada.ID)
					must(t, err)
				}
				ac := env.sessionCookie(ada)
				rec := env.send(http.MethodPost, "/members/"+itoa(ada.ID)+"/"+tc.path, tc.form, "", ac)
				if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tc.to || !strings.Contains(flashOf(rec), tc.saying) {
					t.Fatalf("= %d to %q saying %q; want 303 to %q saying %q", rec.Code, rec.Header().Get("Location"), flashOf(rec), tc.to, tc.saying)
				}
				if next := env.send(http.MethodGet, tc.to, nil, "", ac); next.Code != http.StatusOK {
					t.Fatalf("GET %s after = %d, want 200: %s", tc.to, next.Code, next.Body)
				}
			})
		})
	}
}

// TestInviteOpenedByAMember: a member of the workspace opens an invite
// link (one forwarded to the wrong person, or one meant to raise their
// role). The page says they are a member already, with their role, and
// offers no Join; sending the form anyway is refused with the same words,
// the invite stays open for the person it was made for, and, on a server
// with mail, no confirmation mail goes to a member whose address is
// unconfirmed. Before, the page offered Join, which answered "you are
// already a member" only after the click (with mail: after mailing a link
// that then failed when opened).
func TestInviteOpenedByAMember(t *testing.T) {
	for _, mail := range []bool{false, true} {
		t.Run(map[bool]string{false: "without mail", true: "with mail"}[mail], func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				var smtpd interface{ Tries() int }
				if mail {
					smtpd = withMail(t, env)
				}
				ada := env.createUser(env.ws.ID, "ada@team.test", models.RoleOwner)
				bob := env.createUser(env.ws.ID, "bob@team.test", models.RoleEditor)
				inv, token, err := env.db.CreateInvite(t.Context(), env.ws.ID, models.RoleOwner, ada.ID, time.Hour)
				must(t, err)
				bc := env.sessionCookie(bob)
				page := env.send(http.MethodGet, "/invites/"+token, nil, "", bc)
				body := page.Body.String()
				if page.Code != http.StatusOK || !strings.Contains(body, `data-testid="invite-already-member"`) || !strings.Contains(body, "as <strong>editor</strong>") ||
					strings.Contains(body, `data-testid="invite-form"`) {
					t.Fatalf("invite page for a member = %d:\n%s", page.Code, body)
				}
				rec := env.send(http.MethodPost, "/invites/"+token, nil, "", bc)
				if rec.Code != http.StatusConflict || !strings.Contains(rec.Body.String(), "already a member of") || !strings.Contains(rec.Body.String(), "stays unused") {
					t.Fatalf("a member joins = %d: %s", rec.Code, rec.Body)
				}
				if r, _ := env.db.MemberRole(t.Context(), env.ws.ID, bob.ID); r != models.RoleEditor {
					t.Fatalf("Bob's role became %q", r)
				}
				invs, err := env.db.ListOpenInvites(t.Context(), env.ws.ID)
				must(t, err)
				if len(invs) != 1 || invs[0].ID != inv.ID {
					t.Fatalf("the invite is not open any more: %+v", invs)
				}
				if mail {
					must(t, env.runner.WaitMail(t.Context()))
					if n := smtpd.Tries(); n != 0 {
						t.Fatalf("%d mails were sent to a member who cannot join", n)
					}
				}
			})
		})
	}
}
