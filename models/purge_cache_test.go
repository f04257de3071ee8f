package models_test

import (
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestPurgeDeletesTheRunsCachedAnswers: deleting a run for good deletes
// the judge's answers it paid for from the answer cache (an answer quotes
// or paraphrases the samples it judged), and only those: another run's
// answers stay, and so do answers stored with no run (cached before
// migration 00044). A dataset's purge takes its runs' answers with them.
// Before, every cached answer outlived the runs and dataset it was about.
func TestPurgeDeletesTheRunsCachedAnswers(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		if len(w.runs) < 2 {
			t.Fatalf("the world has %d runs, want 2", len(w.runs))
		}
		cache := db.ResponseCache(w.ws.ID)
		save := func(c *models.ResponseCache, hash, text string) {
			t.Helper()
			if err := c.SaveAnswer(ctx, hash, 0, []byte(text)); err != nil {
				t.Fatal(err)
			}
		}
		save(cache.ForRun(w.runs[0].ID), "first", `{"analysis":"sample 1 says the hotel was noisy"}`)
		save(cache.ForRun(w.runs[0].ID), "first-again", `{"analysis":"sample 2"}`)
		save(cache.ForRun(w.runs[1].ID), "second", `{"analysis":"sample 3"}`)
		save(cache, "older", `{"analysis":"cached before answers had a run"}`)
		stored := func(hash string) bool {
			t.Helper()
			_, ok, err := cache.LoadAnswer(ctx, hash, 0)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}

		e, _, err := db.Trash(ctx, w.ws.ID, models.KindRun, w.runs[0].ID, local)
		if err != nil {
			t.Fatal(err)
		}
		if !stored("first") {
			t.Fatal("a run in the trash lost its cached answers: it can still be restored")
		}
		_, n, err := db.Purge(ctx, w.ws.ID, e.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n.CachedAnswers != 2 {
			t.Errorf("purge counted %d cached answers, want 2", n.CachedAnswers)
		}
		for hash, want := range map[string]bool{"first": false, "first-again": false, "second": true, "older": true} {
			if got := stored(hash); got != want {
				t.Errorf("after the run's purge, answer %q stored = %v, want %v", hash, got, want)
			}
		}

		e, _, err = db.Trash(ctx, w.ws.ID, models.KindDataset, w.dataset.ID, local)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.Purge(ctx, w.ws.ID, e.ID); err != nil {
			t.Fatal(err)
		}
		if stored("second") {
			t.Error("the dataset's purge left its run's cached answer")
		}
		if !stored("older") {
			t.Error("an answer with no run was deleted by a purge that cannot know whose it was")
		}
	})
}

// TestPurgeLeavesNothingPointingAtIt: after a dataset's purge (which takes
// its runs), no row of any table refers to the purged dataset, its rows
// or its runs, whatever the column (found from the schema, so a table
// added later is checked too): run_id, other_run_id, dataset_id,
// held_out_dataset_id, row_id and the like.
func TestPurgeLeavesNothingPointingAtIt(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		cache := db.ResponseCache(w.ws.ID)
		for i, r := range w.runs {
			if err := cache.ForRun(r.ID).SaveAnswer(ctx, "answer-"+string(rune('a'+i)), 0, []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: w.ws.ID, Kind: models.ShareCompare,
			RunID: w.runs[0].ID, OtherRunID: w.runs[1].ID, Label: "both"}); err != nil {
			t.Fatal(err)
		}
		var rowIDs []int64
		if err := db.Gorm.Raw("SELECT id FROM dataset_rows WHERE dataset_id = ?", w.dataset.ID).Scan(&rowIDs).Error; err != nil || len(rowIDs) == 0 {
			t.Fatalf("the dataset's rows: %d, %v", len(rowIDs), err)
		}
		runIDs := []int64{w.runs[0].ID, w.runs[1].ID}

		e, _, err := db.Trash(ctx, w.ws.ID, models.KindDataset, w.dataset.ID, local)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.Purge(ctx, w.ws.ID, e.ID); err != nil {
			t.Fatal(err)
		}

		type column struct{ table, name string }
		var cols []column
		q := `SELECT m.name, p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'`
		if db.Dialect == models.Postgres {
			q = `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`
		}
		rows, err := db.SQL.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var c column
			if err := rows.Scan(&c.table, &c.name); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, c)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		checked := 0
		for _, c := range cols {
			var ids []int64
			switch {
			case c.name == "row_id":
				ids = rowIDs
			case c.name == "run_id" || strings.HasSuffix(c.name, "_run_id"):
				ids = runIDs
			case c.name == "dataset_id" || strings.HasSuffix(c.name, "_dataset_id"):
				ids = []int64{w.dataset.ID}
			default:
				continue
			}
			if strings.HasPrefix(c.table, "river_") {
				continue // the job engine's own tables
			}
			checked++
			var n int64
			if err := db.Gorm.Raw("SELECT COUNT(*) FROM "+c.table+" WHERE "+c.name+" IN ?", ids).Scan(&n).Error; err != nil {
				t.Fatalf("%s.%s: %v", c.table, c.name, err)
			}
			if n != 0 {
				t.Errorf("%s.%s: %d rows still refer to what was purged", c.table, c.name, n)
			}
		}
		if checked < 10 {
			t.Errorf("checked %d columns, want the schema's run, dataset and row references (10 or more)", checked)
		}
	})
}
