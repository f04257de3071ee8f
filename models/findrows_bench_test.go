package models_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// BenchmarkFindDatasetRows reads 50 rows spread over a dataset of
// MODELS_BENCH_FIND_ROWS rows (100,000 by default) on SQLite, as the run
// page reads its samples' text: with the query before (dataset_id = ? AND
// id IN ?, which SQLite read through the dataset's index, every row of it)
// and with FindDatasetRows (by key). The ratio is before over after.
func BenchmarkFindDatasetRows(b *testing.B) {
	n := 100000
	if v := os.Getenv("MODELS_BENCH_FIND_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 50 {
			b.Fatalf("MODELS_BENCH_FIND_ROWS=%q is not a size of at least 50", v)
		}
	}
	db := dbtest.Open(b, models.SQLite)
	ctx := context.Background()
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		b.Fatal(err)
	}
	p := models.Project{WorkspaceID: ws.ID, Name: "p"}
	if err := db.CreateProject(ctx, &p); err != nil {
		b.Fatal(err)
	}
	ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "d", Columns: []string{"text"},
		Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
	if err := db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
		for i := range n {
			if err := put(models.DatasetRow{Position: i, ExternalID: fmt.Sprintf("s%d", i), Data: map[string]string{"text": fmt.Sprintf("The response number %d, judged for the benchmark", i)}}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	var first int64
	if err := db.Gorm.Raw("SELECT MIN(id) FROM dataset_rows WHERE dataset_id = ?", ds.ID).Scan(&first).Error; err != nil {
		b.Fatal(err)
	}
	ids := make([]int64, 50)
	for i := range ids {
		ids[i] = first + int64(i*(n/50))
	}
	b.Run(fmt.Sprintf("rows=%d/dataset-and-ids(before)", n), func(b *testing.B) {
		for b.Loop() {
			var rows []models.DatasetRow
			if err := db.Reader(ctx).Where("dataset_id = ? AND id IN ?", ds.ID, ids).Find(&rows).Error; err != nil || len(rows) != 50 {
				b.Fatalf("%d rows: %v", len(rows), err)
			}
		}
	})
	b.Run(fmt.Sprintf("rows=%d/by-key(after)", n), func(b *testing.B) {
		for b.Loop() {
			rows, err := db.FindDatasetRows(ctx, ds.ID, ids)
			if err != nil || len(rows) != 50 {
				b.Fatalf("%d rows: %v", len(rows), err)
			}
		}
	})
	// An alignment's held-out part (every other row, up to 30,000: one IN
	// list of them still fits SQLite's 32,766 parameters) read in one
	// statement, as FindDatasetRows did, and 1,000 ids at a time, as it
	// does now.
	var held []int64
	for i := 0; i < n && len(held) < 30000; i += 2 {
		held = append(held, first+int64(i))
	}
	b.Run(fmt.Sprintf("rows=%d/held-out=%d/one-statement(before)", n, len(held)), func(b *testing.B) {
		for b.Loop() {
			var rows []models.DatasetRow
			if err := db.Reader(ctx).Where("id IN ?", held).Find(&rows).Error; err != nil || len(rows) != len(held) {
				b.Fatalf("%d rows: %v", len(rows), err)
			}
			m := make(map[int64]models.DatasetRow, len(rows))
			for _, r := range rows {
				if r.DatasetID == ds.ID {
					m[r.ID] = r
				}
			}
		}
	})
	b.Run(fmt.Sprintf("rows=%d/held-out=%d/chunked(after)", n, len(held)), func(b *testing.B) {
		for b.Loop() {
			rows, err := db.FindDatasetRows(ctx, ds.ID, held)
			if err != nil || len(rows) != len(held) {
				b.Fatalf("%d rows: %v", len(rows), err)
			}
		}
	})
}
