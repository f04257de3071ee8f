package models_test

import (
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestFindSameDataset: a dataset is found again only when its file name,
// columns, fields and every row (id, texts, ratings, order) are the same;
// a derived copy, another project's dataset or a trashed one is not.
func TestFindSameDataset(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := models.Project{WorkspaceID: ws.ID, Name: "P"}
		other := models.Project{WorkspaceID: ws.ID, Name: "Q"}
		for _, x := range []*models.Project{&p, &other} {
			if err := db.CreateProject(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		f := func(v float64) *float64 { return &v }
		rows := func() []models.DatasetRow {
			return []models.DatasetRow{
				{Position: 0, ExternalID: "a", Data: map[string]string{"text": "hello", "q": "3"}, Ratings: map[string]*float64{"q": f(3)}},
				{Position: 1, ExternalID: "b", Data: map[string]string{"text": "there", "q": ""}, Ratings: map[string]*float64{"q": nil}},
			}
		}
		meta := func(projectID int64) models.Dataset {
			return models.Dataset{WorkspaceID: ws.ID, ProjectID: projectID, Name: "d.csv", SourceFilename: "d.csv", Format: "csv",
				Columns: []string{"text", "q"}, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"q"}}
		}
		orig := meta(p.ID)
		if err := db.CreateDataset(ctx, &orig, rows()); err != nil {
			t.Fatal(err)
		}
		elsewhere := meta(other.ID)
		if err := db.CreateDataset(ctx, &elsewhere, rows()); err != nil {
			t.Fatal(err)
		}
		got, found, err := db.FindSameDataset(ctx, meta(p.ID), rows())
		if err != nil || !found || got.ID != orig.ID {
			t.Fatalf("the same file: found %v (dataset %d, err %v), want dataset %d", found, got.ID, err, orig.ID)
		}
		changes := map[string]func(d *models.Dataset, r []models.DatasetRow) []models.DatasetRow{
			"a rating":         func(_ *models.Dataset, r []models.DatasetRow) []models.DatasetRow { r[0].Ratings["q"] = f(4); return r },
			"a missing rating": func(_ *models.Dataset, r []models.DatasetRow) []models.DatasetRow { r[1].Ratings["q"] = f(0); return r },
			"a text": func(_ *models.Dataset, r []models.DatasetRow) []models.DatasetRow {
				r[1].Data["text"] = "there!"
				return r
			},
			"an id": func(_ *models.Dataset, r []models.DatasetRow) []models.DatasetRow { r[1].ExternalID = "c"; return r },
			"the order": func(_ *models.Dataset, r []models.DatasetRow) []models.DatasetRow {
				r[0], r[1] = r[1], r[0]
				r[0].Position, r[1].Position = 0, 1
				return r
			},
			"a row fewer": func(_ *models.Dataset, r []models.DatasetRow) []models.DatasetRow { return r[:1] },
			"the file name": func(d *models.Dataset, r []models.DatasetRow) []models.DatasetRow {
				d.SourceFilename = "e.csv"
				return r
			},
			"the fields": func(d *models.Dataset, r []models.DatasetRow) []models.DatasetRow {
				d.Fields = []evaluator.Field{{Column: "text", Label: "Reply"}}
				return r
			},
		}
		for name, change := range changes {
			d := meta(p.ID)
			r := change(&d, rows())
			if got, found, err := db.FindSameDataset(ctx, d, r); err != nil || found {
				t.Errorf("%s changed: found dataset %d (err %v), want none", name, got.ID, err)
			}
		}
		// A noisy copy of the dataset is never the file judged again.
		if err := db.Gorm.Model(&models.Dataset{}).Where("id = ?", orig.ID).Update("parent_dataset_id", elsewhere.ID).Error; err != nil {
			t.Fatal(err)
		}
		if got, found, err := db.FindSameDataset(ctx, meta(p.ID), rows()); err != nil || found {
			t.Errorf("a derived copy was found (dataset %d, err %v)", got.ID, err)
		}
	})
}
