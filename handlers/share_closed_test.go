package handlers

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestClosedShareLinkSaysWhatToDo (tryout46): a share link that opens
// nothing answered one vague sentence ("revoked, expired, or never
// existed", no full stop) and nothing to do. Now its page says, to
// whoever holds the address, to ask the person who shared it for a new
// link; a revoked link and an address that never was a link read
// byte for byte alike (the difference would tell a stranger the address
// was once real); an expired link says when it expired, as its pages said
// while it was open. A member of the link's workspace also reads that it
// was revoked and gets a link to the report on the dashboard (and, when
// working in another workspace, where to switch); someone signed in to
// another workspace reads what a stranger reads.
func TestClosedShareLinkSaysWhatToDo(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		x := env.demoExperiment()
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		viewer := env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)
		stranger := env.createUser(env.ws.ID, "stranger@b.test", models.RoleViewer)
		otherWS, err := env.db.CreateWorkspace(ctx, "Stranger's <b>own</b>", stranger.ID)
		must(t, err)
		_, err = env.db.RemoveMember(ctx, env.ws.ID, stranger.ID, false)
		must(t, err)
		must(t, env.db.Gorm.Exec("UPDATE workspaces SET name = ? WHERE id = ?", "Team <i>A</i>", env.ws.ID).Error)
		// The owner also belongs to the stranger's workspace and works in
		// it now: the link's workspace is elsewhere for them.
		must(t, env.db.Gorm.Create(&models.Membership{WorkspaceID: otherWS.ID, UserID: owner.ID, Role: models.RoleViewer, CreatedAt: time.Now()}).Error)

		newLink := func(ttl time.Duration) (models.ShareLink, string) {
			l, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: x.batchEval.ID, TTL: ttl})
			must(t, err)
			return l, "/s/" + token
		}
		_, open := newLink(0)
		revokedLink, revoked := newLink(0)
		_, err = env.db.RevokeShareLink(ctx, env.ws.ID, revokedLink.ID)
		must(t, err)
		expiredLink, expired := newLink(time.Hour)
		past := time.Now().Add(-time.Minute).UTC().Truncate(time.Minute)
		must(t, env.db.Gorm.Model(&models.ShareLink{}).Where("id = ?", expiredLink.ID).Update("expires_at", past).Error)
		unknown := "/s/" + strings.Repeat("x", len(strings.TrimPrefix(open, "/s/")))
		expiredOn := past.Format("2 January 2006 at 15:04 UTC")

		who := map[string][]*http.Cookie{
			"anonymous":         nil,
			"another workspace": {env.sessionCookie(stranger)},
			"viewer":            {env.sessionCookie(viewer)},
			"owner elsewhere":   {env.workspaceCookie(owner, otherWS.ID)},
		}
		runPage := fmt.Sprintf(`href="/runs/%d"`, x.batchEval.ID)
		page := func(path, person string) (int, string) {
			t.Helper()
			rec := env.getAs(path, who[person]...)
			return rec.Code, rec.Body.String()
		}
		if code, _ := page(open, "anonymous"); code != http.StatusOK {
			t.Fatalf("an open link: %d", code)
		}
		reason := regexp.MustCompile(`data-testid="error-message">([^<]*)<`)
		for _, tc := range []struct {
			link, person string
			say, notSay  []string
		}{
			{unknown, "anonymous", []string{"It may have been revoked, or its address may be incomplete or mistyped.", "Check that the whole address was copied", "sign in to BatchEval"},
				[]string{"expired", "You are a member", runPage}},
			{revoked, "anonymous", []string{"It may have been revoked, or its address may be incomplete or mistyped.", "sign in to BatchEval"}, []string{"revoked on", runPage}},
			{expired, "anonymous", []string{"it expired on " + expiredOn + "."}, []string{"Check that the whole address", runPage}},
			{revoked, "another workspace", []string{"It may have been revoked, or its address may be incomplete or mistyped."},
				[]string{"revoked on", runPage, "You are a member", "sign in to BatchEval"}},
			{revoked, "viewer", []string{"it was revoked on ", "You are a member of workspace “Team <i>A</i>”", runPage},
				[]string{"Share links", "switching"}},
			{expired, "viewer", []string{"it expired on " + expiredOn + ".", runPage}, []string{"revoked on"}},
			{revoked, "owner elsewhere", []string{"it was revoked on ", runPage, "after switching to that workspace on", `href="/shares"`}, nil},
		} {
			what := tc.person + ", " + map[string]string{unknown: "unknown", revoked: "revoked", expired: "expired"}[tc.link]
			for _, path := range []string{tc.link, tc.link + "/report.html"} {
				code, body := page(path, tc.person)
				if code != http.StatusNotFound {
					t.Errorf("%s, GET %s: %d, want 404", what, path, code)
				}
				text := html.UnescapeString(body)
				for _, w := range append(tc.say, "Ask the person who shared it with you for a new link.") {
					if !strings.Contains(text, w) && !strings.Contains(body, w) {
						t.Errorf("%s, GET %s does not say %q: %.1500s", what, path, w, body)
					}
				}
				for _, w := range tc.notSay {
					if strings.Contains(text, w) || strings.Contains(body, w) {
						t.Errorf("%s, GET %s says %q: %.1500s", what, path, w, body)
					}
				}
				if m := reason.FindStringSubmatch(body); m == nil || !strings.HasSuffix(strings.TrimSpace(m[1]), ".") {
					t.Errorf("%s, GET %s: the reason is not a sentence with its full stop: %q", what, path, m)
				}
				// Names are escaped where shown.
				if strings.Contains(body, "<i>A</i>") || strings.Contains(body, "<b>own</b>") {
					t.Errorf("%s, GET %s shows a name unescaped", what, path)
				}
				if strings.Contains(body, "Alpha") || strings.Contains(body, x.batchEval.Name) && tc.person != "viewer" && tc.person != "owner elsewhere" {
					t.Errorf("%s, GET %s names the shared run", what, path)
				}
			}
		}
		// A stranger's page leads nowhere outside the link (as every page
		// of a share link).
		for _, path := range []string{unknown, revoked, expired} {
			_, body := page(path, "anonymous")
			checkSharedPage(t, "closed "+path, body, path)
		}
		// To anyone outside the workspace, a revoked link and an address
		// that never was one are the same page.
		for _, person := range []string{"anonymous", "another workspace"} {
			_, a := page(revoked, person)
			_, b := page(unknown, person)
			if a != b {
				t.Errorf("%s tells a revoked link from an unknown one:\n%s\n----\n%s", person, a, b)
			}
		}
	})
}
