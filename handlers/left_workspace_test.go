package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestRemovedMemberStaleFormRefused: a member of two workspaces is removed
// from the one their session works in while a page of it is open (through
// any server process: here straight in the database). A form they then
// send from that page used to be carried out in their other workspace
// (a project made there that they meant for the one they left, a review
// answered "dataset does not exist"); it is refused, saying which
// workspace they left and that nothing was saved, and the next page works
// in the other workspace. A page opened in another session says on the
// page itself that they were removed.
func TestRemovedMemberStaleFormRefused(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		env.createUser(env.ws.ID, "olive@a.test", models.RoleOwner)
		rita := env.createUser(env.ws.ID, "rita@a.test", models.RoleEditor)
		own, err := env.db.CreateWorkspace(ctx, "Rita's own", rita.ID)
		if err != nil {
			t.Fatal(err)
		}
		onPage := env.workspaceCookie(rita, env.ws.ID)   // a page of env.ws open
		otherTab := env.workspaceCookie(rita, env.ws.ID) // another session, same choice
		if _, err := env.db.RemoveMember(ctx, env.ws.ID, rita.ID, false); err != nil {
			t.Fatal(err)
		}

		rec := env.send(http.MethodPost, "/projects", url.Values{"name": {"meant for the team"}}, "", onPage)
		body := rec.Body.String()
		if rec.Code != http.StatusForbidden || !strings.Contains(body, "no longer a member of workspace") ||
			!strings.Contains(body, "Nothing you sent from its pages was saved") {
			t.Errorf("stale form after removal = %d %q, want 403 saying the workspace was left and nothing saved", rec.Code, body)
		}
		if mine, _ := env.db.ListProjects(ctx, own.ID); len(mine) != 0 {
			t.Errorf("the stale form made %d projects in the member's other workspace", len(mine))
		}

		// The session has moved on: a form of the next page works there.
		if rec := env.send(http.MethodPost, "/projects", url.Values{"name": {"mine"}}, "", onPage); rec.Code != http.StatusSeeOther {
			t.Errorf("a new form after the refusal = %d, want 303", rec.Code)
		}
		if mine, _ := env.db.ListProjects(ctx, own.ID); len(mine) != 1 {
			t.Errorf("projects in the member's workspace = %d, want 1", len(mine))
		}

		page := env.send(http.MethodGet, "/", nil, "", otherTab)
		if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), "no longer a member of workspace") {
			t.Errorf("first page after removal = %d, does not say the workspace was left", page.Code)
		}
		if again := env.send(http.MethodGet, "/", nil, "", otherTab); strings.Contains(again.Body.String(), "no longer a member") {
			t.Errorf("the notice shows again on the next page")
		}
	})
}
