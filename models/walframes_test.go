package models_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/batcheval/batcheval/migrations"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// walPages reads the page numbers of the frames in the SQLite WAL file at
// path, in order.
func walPages(t *testing.T, path string) []uint32 {
	t.Helper()
	wal, err := os.ReadFile(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if len(wal) < 32 {
		return nil
	}
	size := int(binary.BigEndian.Uint32(wal[8:12]))
	var pages []uint32
	for off := 32; off+24+size <= len(wal); off += 24 + size {
		pages = append(pages, binary.BigEndian.Uint32(wal[off:off+4]))
	}
	return pages
}

// TestAnswerWALFrames counts the pages (WAL frames: each is two writes
// and part of a later checkpoint) one stored answer writes on SQLite, the
// way a run at concurrency 1 stores them: its batch, its scores, the run's
// counters and its copy for the answer cache, in one commit. No frame may
// be sqlite_sequence's: run_scores without AUTOINCREMENT (migration
// 00033) takes that page off every answer (it wrote one a commit before:
// 17.97 frames an answer, now 16.97; BENCHMARKS.md, "Run speed, eleventh
// pass"). The other tables' share is logged.
func TestAnswerWALFrames(t *testing.T) {
	t.Parallel()
	dsn := dbtest.DSN(t, models.SQLite)
	path := strings.TrimPrefix(dsn, "sqlite://")
	db := dbtest.OpenDSN(t, dsn)
	ctx := context.Background()
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := demo.Seed(ctx, db, ws)
	if err != nil {
		t.Fatal(err)
	}
	dss, err := db.ListDatasets(ctx, ws.ID, p.ID)
	if err != nil || len(dss) == 0 {
		t.Fatalf("demo datasets: %v", err)
	}
	rows, err := db.ListDatasetRows(ctx, dss[0].ID, 0, 10)
	if err != nil || len(rows) == 0 {
		t.Fatalf("rows: %d, %v", len(rows), err)
	}
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: dss[0].ID, Name: "frames", Method: models.MethodBatchEval, CreatedAt: time.Now()}
	if err := db.CreateRun(ctx, &run, nil); err != nil {
		t.Fatal(err)
	}
	const owner = "frames-worker"
	if err := db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ? WHERE id = ?`, owner, models.RunRunning, run.ID).Error; err != nil {
		t.Fatal(err)
	}
	const answers, warm = 30, 5
	var batches []models.RunBatch
	for round := range answers {
		bs, err := db.CreateRoundBatches(ctx, run.ID, 0, round, [][]int64{ids})
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, bs...)
	}
	request := strings.Repeat("User: how was your weekend? System: I went hiking with my sister. ", 12*1024/66)
	response := strings.Repeat("Sample 3: the reply follows the topic and answers the question. ", 2*1024/64)
	analysis := strings.Repeat("on topic, coherent; ", 8)
	cache := db.ResponseCache(ws.ID)
	sctx := models.WithLeaseOwner(ctx, owner)
	frames := 0
	byTable := map[string]int{}
	for i, bt := range batches {
		// An empty WAL before each answer: its frames are the answer's.
		var busy, logged, done int
		if err := db.SQL.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &done); err != nil || busy != 0 {
			t.Fatalf("checkpoint: busy %d, %v", busy, err)
		}
		bt.Status, bt.Request, bt.Response = models.BatchDone, request, response
		bt.PromptTokens, bt.CompletionTokens, bt.Calls, bt.Attempts = 3000, 500, 1, 1
		res := models.BatchResult{Batch: bt}
		for k, id := range ids {
			v := float64(k%3 + 1)
			res.Scores = append(res.Scores, models.RunScore{RunID: run.ID, BatchID: bt.ID, Round: bt.Round, RowID: id, Label: k + 1, Score: &v, Analysis: analysis})
		}
		answer := cache.Answer(fmt.Sprintf("%064x", i), 0, []byte(response))
		for _, err := range db.SaveBatchResults(sctx, []models.BatchSave{
			{Result: res, Owner: owner, OnLease: func(models.LeaseState) {}},
			{Cached: &answer},
		}) {
			if err != nil {
				t.Fatal(err)
			}
		}
		pages := walPages(t, path)
		if len(pages) == 0 {
			t.Fatalf("answer %d wrote no WAL frame", i)
		}
		if i < warm {
			continue
		}
		names := map[uint32]string{}
		q, err := db.SQL.QueryContext(ctx, "SELECT name, pageno FROM dbstat")
		if err != nil {
			t.Fatal(err)
		}
		for q.Next() {
			var name string
			var pg uint32
			if err := q.Scan(&name, &pg); err != nil {
				t.Fatal(err)
			}
			names[pg] = name
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		frames += len(pages)
		for _, pg := range pages {
			byTable[names[pg]]++
		}
	}
	n := float64(answers - warm)
	t.Logf("%.2f WAL frames an answer", float64(frames)/n)
	for name, c := range byTable {
		t.Logf("  %5.2f %s", float64(c)/n, name)
	}
	if c := byTable["sqlite_sequence"]; c > 0 {
		t.Errorf("%.2f frames an answer are sqlite_sequence's: an AUTOINCREMENT table is written with every answer", float64(c)/n)
	}
	if got := len(scoreIDs(t, db, run.ID)); got != answers*len(ids) {
		t.Errorf("%d scores stored, want %d", got, answers*len(ids))
	}
}

// scoreIDs reads a run's score ids.
func scoreIDs(t *testing.T, db *models.DB, runID int64) []int64 {
	t.Helper()
	var ids []int64
	if err := db.Gorm.Raw("SELECT id FROM run_scores WHERE run_id = ? ORDER BY id", runID).Scan(&ids).Error; err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestRunScoresMigrationKeepsScores: SQLite's migration 00033 copies
// run_scores into a table without AUTOINCREMENT: every score is kept
// with its id, its indexes are back (one score per place), the deletes
// cascade as before, and a new score gets an id above every kept one.
func TestRunScoresMigrationKeepsScores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := dbtest.DSN(t, models.SQLite)
	raw, err := models.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	fsys, err := fs.Sub(migrations.SQLite, "sqlite")
	if err != nil {
		t.Fatal(err)
	}
	prov, err := goose.NewProvider(goose.DialectSQLite3, raw.SQL, fsys, goose.WithTableName("batcheval_schema_version"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := prov.UpTo(ctx, 32); err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) sql.Result {
		t.Helper()
		res, err := raw.SQL.ExecContext(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return res
	}
	ws, err := raw.EnsureDefaultWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Today's code seeds the demo: it writes datasets.rating_stats (00036)
	// and import_notes (00042), which this schema does not have yet (the
	// columns play no part here).
	exec(`ALTER TABLE datasets ADD COLUMN rating_stats TEXT`)
	exec(`ALTER TABLE datasets ADD COLUMN import_notes TEXT`) // and 00042's
	exec(`ALTER TABLE runs ADD COLUMN name_folded TEXT`)      // and 00050's
	exec(`ALTER TABLE experiments ADD COLUMN name_folded TEXT`)
	// It stores runs with runs.too_few_scores (00048) too.
	exec(`ALTER TABLE runs ADD COLUMN too_few_scores INTEGER NOT NULL DEFAULT 0`)
	// And runs.prompt_template_version (00058).
	exec(`ALTER TABLE runs ADD COLUMN prompt_template_version TEXT NOT NULL DEFAULT ''`)
	// And runs.prompt_versions (00061).
	exec(`ALTER TABLE runs ADD COLUMN prompt_versions TEXT`)
	p, err := demo.Seed(ctx, raw, ws)
	if err != nil {
		t.Fatal(err)
	}
	dss, err := raw.ListDatasets(ctx, ws.ID, p.ID)
	if err != nil || len(dss) == 0 {
		t.Fatalf("demo datasets: %v", err)
	}
	rows, err := raw.ListDatasetRows(ctx, dss[0].ID, 0, 3)
	if err != nil || len(rows) < 3 {
		t.Fatalf("rows: %d, %v", len(rows), err)
	}
	run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: dss[0].ID, Name: "m", Method: models.MethodBatchEval, CreatedAt: time.Now()}
	if err := raw.CreateRun(ctx, &run, nil); err != nil {
		t.Fatal(err)
	}
	bs, err := raw.CreateRoundBatches(ctx, run.ID, 0, 0, [][]int64{{rows[0].ID, rows[1].ID}, {rows[2].ID}})
	if err != nil {
		t.Fatal(err)
	}
	// Scores with ids far apart, one missing, as stored before 00033.
	exec(`INSERT INTO run_scores (id, run_id, batch_id, criterion_index, round, row_id, label, score, analysis) VALUES
 (7, ?, ?, 0, 0, ?, 1, 2.5, 'a'), (40, ?, ?, 0, 0, ?, 2, NULL, 'unreadable'), (41, ?, ?, 0, 0, ?, 1, 1, '')`,
		run.ID, bs[0].ID, rows[0].ID, run.ID, bs[0].ID, rows[1].ID, run.ID, bs[1].ID, rows[2].ID)
	if _, err := prov.UpTo(ctx, 33); err != nil {
		t.Fatal(err)
	}
	type score struct {
		ID, BatchID, RowID int64
		Label              int
		Score              sql.NullFloat64
		Analysis           string
	}
	read := func() []score {
		t.Helper()
		q, err := raw.SQL.QueryContext(ctx, `SELECT id, batch_id, row_id, label, score, analysis FROM run_scores WHERE run_id = ? ORDER BY id`, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		var out []score
		for q.Next() {
			var s score
			if err := q.Scan(&s.ID, &s.BatchID, &s.RowID, &s.Label, &s.Score, &s.Analysis); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		return out
	}
	got := read()
	want := []score{
		{7, bs[0].ID, rows[0].ID, 1, sql.NullFloat64{Float64: 2.5, Valid: true}, "a"},
		{40, bs[0].ID, rows[1].ID, 2, sql.NullFloat64{}, "unreadable"},
		{41, bs[1].ID, rows[2].ID, 1, sql.NullFloat64{Float64: 1, Valid: true}, ""},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after 00033:\n got %v\nwant %v", got, want)
	}
	var auto int
	if err := raw.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'run_scores' AND sql LIKE '%AUTOINCREMENT%'`).Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("run_scores still declared AUTOINCREMENT (%d, %v)", auto, err)
	}
	// The place is still unique.
	if _, err := raw.SQL.ExecContext(ctx, `INSERT INTO run_scores (run_id, batch_id, criterion_index, round, row_id, label) VALUES (?, ?, 0, 0, ?, 1)`,
		run.ID, bs[1].ID, rows[2].ID); err == nil {
		t.Error("a second score for one place was stored: run_scores_place is gone")
	}
	// A new score's id is above every kept one.
	res := exec(`INSERT INTO run_scores (run_id, batch_id, criterion_index, round, row_id, label) VALUES (?, ?, 1, 0, ?, 1)`, run.ID, bs[1].ID, rows[2].ID)
	if id, err := res.LastInsertId(); err != nil || id <= 41 {
		t.Errorf("new score's id %d (%v), want above 41", id, err)
	}
	// Deleting a batch still deletes its scores.
	exec(`PRAGMA foreign_keys = ON`)
	exec(`DELETE FROM run_batches WHERE id = ?`, bs[0].ID)
	if got := read(); len(got) != 2 || got[0].ID != 41 {
		t.Errorf("after deleting the first batch: %v, want its two scores gone", got)
	}
	// And back down: the scores are kept there too.
	if _, err := prov.DownTo(ctx, 32); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got) != 2 || got[0].ID != 41 {
		t.Errorf("after 00033's down: %v, want the two scores kept", got)
	}
	// 00035 copies run_scores again, without the reference of row_id:
	// the scores are kept, ids and all, and deleting a batch still
	// deletes its scores.
	if _, err := prov.UpTo(ctx, 35); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got) != 2 || got[0].ID != 41 || got[1].RowID != rows[2].ID {
		t.Errorf("after 00035: %v, want the two scores kept", got)
	}
	var refs int
	if err := raw.SQL.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_foreign_key_list('run_scores') WHERE "from" = 'row_id'`).Scan(&refs); err != nil || refs != 0 {
		t.Errorf("run_scores.row_id still has %d references (%v)", refs, err)
	}
	exec(`PRAGMA foreign_keys = ON`)
	exec(`DELETE FROM run_batches WHERE id = ?`, bs[1].ID)
	if got := read(); len(got) != 0 {
		t.Errorf("after 00035, deleting the batch of both scores left: %v, want them gone", got)
	}
}
