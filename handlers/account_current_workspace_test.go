package handlers

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAccountPageMarksTheWorkspaceInUse: "Your workspaces" offered "Work
// here" on the workspace already in use too, a button that changed
// nothing (with one workspace, the only thing on the row). The workspace
// in use says so; the others keep their button, and switching moves the
// mark.
func TestAccountPageMarksTheWorkspaceInUse(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		u := env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
		b, err := env.db.CreateWorkspace(t.Context(), "Second", u.ID)
		must(t, err)
		cookie := env.sessionCookie(u)
		rowRE := regexp.MustCompile(`(?s)<tr><td>([^<]*)</td><td>[^<]*</td><td>(.*?)</td></tr>`)
		check := func(when, current string) {
			t.Helper()
			rec := env.send(http.MethodGet, "/account", nil, "", cookie)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: account page %d", when, rec.Code)
			}
			rows := rowRE.FindAllStringSubmatch(rec.Body.String(), -1)
			if len(rows) != 2 {
				t.Fatalf("%s: %d workspace rows, want 2", when, len(rows))
			}
			for _, r := range rows {
				marked := regexp.MustCompile(`data-testid="current-workspace"`).MatchString(r[2])
				button := regexp.MustCompile(`>Work here</button>`).MatchString(r[2])
				if want := r[1] == current; marked != want || button == want {
					t.Errorf("%s: workspace %q marked in use %v, Work here %v; want in use %v", when, r[1], marked, button, want)
				}
			}
		}
		check("at first", env.ws.Name)
		if rec := env.send(http.MethodPost, "/account/workspace", url.Values{"workspace_id": {itoa(b.ID)}}, "", cookie); rec.Code != http.StatusSeeOther {
			t.Fatalf("switch = %d", rec.Code)
		}
		check("after switching", "Second")
	})
}
