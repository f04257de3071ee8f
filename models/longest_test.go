package models_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestLongestDatasetRows: the n longest rows of a dataset, longest first,
// ties in the dataset's order, and only that dataset's (read through the
// dataset_rows_length index).
func TestLongestDatasetRows(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p := models.Project{WorkspaceID: ws.ID, Name: "p"}
		if err := db.CreateProject(ctx, &p); err != nil {
			t.Fatal(err)
		}
		importRows := func(name string, lengths []int) models.Dataset {
			ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: name, Columns: []string{"text"},
				Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
			err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
				for i, n := range lengths {
					if err := put(models.DatasetRow{Position: i + 1, ExternalID: fmt.Sprint(i), Data: map[string]string{"text": strings.Repeat("é", n)}}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return ds
		}
		other := importRows("other", []int{500, 400})
		ds := importRows("mine", []int{3, 9, 1, 9, 5})
		for _, tc := range []struct {
			n    int
			want []string // external ids
		}{
			{1, []string{"1"}},
			{3, []string{"1", "3", "4"}},
			{10, []string{"1", "3", "4", "0", "2"}},
		} {
			rows, err := db.LongestDatasetRows(ctx, ds.ID, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range rows {
				got = append(got, r.ExternalID)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("%d longest: %v, want %v", tc.n, got, tc.want)
			}
		}
		if rows, err := db.LongestDatasetRows(ctx, other.ID, 1); err != nil || len(rows) != 1 || rows[0].ExternalID != "0" {
			t.Errorf("the other dataset's longest: %+v, %v", rows, err)
		}
	})
}
