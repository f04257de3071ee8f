package models

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
)

// TestHotStatementsPreparedOnSQLite: on SQLite a hot statement is parsed
// once and then run prepared: on the write pool at its first use, and on
// the answer connection, inside its transactions too, on that connection;
// both give the same results as the text they stand for.
func TestHotStatementsPreparedOnSQLite(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "hot.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE hot (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	prepared := func(h interface{}, q string) bool {
		db.stmts.wg.Wait()
		db.stmts.mu.Lock()
		defer db.stmts.mu.Unlock()
		for k := range db.stmts.m {
			if k.q == q && any(k.h) == h {
				return true
			}
		}
		return false
	}

	ins := "INSERT INTO hot (id, v) VALUES (?, ?)"
	sel := "SELECT v FROM hot WHERE id = ?"
	tx, err := db.beginAnswers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.hotExec(ctx, db.answers(), tx, ins, 1, "one"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if db.ans.stmts[ins] == nil {
		t.Fatalf("%q is not prepared on the answer connection after its first transaction", ins)
	}
	if prepared(db.answers(), ins) {
		t.Errorf("%q was prepared on the answer pool, whose one connection is held", ins)
	}
	tx, err = db.beginAnswers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.hotExec(ctx, db.answers(), tx, ins, 2, "two"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err == nil {
		t.Error("a transaction rolled back commits")
	}
	// Outside a transaction: prepared at once.
	for id, want := range map[int64]string{1: "one", 2: ""} {
		var got string
		err := db.hotQueryRow(ctx, db.SQL, nil, sel, id).Scan(&got)
		if want == "" && err == nil {
			t.Errorf("row %d was rolled back but reads %q", id, got)
		}
		if want != "" && (err != nil || got != want) {
			t.Errorf("row %d: got %q, %v; want %q", id, got, err, want)
		}
	}
	if !prepared(db.SQL, sel) {
		t.Errorf("%q is not prepared after its first use", sel)
	}
}

// TestAnswerTransactionsStartNoGoroutine: a transaction of the answer
// writes, with a query and a statement in it, starts no goroutine (a
// database/sql transaction starts one, and one more per query); one whose
// statement fails is rolled back whole, and the next one commits.
func TestAnswerTransactionsStartNoGoroutine(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "tx.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	ins := "INSERT INTO t (id, v) VALUES (?, ?)"
	write := func(id int64, v any) (during int, err error) {
		tx, err := db.beginAnswers(ctx)
		if err != nil {
			return 0, err
		}
		var n int64
		if err := db.hotQueryRow(ctx, db.answers(), tx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil {
			tx.Rollback()
			return 0, err
		}
		if _, err := db.hotExec(ctx, db.answers(), tx, ins, id, v); err != nil {
			tx.Rollback()
			return 0, err
		}
		during = runtime.NumGoroutine()
		return during, tx.Commit()
	}
	if _, err := write(1, "warm"); err != nil { // the connection taken, statements prepared
		t.Fatal(err)
	}
	// The fewest goroutines over a few tries: something else of the
	// process may come and go meanwhile, never fewer.
	before, during := 1<<30, 1<<30
	for i := range 5 {
		before = min(before, runtime.NumGoroutine())
		d, err := write(int64(10+i), "v")
		if err != nil {
			t.Fatal(err)
		}
		during = min(during, d)
	}
	if during > before {
		t.Errorf("%d goroutines during a transaction, %d before: the transaction started some", during, before)
	}

	// A failed statement (NOT NULL) after a good one: nothing of it stays.
	tx, err := db.beginAnswers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.hotExec(ctx, db.answers(), tx, ins, 100, "kept?"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.hotExec(ctx, db.answers(), tx, ins, 101, nil); err == nil {
		t.Fatal("a NULL was stored in a NOT NULL column")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := write(102, "after"); err != nil {
		t.Fatalf("the transaction after a failed one: %v", err)
	}
	var ids []int64
	rows, err := db.SQL.QueryContext(ctx, "SELECT id FROM t WHERE id >= 100 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) != 1 || ids[0] != 102 {
		t.Errorf("rows stored: %v, want only 102 (the failed transaction rolled back whole)", ids)
	}
}

// TestSQLiteTimesKeepTheirFormat: a time is stored as text in the format
// the former SQLite driver wrote, so files written before the driver
// changed still compare and parse alike (modernc.org/sqlite's own
// default is time.Time.String, "... +0000 UTC").
func TestSQLiteTimesKeepTheirFormat(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "times.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE times (id INTEGER PRIMARY KEY, at DATETIME)"); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 2, 3, 4, 5, 120000000, time.UTC)
	for i, h := range []*sql.DB{db.SQL, db.answers()} {
		if _, err := db.hotExec(ctx, h, nil, "INSERT INTO times (id, at) VALUES (?, ?)", i+1, at); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.readSQL.QueryContext(ctx, "SELECT CAST(at AS TEXT), at FROM times WHERE at = ? ORDER BY id", at)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var text string
		var back time.Time
		if err := rows.Scan(&text, &back); err != nil {
			t.Fatal(err)
		}
		if want := "2026-12-02 03:04:05.12+00:00"; text != want {
			t.Errorf("stored %q, want %q", text, want)
		}
		if !back.Equal(at) {
			t.Errorf("read back %v, want %v", back, at)
		}
		n++
	}
	if n != 2 {
		t.Errorf("the read pool found %d rows by time, want 2 (one per write handle)", n)
	}
}

// TestPreparedCacheStaysBounded: fixed statements and multi-row ones of
// few rows are kept prepared, larger shapes (which vary from run to run)
// run as text; after Close nothing is prepared any more.
func TestPreparedCacheStaysBounded(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "bounded.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL.ExecContext(ctx, "CREATE TABLE b (v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rows int
		kept bool
	}{{0, true}, {1, true}, {10, true}, {maxPreparedRows, true}, {maxPreparedRows + 1, false}, {200, false}} {
		q := hotSQL.get(db.Dialect, "bounded test insert", tc.rows, func() string {
			return "INSERT INTO b (v) VALUES " + valuesList(max(tc.rows, 1), 1)
		})
		args := make([]any, max(tc.rows, 1))
		for i := range args {
			args[i] = i
		}
		if _, err := db.hotExec(ctx, db.SQL, nil, q, args...); err != nil {
			t.Fatal(err)
		}
		db.stmts.mu.Lock()
		_, kept := db.stmts.m[preparedKey{db.SQL, q}]
		db.stmts.mu.Unlock()
		if kept != tc.kept {
			t.Errorf("%d rows: kept prepared %v, want %v", tc.rows, kept, tc.kept)
		}
	}
	db.Close()
	if st := db.prepared(ctx, db.SQL, nil, "SELECT v FROM b"); st != nil {
		t.Error("a statement was prepared after Close")
	}
}

// TestAnswerLookupsStayPrepared: a round's answer-cache lookup (a few
// hashes, one occurrence) runs prepared on SQLite; one of more pairs than
// maxPreparedRows runs as text. Before, every lookup was parsed: its shape
// number (both lists' lengths in one int) was taken for its row count.
func TestAnswerLookupsStayPrepared(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "lookups.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.MigrateSchema(ctx, nil); err != nil {
		t.Fatal(err)
	}
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cache := db.ResponseCache(ws.ID)
	if err := cache.SaveAnswer(ctx, "h1", 0, []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	keptPrepared := func() int {
		db.stmts.wg.Wait()
		db.stmts.mu.Lock()
		defer db.stmts.mu.Unlock()
		n := 0
		for k := range db.stmts.m {
			if strings.HasPrefix(k.q, "SELECT request_hash, occurrence, response FROM judge_response_cache") {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		hashes int
		kept   int // lookup statements kept prepared after it
	}{{1, 1}, {13, 2}, {13, 2}, {maxPreparedRows, 3}, {maxPreparedRows + 1, 3}, {200, 3}} {
		keys := []judge.AnswerKey{{Hash: "h1"}}
		for i := 1; i < tc.hashes; i++ {
			keys = append(keys, judge.AnswerKey{Hash: "other" + strconv.Itoa(i)})
		}
		got, err := cache.LoadAnswers(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		if string(got[judge.AnswerKey{Hash: "h1"}]) != `{"a":1}` || len(got) != 1 {
			t.Fatalf("%d hashes: answers %v", tc.hashes, got)
		}
		if n := keptPrepared(); n != tc.kept {
			t.Errorf("after a lookup of %d hashes: %d lookup statements kept prepared, want %d", tc.hashes, n, tc.kept)
		}
	}
}
