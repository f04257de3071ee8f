package handlers

import (
	"context"
	"html"
	"regexp"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// An upload's suggested name is numbered when a dataset of the project
// already has the file's name (QA: two uploads, messy.csv and
// messy.jsonl were both called "messy", and the launch form's and the
// rubric preview's dataset lists showed two "messy" to choose from).
func TestUploadSuggestsAFreeDatasetName(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "messy", Format: "csv", IDColumn: "id",
			Columns: []string{"id", "text"}, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
		row := models.DatasetRow{ExternalID: "a", Data: map[string]string{"id": "a", "text": "Hi."}, Ratings: map[string]*float64{}}
		if err := env.db.CreateDataset(ctx, &ds, []models.DatasetRow{row}); err != nil {
			t.Fatal(err)
		}
		nameValue := regexp.MustCompile(`id="dataset-name" name="name" value="([^"]*)"`)
		for _, tc := range []struct{ file, want string }{
			{"fresh.csv", "fresh"},
			{"messy.csv", "messy (2)"},
			{"MESSY.csv", "MESSY (2)"},
			{"Demo dialogues.csv", "Demo dialogues (2)"},
		} {
			t.Run(tc.file, func(t *testing.T) {
				token := env.uploadToken(tc.file, goodCSV)
				page := env.get(env.mapPath() + "?token=" + token).Body.String()
				m := nameValue.FindStringSubmatch(page)
				if m == nil {
					t.Fatalf("the mapping page has no dataset name field")
				}
				if got := html.UnescapeString(m[1]); got != tc.want {
					t.Errorf("suggested name %q, want %q", got, tc.want)
				}
			})
		}
	})
}
