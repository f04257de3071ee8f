package handlers

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPIRunsOfAProjectThatIsNot: GET /api/v1/runs?project_id=N answered
// an empty list for a project that does not exist, is another
// workspace's or is in the trash, so a script with a wrong id read "no
// runs yet". It is a 404 naming the project, as GET /api/v1/projects/N.
func TestAPIRunsOfAProjectThatIsNot(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		a := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		other, err := env.db.CreateWorkspace(ctx, "Other", owner.ID)
		must(t, err)
		theirs := models.Project{WorkspaceID: other.ID, Name: "theirs"}
		must(t, env.db.CreateProject(ctx, &theirs))
		binned := models.Project{WorkspaceID: env.ws.ID, Name: "binned"}
		must(t, env.db.CreateProject(ctx, &binned))
		if _, _, err := env.db.Trash(ctx, env.ws.ID, models.KindProject, binned.ID, models.Actor{Label: "owner"}); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			name    string
			project int64
			code    int
		}{
			{"this workspace's project", env.project.ID, http.StatusOK},
			{"no such project", 999999, http.StatusNotFound},
			{"another workspace's project", theirs.ID, http.StatusNotFound},
			{"a project in the trash", binned.ID, http.StatusNotFound},
		} {
			rec := a.get(fmt.Sprintf("/api/v1/runs?project_id=%d", tt.project), tok)
			if rec.Code != tt.code {
				t.Errorf("%s: %d %s, want %d", tt.name, rec.Code, rec.Body, tt.code)
				continue
			}
			if tt.code == http.StatusNotFound {
				if code := errorCode(t, rec); code != models.ENotFound {
					t.Errorf("%s: error code %q, want not_found", tt.name, code)
				}
			}
		}
	})
}
