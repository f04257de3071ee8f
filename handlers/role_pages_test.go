package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestPagesOfferOnlyWhatTheRoleMay: the server refuses with 403 what a
// role may not do; the pages must not offer it either. Viewers see no
// "New project", "Launch run", rubric save, rename/delete box, cancel or
// variant forms; editors see those but no judge editing; owners see all.
func TestPagesOfferOnlyWhatTheRoleMay(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		run := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		users := map[models.Role]models.User{
			models.RoleViewer: env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer),
			models.RoleEditor: env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor),
			models.RoleOwner:  env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner),
		}
		// marker is what a page shows only to least or higher roles.
		for _, tc := range []struct {
			page, marker string
			least        models.Role
		}{
			{"/", `data-testid="new-project"`, models.RoleEditor},
			// The start guide's steps: a viewer creates nothing, only an
			// owner adds a judge (QA: every role was told to do both).
			{"/", `data-testid="guide-project"`, models.RoleEditor},
			{"/", "Add a judge: any OpenAI-compatible endpoint", models.RoleOwner},
			{fmt.Sprintf("/projects/%d", env.project.ID), `data-testid="new-run-link"`, models.RoleEditor},
			{fmt.Sprintf("/projects/%d", env.project.ID), `data-testid="upload-link"`, models.RoleEditor},
			{fmt.Sprintf("/projects/%d", env.project.ID), `data-testid="manage"`, models.RoleEditor},
			{fmt.Sprintf("/datasets/%d", d.dataset.ID), `data-testid="dataset-next-steps"`, models.RoleEditor},
			{fmt.Sprintf("/rubrics/%d/edit", d.rubric.ID), `data-testid="rubric-save"`, models.RoleEditor},
			{fmt.Sprintf("/rubrics/%d/edit", d.rubric.ID), `value="add-criterion"`, models.RoleEditor},
			{fmt.Sprintf("/runs/%d", run.ID), `data-testid="manage"`, models.RoleEditor},
			{fmt.Sprintf("/runs/%d", run.ID), `data-testid="share-link"`, models.RoleEditor},
			{fmt.Sprintf("/runs/%d/variants", run.ID), fmt.Sprintf(`action="/runs/%d/reseed"`, run.ID), models.RoleEditor},
			{"/judges", `data-testid="new-judge"`, models.RoleOwner},
			{"/judges", `data-testid="judge-edit"`, models.RoleOwner},
		} {
			for _, role := range []models.Role{models.RoleViewer, models.RoleEditor, models.RoleOwner} {
				rec := env.send(http.MethodGet, tc.page, nil, "", env.sessionCookie(users[role]))
				if rec.Code != http.StatusOK {
					t.Errorf("%s as %s: status %d", tc.page, role, rec.Code)
					continue
				}
				want := role.AtLeast(tc.least)
				if got := strings.Contains(rec.Body.String(), tc.marker); got != want {
					t.Errorf("%s as %s: shows %s = %v, want %v", tc.page, role, tc.marker, got, want)
				}
			}
		}
	})
}
