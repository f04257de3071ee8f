package models_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"gorm.io/gorm"
)

// TestDatasetRowsFoundByKey: FindDatasetRows gives the asked rows of its
// dataset only (another dataset's ids are dropped, unknown ids ignored),
// and on SQLite the statement it sends reads them by their keys: with
// "dataset_id = ?" in it the planner took the dataset's index and read every
// row of the dataset to find the run page's 50 (a query hook takes the
// statements; EXPLAIN QUERY PLAN says how each is read).
func TestDatasetRowsFoundByKey(t *testing.T) {
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
		importRows := func(name string, n int) []int64 {
			ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: name, Columns: []string{"text"},
				Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
			err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
				for i := range n {
					if err := put(models.DatasetRow{Position: i, ExternalID: fmt.Sprintf("%s%d", name, i), Data: map[string]string{"text": strings.Repeat("x", i)}}); err != nil {
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
		other := importRows("other", 50)
		mine := importRows("mine", 300)
		ds, err := db.FindDatasetRows(ctx, 0, mine[:1])
		if err != nil {
			t.Fatal(err)
		}
		var dsID int64
		db.Gorm.Raw("SELECT dataset_id FROM dataset_rows WHERE id = ?", mine[0]).Scan(&dsID)
		if len(ds) != 0 {
			t.Errorf("rows of dataset 0: %d, want none", len(ds))
		}

		var statements []string
		var vars [][]any
		hook := "test:capture-dataset-rows"
		if err := db.Gorm.Callback().Query().After("gorm:query").Register(hook, func(tx *gorm.DB) {
			if tx.Statement.Table == "dataset_rows" {
				statements = append(statements, tx.Statement.SQL.String())
				vars = append(vars, append([]any(nil), tx.Statement.Vars...))
			}
		}); err != nil {
			t.Fatal(err)
		}
		defer db.Gorm.Callback().Query().Remove(hook)
		ask := []int64{mine[3], mine[150], mine[299], other[7], 1 << 40}
		got, err := db.FindDatasetRows(ctx, dsID, ask)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[mine[150]].ExternalID != "mine150" || got[mine[299]].Data["text"] != strings.Repeat("x", 299) {
			t.Errorf("FindDatasetRows(%v) = %d rows (%v), want mine3, mine150 and mine299 only", ask, len(got), got)
		}
		if _, ok := got[other[7]]; ok {
			t.Error("a row of another dataset was given")
		}
		if len(statements) == 0 {
			t.Fatal("the hook saw no statement on dataset_rows")
		}
		if db.Dialect != models.SQLite {
			return
		}
		for i, q := range statements {
			var plan []struct {
				ID, Parent, Notused int
				Detail              string
			}
			if err := db.Gorm.Raw("EXPLAIN QUERY PLAN "+q, vars[i]...).Scan(&plan).Error; err != nil {
				t.Fatal(err)
			}
			for _, step := range plan {
				if strings.Contains(step.Detail, "dataset_rows") && !strings.Contains(step.Detail, "PRIMARY KEY") {
					t.Errorf("%s\nis read by %q, not by its keys", q, step.Detail)
				}
			}
		}
	})
}

// TestFindDatasetRowsOfManyIDs: FindDatasetRows reads any number of ids.
// An alignment's held-out part of a large run asks for its every sample
// (half of them by default) and one IN list of more than SQLite's 32,766
// parameters (PostgreSQL's 65,535) failed ("too many SQL variables"), so
// the held-out runs of a run of 65,534 samples or more never launched.
func TestFindDatasetRowsOfManyIDs(t *testing.T) {
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
		ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "d", Columns: []string{"text"},
			Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
		rows := []models.DatasetRow{{Position: 0, ExternalID: "a", Data: map[string]string{"text": "a"}, Ratings: map[string]*float64{}}, {Position: 1, ExternalID: "b", Data: map[string]string{"text": "b"}, Ratings: map[string]*float64{}}}
		if err := db.CreateDataset(ctx, &ds, rows); err != nil {
			t.Fatal(err)
		}
		stored, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{0, 1, 9999, 10000, 10001, 70000} {
			// The stored rows' ids at both ends of n ids, unknown ids between.
			var ids []int64
			if n > 0 {
				ids = append(ids, stored[0].ID)
			}
			for k := 1; k < n-1; k++ {
				ids = append(ids, int64(1<<40+k))
			}
			if n > 1 {
				ids = append(ids, stored[1].ID)
			}
			got, err := db.FindDatasetRows(ctx, ds.ID, ids)
			if err != nil {
				t.Fatalf("%d ids: %v", n, err)
			}
			want := min(n, 2)
			if len(got) != want || (n > 1 && got[stored[1].ID].ExternalID != "b") || (n > 0 && got[stored[0].ID].ExternalID != "a") {
				t.Errorf("%d ids: %d rows (%v), want %d", n, len(got), got, want)
			}
		}
	})
}
