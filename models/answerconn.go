package models

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
)

// On a SQLite file the run loop's answer writes go through one connection
// (DB.answerSQL), which this process holds for its life and uses for one
// thing at a time. Its transactions are BEGIN IMMEDIATE and COMMIT
// statements, and its hot statements are prepared on it, rather than a
// database/sql transaction: a *sql.Tx starts a goroutine to watch its
// context, and every query in it another. At concurrency 1 a judge call
// woke a sleeping core for each of them, which on a small machine cost
// more CPU than the statements they watched. A statement run here with a
// context that cannot be cancelled starts no goroutine at all.

// answerConn is the held connection of the answer writes.
type answerConn struct {
	mu   sync.Mutex // held by a transaction from begin to its end
	pool *sql.DB    // answerSQL, a pool of one connection
	// conn is the held connection (nil before the first use, after a
	// failure that may have left it in a transaction, and once closed);
	// stmts are the hot statements prepared on it.
	conn   *sql.Conn
	stmts  map[string]*sql.Stmt
	closed bool
}

// errAnswersClosed is what a write after DB.Close gets.
var errAnswersClosed = errors.New("the database is closed")

// connLocked returns the held connection, taking one from the pool when
// there is none. a.mu must be held.
func (a *answerConn) connLocked(ctx context.Context) (*sql.Conn, error) {
	if a.closed {
		return nil, errAnswersClosed
	}
	if a.conn == nil {
		c, err := a.pool.Conn(ctx)
		if err != nil {
			return nil, err
		}
		a.conn, a.stmts = c, map[string]*sql.Stmt{}
	}
	return a.conn, nil
}

// dropLocked gives the connection up (closing it ends any transaction
// left open on it); the next use takes a new one. a.mu must be held.
func (a *answerConn) dropLocked() {
	for _, st := range a.stmts {
		st.Close()
	}
	a.stmts = nil
	if a.conn != nil {
		// Marked bad, the pool closes it rather than keep it.
		_ = a.conn.Raw(func(any) error { return driver.ErrBadConn })
		a.conn.Close()
		a.conn = nil
	}
}

// close gives the connection back for good, once any transaction has
// ended.
func (a *answerConn) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, st := range a.stmts {
		st.Close()
	}
	a.stmts = nil
	if a.conn != nil {
		a.conn.Close()
		a.conn = nil
	}
	a.closed = true
}

// stmtLocked is q prepared on the held connection when worth it (see
// hotSQL.worthPreparing), else nil: run q as text. a.mu must be held.
func (a *answerConn) stmtLocked(ctx context.Context, c *sql.Conn, q string) *sql.Stmt {
	if st := a.stmts[q]; st != nil {
		return st
	}
	if len(a.stmts) >= maxPrepared || !hotSQL.worthPreparing(q) {
		return nil
	}
	st, err := c.PrepareContext(ctx, q)
	if err != nil {
		return nil // run as text; a later use tries again
	}
	a.stmts[q] = st
	return st
}

// execLocked runs q on the held connection. a.mu must be held.
func (a *answerConn) execLocked(ctx context.Context, q string, args ...any) (sql.Result, error) {
	c, err := a.connLocked(ctx)
	if err != nil {
		return nil, err
	}
	if st := a.stmtLocked(ctx, c, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return c.ExecContext(ctx, q, args...)
}

// queryLocked is execLocked for a query. a.mu must be held until the rows
// are closed.
func (a *answerConn) queryLocked(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	c, err := a.connLocked(ctx)
	if err != nil {
		return nil, err
	}
	if st := a.stmtLocked(ctx, c, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return c.QueryContext(ctx, q, args...)
}

// exec runs one statement outside any transaction.
func (a *answerConn) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.execLocked(ctx, q, args...)
}

// answerTx is a transaction of the answer writes: on a SQLite file, on
// the held connection (ac); elsewhere database/sql's (tx).
type answerTx struct {
	tx   *sql.Tx
	ac   *answerConn
	ctx  context.Context
	done bool
}

// beginAnswers starts a transaction of the answer writes. It must end with
// Commit or Rollback: on SQLite it holds the answer connection until then.
func (db *DB) beginAnswers(ctx context.Context) (*answerTx, error) {
	a := db.ans
	if a == nil {
		tx, err := db.answers().BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		return &answerTx{tx: tx}, nil
	}
	a.mu.Lock()
	// IMMEDIATE: the write lock is taken now, as _txlock=immediate makes
	// the pool's transactions do, so two writers never deadlock upgrading.
	if _, err := a.execLocked(ctx, "BEGIN IMMEDIATE"); err != nil {
		a.mu.Unlock()
		return nil, err
	}
	return &answerTx{ac: a, ctx: ctx}, nil
}

// Commit commits the transaction; when that fails it is rolled back.
func (t *answerTx) Commit() error { return t.end(true) }

// Rollback ends the transaction without its writes; after Commit it does
// nothing.
func (t *answerTx) Rollback() error { return t.end(false) }

// end commits or rolls back the transaction, and lets the connection go.
func (t *answerTx) end(commit bool) error {
	switch {
	case t.tx != nil && commit:
		return t.tx.Commit()
	case t.tx != nil:
		return t.tx.Rollback()
	case t.done:
		return sql.ErrTxDone
	}
	t.done = true
	defer t.ac.mu.Unlock()
	if commit {
		// Not cancelled with its context: a transaction left open would
		// hold the write lock.
		_, err := t.ac.execLocked(context.WithoutCancel(t.ctx), "COMMIT")
		if err == nil {
			return nil
		}
		t.ac.rollbackLocked(t.ctx)
		return err
	}
	t.ac.rollbackLocked(t.ctx)
	return nil
}

// rollbackLocked rolls back the connection's transaction, or gives the
// connection up when it cannot (closing it rolls back). a.mu must be held.
func (a *answerConn) rollbackLocked(ctx context.Context) {
	if a.conn == nil {
		return
	}
	if _, err := a.execLocked(context.WithoutCancel(ctx), "ROLLBACK"); err != nil {
		a.dropLocked()
	}
}

// exec runs q in the transaction.
func (t *answerTx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if t.done {
		return nil, fmt.Errorf("run a statement: %w", sql.ErrTxDone)
	}
	return t.ac.execLocked(ctx, q, args...)
}

// queryRow runs query q of one row in the transaction. The connection is
// there from the transaction's start (beginAnswers) to its end.
func (t *answerTx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if t.done {
		// A bug of the caller: the connection is no longer this
		// transaction's, and a *sql.Row cannot carry the error.
		panic("models: a query in an answer transaction that has ended")
	}
	a := t.ac
	if st := a.stmtLocked(ctx, a.conn, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return a.conn.QueryRowContext(ctx, q, args...)
}

// sqlTx is t's database/sql transaction, nil for none (t nil, or a
// transaction of the held connection).
func (t *answerTx) sqlTx() *sql.Tx {
	if t == nil {
		return nil
	}
	return t.tx
}

// query runs query q in the transaction.
func (t *answerTx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if t.done {
		return nil, fmt.Errorf("run a query: %w", sql.ErrTxDone)
	}
	return t.ac.queryLocked(ctx, q, args...)
}
