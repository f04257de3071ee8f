package models_test

import (
	"context"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// The runs a run page offers to compare with: the same project, the same
// samples (an original dataset and its derived copies), archived runs
// included, trashed ones and other datasets' runs not.
func TestListSameSampleRuns(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		dataset := func(name string, parent *int64) models.Dataset {
			d := models.Dataset{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, Name: name, Format: "jsonl",
				Columns: w.dataset.Columns, Fields: w.dataset.Fields, RatingColumns: w.dataset.RatingColumns, ParentDatasetID: parent}
			if err := db.Gorm.Create(&d).Error; err != nil {
				t.Fatal(err)
			}
			return d
		}
		run := func(name string, ds models.Dataset) models.Run {
			r := models.Run{WorkspaceID: w.ws.ID, ProjectID: w.project.ID, DatasetID: ds.ID, Name: name, Method: models.MethodBatchEval,
				RubricSnapshot: w.rubric.Evaluator(), JudgeSnapshot: w.judge.Snapshot()}
			if err := db.CreateRun(ctx, &r, nil); err != nil {
				t.Fatal(err)
			}
			return r
		}
		root := w.dataset
		copyA := dataset("copy A", &root.ID)
		copyB := dataset("copy B", &root.ID)
		other := dataset("other", nil)
		onCopyA, onCopyB, onOther := run("on copy A", copyA), run("on copy B", copyB), run("on other", other)
		archived := run("archived", root)
		if _, err := db.SetArchived(ctx, w.ws.ID, models.KindRun, archived.ID, true); err != nil {
			t.Fatal(err)
		}
		trashed := run("trashed", root)
		if err := db.Gorm.Model(&models.Run{}).Where("id = ?", trashed.ID).Update("status", models.RunSucceeded).Error; err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.Trash(ctx, w.ws.ID, models.KindRun, trashed.ID, models.Actor{}); err != nil {
			t.Fatal(err)
		}
		family := []int64{archived.ID, onCopyB.ID, onCopyA.ID, w.runs[1].ID, w.runs[0].ID} // newest first

		for _, tc := range []struct {
			name    string
			dataset int64
			project int64
			want    []int64
		}{
			{"from the original", root.ID, w.project.ID, family},
			{"from a copy", copyA.ID, w.project.ID, family},
			{"from another copy", copyB.ID, w.project.ID, family},
			{"another dataset", other.ID, w.project.ID, []int64{onOther.ID}},
			{"another project", root.ID, w.project.ID + 1000, nil},
		} {
			got, err := db.ListSameSampleRuns(ctx, w.ws.ID, tc.project, tc.dataset)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var ids []int64
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("%s: runs %v, want %v", tc.name, ids, tc.want)
			}
		}
	})
}
