package models_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestDatasetRowsReadInFileOrderByID: a part of a dataset (an alignment's
// held-out part) is read in file order, whatever the order of its ids or of
// the ids' rows, a chunk at a time, each row as FindDatasetRows gives it
// (data, ratings, an unrated rating kept as null); ids of another dataset,
// unknown ids and an id asked twice give no row or one.
func TestDatasetRowsReadInFileOrderByID(t *testing.T) {
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
		// Rows put in the reverse of their file order: the later a row's
		// id, the earlier its position.
		importRows := func(name string, n int) []int64 {
			ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: name, Columns: []string{"text", "q"},
				Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"q"}}
			err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
				for i := n - 1; i >= 0; i-- {
					var q *float64
					if i%3 != 0 {
						v := float64(i % 5)
						q = &v
					}
					if err := put(models.DatasetRow{Position: i, ExternalID: fmt.Sprintf("%s%d", name, i),
						Data: map[string]string{"text": fmt.Sprintf("row \"%d\" é", i)}, Ratings: map[string]*float64{"q": q}}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			rows, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			ids := make([]int64, len(rows))
			for i, r := range rows {
				ids[i] = r.ID
			}
			return ids
		}
		other := importRows("other", 20)
		mine := importRows("mine", 25_000) // file order: three chunks of reads
		var ask, want []int64
		for i, id := range mine {
			if i%2 == 0 {
				want = append(want, id)
			}
		}
		ask = slices.Clone(want)
		slices.Reverse(ask) // ascending ids: the reverse of file order
		ask = append(ask, other[3], 1<<40, want[7])

		order, err := db.DatasetRowsInFileOrder(ctx, datasetOf(t, db, mine[0]), ask)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(order, want) {
			t.Fatalf("%d ids in file order, want %d; first %v, want %v", len(order), len(want), order[:min(3, len(order))], want[:3])
		}
		byID, err := db.FindDatasetRows(ctx, datasetOf(t, db, mine[0]), ask)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		err = db.EachDatasetRowByID(ctx, datasetOf(t, db, mine[0]), append(slices.Clone(order), other[3], 1<<40), func(r models.DatasetRow) error {
			if !reflect.DeepEqual(r, byID[r.ID]) {
				return fmt.Errorf("row %d read as %+v, FindDatasetRows gives %+v", r.ID, r, byID[r.ID])
			}
			got = append(got, r.ID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%d rows handed over, want %d in file order", len(got), len(want))
		}
	})
}

// datasetOf is the dataset of row id.
func datasetOf(t *testing.T, db *models.DB, id int64) int64 {
	t.Helper()
	var ds int64
	if err := db.Gorm.Raw("SELECT dataset_id FROM dataset_rows WHERE id = ?", id).Scan(&ds).Error; err != nil {
		t.Fatal(err)
	}
	return ds
}
