package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestLivePreviewRefusesAnotherProjectsDataset (forms47): the rubric
// editor's live preview took preview_dataset from the request and showed
// the prompt on any dataset of the workspace, another project's too,
// though the editor's Dataset select offers the rubric's project's own
// datasets only. It now refuses such a dataset as it refuses one that
// does not exist: a sentence where the prompt would be, saying what to
// do, and none of that dataset's text. The same rule holds for an editor
// (stored or new rubric) and a viewer (the rubric as stored); the page
// itself keeps falling back to the project's main dataset, as it does for
// any id it does not offer.
func TestLivePreviewRefusesAnotherProjectsDataset(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		own := env.ratedDatasetOf("Own set", []float64{1, 2, 3})
		other := models.Project{WorkspaceID: env.ws.ID, Name: "Other project"}
		must(t, env.db.CreateProject(t.Context(), &other))
		home := env.project
		env.project = other
		foreign := env.ratedDatasetOf("Foreign <set>", []float64{4, 5, 1})
		env.project = home
		// With accounts, every request signs in: an editor previews the
		// form's rubric, a viewer the stored one.
		viewer := env.sessionCookie(env.createUser(env.ws.ID, "viewer@preview47.test", models.RoleViewer))
		editor := env.sessionCookie(env.createUser(env.ws.ID, "editor@preview47.test", models.RoleEditor))

		// A project of another workspace: a new rubric's preview naming
		// it is refused as a project that does not exist.
		otherWS, err := env.db.CreateWorkspace(t.Context(), "Elsewhere", env.createUser(env.ws.ID, "owner@preview48.test", models.RoleOwner).ID)
		must(t, err)
		elsewhere := models.Project{WorkspaceID: otherWS.ID, Name: "Their project"}
		must(t, env.db.CreateProject(t.Context(), &elsewhere))
		missing := "project_id is missing: a new rubric&#39;s preview shows one of its project&#39;s datasets, so give the project&#39;s id (project_id)"
		refusedRequest := map[string]struct {
			status int
			says   string
		}{
			"new rubric, no project named":            {http.StatusUnprocessableEntity, missing},
			"new rubric, project_id empty":            {http.StatusUnprocessableEntity, missing},
			"new rubric, project_id not a number":     {http.StatusUnprocessableEntity, "project_id &#34;two&#34; is not a project id: give the number of the project"},
			"new rubric, another workspace's project": {http.StatusNotFound, fmt.Sprintf("project %d does not exist", elsewhere.ID)},
		}

		live := func(dataset int64, set map[string]string) url.Values {
			f := rubricFormValues("", "1", "5")
			f.Del("action")
			f.Set("preview_dataset", fmt.Sprint(dataset))
			for k, v := range set {
				f.Set(k, v)
			}
			return f
		}
		stored := map[string]string{"rubric_id": fmt.Sprint(d.rubric.ID)}
		newOne := map[string]string{"project_id": fmt.Sprint(env.project.ID)} // as the editor's form sends it
		refusedForeign := fmt.Sprintf("No preview: dataset %d belongs to another project; choose one of this project&#39;s datasets in the Dataset list.", foreign.ds.ID)
		for _, tc := range []struct {
			name    string
			form    url.Values
			viewer  bool
			problem string // "" when the preview shows the dataset
			shows   string
		}{
			{"stored rubric, own dataset", live(own.ds.ID, stored), false, "", "Own set"},
			{"stored rubric, another project's dataset", live(foreign.ds.ID, stored), false, refusedForeign, ""},
			{"new rubric, another project's dataset", live(foreign.ds.ID, newOne), false, refusedForeign, ""},
			{"viewer, another project's dataset", live(foreign.ds.ID, stored), true, refusedForeign, ""},
			{"viewer, own dataset", live(own.ds.ID, stored), true, "", "Own set"},
			{"unknown dataset, as before", live(foreign.ds.ID+1000, stored), false,
				fmt.Sprintf("No preview: dataset %d does not exist (or is not in this workspace)", foreign.ds.ID+1000), ""},
			// A script previewing a new rubric without naming its project
			// showed any dataset of the workspace (teamtry48): a new
			// rubric's preview now needs its project, as a viewer's needs
			// rubric_id, and a project_id that is none of the workspace's
			// is refused as an unknown dataset is.
			{"new rubric, no project named", live(foreign.ds.ID, nil), false, "", ""},
			{"new rubric, project_id empty", live(foreign.ds.ID, map[string]string{"project_id": " "}), false, "", ""},
			{"new rubric, project_id not a number", live(foreign.ds.ID, map[string]string{"project_id": "two"}), false, "", ""},
			{"new rubric, another workspace's project", live(foreign.ds.ID, map[string]string{"project_id": fmt.Sprint(elsewhere.ID)}), false, "", ""},
			{"new rubric, the dataset's own project", live(foreign.ds.ID, map[string]string{"project_id": fmt.Sprint(other.ID)}), false, "", "Foreign &lt;set&gt;"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				who := editor
				if tc.viewer {
					who = viewer
				}
				rec := env.send(http.MethodPost, "/rubrics/preview", tc.form, "", who)
				body := rec.Body.String()
				if strings.Contains(body, "Foreign <set>") {
					t.Error("the dataset's name is shown unescaped")
				}
				if want, ok := refusedRequest[tc.name]; ok {
					if rec.Code != want.status || !strings.Contains(body, `data-testid="preview-refused">`+want.says) {
						t.Errorf("status %d, want %d saying %q: %.800s", rec.Code, want.status, want.says, body)
					}
					if strings.Contains(body, "Foreign &lt;set&gt;") || strings.Contains(body, "sample 1") {
						t.Errorf("the refused request shows the dataset: %.1500s", body)
					}
					return
				}
				if rec.Code != http.StatusOK {
					t.Fatalf("status %d, want 200: %.500s", rec.Code, body)
				}
				if strings.Contains(body, "Foreign <set>") {
					t.Error("the dataset's name is shown unescaped")
				}
				if tc.problem != "" {
					if !strings.Contains(body, `data-testid="preview-problem">`+tc.problem) {
						t.Errorf("the preview does not say %q: %.1500s", tc.problem, body)
					}
					if strings.Contains(body, "Foreign &lt;set&gt;") || strings.Contains(body, "sample 1") {
						t.Errorf("the refused dataset's name or text is shown: %.1500s", body)
					}
					return
				}
				if !strings.Contains(body, `data-testid="preview-dataset-name">`+tc.shows+`<`) || !strings.Contains(body, "sample 1") {
					t.Errorf("the preview does not show %s's prompt: %.1500s", tc.shows, body)
				}
			})
		}

		// The page opened with another project's dataset shows the main
		// one, as for any dataset its select does not offer.
		rec := env.send(http.MethodGet, fmt.Sprintf("/rubrics/%d/edit?preview_dataset=%d", d.rubric.ID, foreign.ds.ID), nil, "", editor)
		if body := rec.Body.String(); rec.Code != http.StatusOK || strings.Contains(body, "Foreign") ||
			!strings.Contains(body, `data-testid="preview-dataset-name">`+env.demoDataset().Name+`<`) {
			t.Errorf("the page opened with another project's dataset = %d, want the main dataset's preview: %.800s", rec.Code, body)
		}
	})
}
