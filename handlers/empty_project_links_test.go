package handlers

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// An empty project's "No datasets yet" line links to the upload form, as
// its rubric line links to the templates (QA: the dataset line had no
// link); a viewer, who may not upload, gets no link and is told who does.
func TestEmptyProjectLinksTheUpload(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		p := models.Project{WorkspaceID: env.ws.ID, Name: "Empty"}
		if err := env.db.CreateProject(context.Background(), &p); err != nil {
			t.Fatal(err)
		}
		upload := fmt.Sprintf(`href="/projects/%d/datasets/new"`, p.ID)
		for _, tc := range []struct {
			role     models.Role
			wantLink bool
		}{
			{models.RoleViewer, false},
			{models.RoleEditor, true},
			{models.RoleOwner, true},
		} {
			t.Run(string(tc.role), func(t *testing.T) {
				u := env.createUser(env.ws.ID, string(tc.role)+"@empty.test", tc.role)
				rec := env.send(http.MethodGet, fmt.Sprintf("/projects/%d", p.ID), nil, "", env.sessionCookie(u))
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d", rec.Code)
				}
				body := rec.Body.String()
				i := strings.Index(body, "No datasets yet")
				if i < 0 {
					t.Fatal(`no "No datasets yet" line`)
				}
				line := body[i : i+strings.Index(body[i:], "</p>")]
				if got := strings.Contains(line, upload); got != tc.wantLink {
					t.Errorf("the line links the upload form: %v, want %v: %s", got, tc.wantLink, line)
				}
				if !tc.wantLink && !strings.Contains(line, "editors of this workspace upload them") {
					t.Errorf("the viewer is not told who uploads: %s", line)
				}
			})
		}
	})
}
