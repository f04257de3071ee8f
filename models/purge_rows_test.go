package models_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// bulkTables are the tables whose rows are deleted by the hundred
// thousand at once (a purged dataset's rows, a purged run's batches and
// scores).
var bulkTables = []string{"dataset_rows", "run_batches", "run_scores"}

// TestForeignKeysToBulkTablesAreIndexed: every foreign key that points
// at a table whose rows are deleted in bulk has an index leading with its
// column. Without one, each deleted row makes the database read the whole
// referencing table to find (and cascade to) the row's children: before
// 00035, purging a dataset of 1,000,000 rows beside another run's 200,000
// scores held the write lock for minutes (run_scores.row_id and
// review_ratings.row_id had no such index).
func TestForeignKeysToBulkTablesAreIndexed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		var q string
		if db.Dialect == models.SQLite {
			q = `SELECT m.name, f."from", f."table"
FROM sqlite_master m, pragma_foreign_key_list(m.name) f
WHERE m.type = 'table'
AND NOT EXISTS (SELECT 1 FROM pragma_index_list(m.name) il, pragma_index_info(il.name) ii
	WHERE ii.seqno = 0 AND ii.name = f."from")
AND NOT EXISTS (SELECT 1 FROM pragma_table_info(m.name) ti WHERE ti.pk = 1 AND ti.name = f."from")`
		} else {
			q = `SELECT child.relname, a.attname, parent.relname
FROM pg_constraint c
JOIN pg_class child ON child.oid = c.conrelid
JOIN pg_class parent ON parent.oid = c.confrelid
JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
WHERE c.contype = 'f' AND child.relnamespace = current_schema()::regnamespace
AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1])`
		}
		rs, err := db.SQL.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var unindexed []string
		for rs.Next() {
			var child, column, parent string
			if err := rs.Scan(&child, &column, &parent); err != nil {
				t.Fatal(err)
			}
			if slices.Contains(bulkTables, parent) {
				unindexed = append(unindexed, child+"."+column+" -> "+parent)
			}
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		if len(unindexed) > 0 {
			t.Errorf("foreign keys to tables deleted in bulk without an index leading with their column: %s", strings.Join(unindexed, ", "))
		}
	})
}

// BenchmarkPurgeDatasetBesideScores times purging a dataset of 2,000
// rows from the trash, with no other run's scores in the database
// (baseline) and beside another dataset's run of 20,000 scores: before
// 00035 every purged row read all those scores (its foreign-key check).
func BenchmarkPurgeDatasetBesideScores(b *testing.B) {
	const rows, scores = 2000, 20000
	for _, other := range []int{0, scores} {
		b.Run(fmt.Sprintf("other-scores=%d", other), func(b *testing.B) {
			ctx := context.Background()
			db := dbtest.Open(b, models.SQLite)
			ws, err := db.EnsureDefaultWorkspace(ctx)
			if err != nil {
				b.Fatal(err)
			}
			p := models.Project{WorkspaceID: ws.ID, Name: "purge"}
			if err := db.CreateProject(ctx, &p); err != nil {
				b.Fatal(err)
			}
			dataset := func(name string, n int) models.Dataset {
				d := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: name, Format: "csv", IDColumn: "id", Columns: []string{"id", "text"},
					Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{}}
				rs := make([]models.DatasetRow, n)
				for i := range rs {
					rs[i] = models.DatasetRow{Position: i, ExternalID: fmt.Sprintf("r%d", i), Data: map[string]string{"id": fmt.Sprintf("r%d", i), "text": "some text"}, Ratings: map[string]*float64{}}
				}
				if err := db.CreateDataset(ctx, &d, rs); err != nil {
					b.Fatal(err)
				}
				return d
			}
			if other > 0 {
				kept := dataset("kept", other)
				run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: kept.ID, Name: "kept", Method: models.MethodBatchEval, CreatedAt: time.Now()}
				if err := db.CreateRun(ctx, &run, nil); err != nil {
					b.Fatal(err)
				}
				keptRows, err := db.ListDatasetRows(ctx, kept.ID, 0, 0)
				if err != nil {
					b.Fatal(err)
				}
				ids := make([][]int64, 0, other/10)
				for i := 0; i < other; i += 10 {
					var batch []int64
					for _, r := range keptRows[i:min(i+10, other)] {
						batch = append(batch, r.ID)
					}
					ids = append(ids, batch)
				}
				bs, err := db.CreateRoundBatches(ctx, run.ID, 0, 0, ids)
				if err != nil {
					b.Fatal(err)
				}
				for _, bt := range bs {
					res := models.BatchResult{Batch: bt}
					res.Batch.Status = models.BatchDone
					for k, id := range bt.RowIDs {
						v := 3.0
						res.Scores = append(res.Scores, models.RunScore{RunID: run.ID, BatchID: bt.ID, RowID: id, Label: k + 1, Score: &v})
					}
					if err := db.SaveBatchResult(ctx, res); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				d := dataset(fmt.Sprintf("purged %d", i), rows)
				e, _, err := db.Trash(ctx, ws.ID, models.KindDataset, d.ID, models.Actor{Label: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, n, err := db.Purge(ctx, ws.ID, e.ID); err != nil || n.Rows != rows {
					b.Fatalf("purge: %d rows, %v", n.Rows, err)
				}
			}
		})
	}
}

// TestPurgedDatasetLeavesNoScores: run_scores.row_id no longer references
// dataset_rows (00035), so nothing cascades from a purged row; purging a
// dataset still removes every score that stood on its rows, with the runs
// on it, and no score is left pointing at a row that is gone.
func TestPurgedDatasetLeavesNoScores(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		count := func(q string) int64 {
			var n int64
			if err := db.Gorm.Raw(q, w.dataset.ID).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		const onRows = "SELECT COUNT(*) FROM run_scores s JOIN dataset_rows r ON r.id = s.row_id WHERE r.dataset_id = ?"
		if count(onRows) == 0 {
			t.Fatal("the world's runs have no scores on the dataset's rows: nothing to check")
		}
		e, _, err := db.Trash(ctx, w.ws.ID, models.KindDataset, w.dataset.ID, local)
		if err != nil {
			t.Fatal(err)
		}
		if _, n, err := db.Purge(ctx, w.ws.ID, e.ID); err != nil || n.Scores == 0 {
			t.Fatalf("purge: %d scores removed, %v", n.Scores, err)
		}
		if n := count("SELECT COUNT(*) FROM run_scores s WHERE ? > 0 AND NOT EXISTS (SELECT 1 FROM dataset_rows r WHERE r.id = s.row_id)"); n != 0 {
			t.Errorf("%d scores left on rows that are gone", n)
		}
	})
}

// TestPurgeDeletesBulkRowsInChunks: a purge deletes a run's scores and
// batches and a dataset's rows a chunk at a time, no statement deleting
// more than a chunk, so other writers wait at most a chunk's time (the old
// purge deleted each table's rows in one statement, all in one
// transaction: tens of seconds of SQLite's write lock for a run of
// 1,000,000 samples). A purge cut short leaves its entry marked: it can
// no longer be restored, and the next sweep finishes it.
func TestPurgeDeletesBulkRowsInChunks(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		const chunk = 2
		db.PurgeChunkRows = chunk
		count := func(table string) int64 {
			var n int64
			if err := db.Gorm.Raw("SELECT COUNT(*) FROM " + table).Scan(&n).Error; err != nil {
				t.Fatal(err)
			}
			return n
		}
		type deletion struct {
			sql  string
			rows int64
		}
		var mu sync.Mutex
		var deletes []deletion
		var onDelete func()
		name := "test:purge_deletes"
		if err := db.Gorm.Callback().Raw().After("gorm:raw").Register(name, func(tx *gorm.DB) {
			q := strings.ToLower(tx.Statement.SQL.String())
			if !strings.HasPrefix(q, "delete from") {
				return
			}
			mu.Lock()
			deletes = append(deletes, deletion{q, tx.Statement.RowsAffected})
			f := onDelete
			mu.Unlock()
			if f != nil {
				f()
			}
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Gorm.Callback().Raw().Remove(name) })

		w := newWorld(t, db)
		t.Run("cut short, then swept", func(t *testing.T) {
			e, _, err := db.Trash(ctx, w.ws.ID, models.KindRun, w.runs[1].ID, local)
			if err != nil {
				t.Fatal(err)
			}
			cctx, cancel := context.WithCancel(ctx)
			mu.Lock()
			onDelete = cancel // the first chunk deleted, the process dies
			mu.Unlock()
			_, _, err = db.Purge(cctx, w.ws.ID, e.ID)
			mu.Lock()
			onDelete = nil
			mu.Unlock()
			if err == nil {
				t.Fatal("the purge cut short reported no error")
			}
			if _, err := db.Restore(ctx, w.ws.ID, e.ID); models.ErrorCode(err) != models.EConflict || !strings.Contains(models.ErrorMessage(err), "being deleted for good") {
				t.Errorf("restore of a purge cut short = %v, want a conflict saying it is being deleted for good", err)
			}
			// Not due for weeks, but its purge began: the sweep finishes it.
			done, err := db.SweepTrash(ctx, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if len(done) != 1 || done[0].ID != e.ID {
				t.Errorf("sweep purged %v, want entry %d", done, e.ID)
			}
			var left int64
			if err := db.Gorm.Raw("SELECT COUNT(*) FROM run_scores WHERE run_id = ?", w.runs[1].ID).Scan(&left).Error; err != nil || left != 0 {
				t.Errorf("%d scores of the purged run left (%v)", left, err)
			}
			if _, err := db.FindRun(ctx, w.ws.ID, w.runs[0].ID); err != nil {
				t.Errorf("the other run: %v", err)
			}
		})
		t.Run("chunks", func(t *testing.T) {
			scores, batches := count("run_scores"), count("run_batches")
			rows := int64(w.dataset.RowCount)
			if scores <= chunk || rows <= chunk {
				t.Fatalf("%d scores, %d rows: the test needs more than a chunk of each", scores, rows)
			}
			e, _, err := db.Trash(ctx, w.ws.ID, models.KindDataset, w.dataset.ID, local)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			deletes = nil
			mu.Unlock()
			_, n, err := db.Purge(ctx, w.ws.ID, e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if n.Scores != scores || n.Batches != batches || n.Rows != rows {
				t.Errorf("purge counted %d scores, %d batches, %d rows; want %d, %d, %d", n.Scores, n.Batches, n.Rows, scores, batches, rows)
			}
			for _, table := range []string{"run_scores", "run_batches", "dataset_rows"} {
				if c := count(table); c != 0 {
					t.Errorf("%d rows left in %s", c, table)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, d := range deletes {
				for _, table := range []string{"run_scores", "run_batches", "dataset_rows", "run_sample_results"} {
					if strings.HasPrefix(d.sql, "delete from "+table+" ") && d.rows > chunk {
						t.Errorf("one statement deleted %d rows (a chunk is %d): %s", d.rows, chunk, d.sql)
					}
				}
			}
		})

	})
}
