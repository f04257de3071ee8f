package handlers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestRunWithoutStoredRubricIsNotCalledDeleted: a run made from a rubric
// file or a reworded copy never had a stored rubric; its facts said
// "(deleted rubric)", which sends a reader looking for what was lost.
func TestRunWithoutStoredRubricIsNotCalledDeleted(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("facts", 6)
		run := env.storedRun(d, "from a file", d.human, func(r *models.Run) { r.RubricID = nil })
		for _, path := range []string{fmt.Sprintf("/runs/%d", run.ID), fmt.Sprintf("/runs/%d/report.html", run.ID)} {
			body := env.get(path).Body.String()
			if strings.Contains(body, "(deleted rubric)") || !strings.Contains(body, "recorded with the run (no stored rubric)") {
				t.Errorf("%s: the rubric of a run without a stored one is not said to be recorded with the run", path)
			}
		}
	})
}

// TestDatasetWithoutRatingsOffersViewersNoUpload: the dataset page's advice
// on adding ratings links the upload form for those who may upload, and
// tells viewers who can instead (the link answered them 403).
func TestDatasetWithoutRatingsOffersViewersNoUpload(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo().dataset
		ds, err := env.db.FindDataset(t.Context(), env.ws.ID, d.ID)
		if err != nil {
			t.Fatal(err)
		}
		// A dataset without rating columns: a copy of the demo's texts.
		plain := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "no ratings", Columns: ds.Columns, Fields: ds.Fields, RatingColumns: []string{}}
		rows, _ := env.db.ListDatasetRows(t.Context(), ds.ID, 0, 3)
		for i := range rows {
			rows[i].ID, rows[i].Ratings = 0, map[string]*float64{}
		}
		if err := env.db.CreateDataset(t.Context(), &plain, rows); err != nil {
			t.Fatal(err)
		}
		path := fmt.Sprintf("/datasets/%d", plain.ID)
		upload := fmt.Sprintf(`href="/projects/%d/datasets/new"`, env.project.ID)
		if body := env.get(path).Body.String(); !strings.Contains(body, "no-ratings-help") || !strings.Contains(body, upload) {
			t.Errorf("an owner is not offered the upload form")
		}
		viewer := env.createUser(env.ws.ID, "vi@a.test", models.RoleViewer)
		body := env.send("GET", path, nil, "", env.sessionCookie(viewer)).Body.String()
		if !strings.Contains(body, "no-ratings-help") || strings.Contains(body, upload) || !strings.Contains(body, "an editor of this workspace can upload") {
			t.Errorf("a viewer is offered an upload they may not make, or no advice")
		}
	})
}
