package models

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
)

// The run loop's hot writes (an answer, its scores and the run's counters;
// the lease check before each call; the answer cache) go through
// database/sql with fixed SQL text instead of GORM: no reflection over the
// structs, no callbacks, and as few statements as the writes need. The
// SQLite driver parses every statement it runs (it keeps no prepared
// statements), so the number and length of statements is what costs; on
// PostgreSQL pgx caches the statements it has seen by their text, so fixed
// text is what lets it prepare each once per connection.

// rebind turns the ? placeholders of q into the dialect's: $1, $2... on
// PostgreSQL, unchanged on SQLite. q must not hold a literal question mark.
func rebind(d Dialect, q string) string {
	if d != Postgres {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// sqlCache keeps the dialect's text of each hot statement, built once,
// and how many rows each text is for (0: a fixed statement).
type sqlCache struct {
	mu   sync.Mutex
	m    map[sqlKey]string
	rows map[string]int
}

type sqlKey struct {
	d    Dialect
	name string
	n    int
}

var hotSQL sqlCache

// get returns the statement named name (with n rows, for multi-row ones)
// in dialect d, building it with build the first time.
func (c *sqlCache) get(d Dialect, name string, n int, build func() string) string {
	return c.getShape(d, name, n, n, build)
}

// getShape is get for a statement whose shape is named by a number other
// than its rows (a lookup by two lists: shape encodes both lengths).
func (c *sqlCache) getShape(d Dialect, name string, shape, n int, build func() string) string {
	k := sqlKey{d, name, shape}
	c.mu.Lock()
	defer c.mu.Unlock()
	if q, ok := c.m[k]; ok {
		return q
	}
	if c.m == nil {
		c.m = map[sqlKey]string{}
	}
	q := rebind(d, build())
	c.m[k] = q
	if c.rows == nil {
		c.rows = map[string]int{}
	}
	c.rows[q] = n
	return q
}

// worthPreparing reports whether q is kept prepared: fixed statements and
// multi-row ones of few rows (a batch's scores). Larger shapes (a round's
// batches, a lookup of many answers) vary from run to run and run a few
// times each; kept, they would fill the cache for good.
func (c *sqlCache) worthPreparing(q string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.rows[q]
	return !ok || n <= maxPreparedRows
}

// maxPreparedRows is the most rows of a multi-row statement kept prepared.
const maxPreparedRows = 32

// valuesList is n groups of cols placeholders: "(?, ?), (?, ?)".
func valuesList(n, cols int) string {
	group := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(group+", ", n), ", ")
}

// maxPrepared bounds the statements kept prepared: the hot statements are
// a handful, but multi-row ones come in one shape per row count.
const maxPrepared = 256

// preparedCache keeps SQLite's prepared hot statements, per handle.
type preparedCache struct {
	mu      sync.Mutex
	m       map[preparedKey]*sql.Stmt
	pending map[preparedKey]bool
	wg      sync.WaitGroup
	closed  bool
}

type preparedKey struct {
	h *sql.DB
	q string
}

// prepared returns q prepared on h, in tx when tx is not nil, or nil when
// q should run as text: on PostgreSQL, when the cache is full, or when a
// transaction needs a statement not prepared yet. Preparing needs a
// connection of h, which the transaction may hold, so a statement first
// met inside a transaction runs as text that once and is prepared in the
// background, when a connection is free. (The answer connection of a
// SQLite file keeps statements of its own: answerconn.go.)
func (db *DB) prepared(ctx context.Context, h *sql.DB, tx *sql.Tx, q string) *sql.Stmt {
	if db.Dialect != SQLite || !hotSQL.worthPreparing(q) {
		return nil
	}
	c := &db.stmts
	k := preparedKey{h, q}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	st := c.m[k]
	full := len(c.m)+len(c.pending) >= maxPrepared
	wait := c.pending[k]
	prepareNow := st == nil && !full && !wait
	if prepareNow {
		// Counted under mu, so close never waits on a count that is
		// still to grow.
		c.wg.Add(1)
	}
	if prepareNow && tx != nil {
		if c.pending == nil {
			c.pending = map[preparedKey]bool{}
		}
		c.pending[k] = true
		go c.prepare(context.WithoutCancel(ctx), k)
	}
	c.mu.Unlock()
	switch {
	case st != nil && tx != nil:
		return tx.StmtContext(ctx, st)
	case !prepareNow || tx != nil:
		return st
	}
	return c.prepare(ctx, k)
}

// prepare prepares k and keeps it (nil when it could not be: the caller
// runs the text, and a later use tries again).
func (c *preparedCache) prepare(ctx context.Context, k preparedKey) *sql.Stmt {
	defer c.wg.Done()
	st, err := k.h.PrepareContext(ctx, k.q)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, k)
	if err != nil {
		return nil
	}
	if c.closed {
		st.Close()
		return nil
	}
	if old := c.m[k]; old != nil {
		// Prepared by two callers at once: keep the first.
		st.Close()
		return old
	}
	if c.m == nil {
		c.m = map[preparedKey]*sql.Stmt{}
	}
	c.m[k] = st
	return st
}

// close closes the prepared statements. It is called after the handles are
// closed: a background preparation waiting for a connection fails then
// instead of waiting for a transaction that may never end.
func (c *preparedCache) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.wg.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

// hotExec runs q with args on h, or in tx when tx is not nil, prepared
// where that pays (see prepared). On a SQLite file a statement on the
// answer handle runs on its held connection (answerconn.go).
func (db *DB) hotExec(ctx context.Context, h *sql.DB, tx *answerTx, q string, args ...any) (sql.Result, error) {
	switch {
	case tx != nil && tx.ac != nil:
		return tx.exec(ctx, q, args...)
	case tx == nil && db.ans != nil && h == db.answerSQL:
		return db.ans.exec(ctx, q, args...)
	}
	stx := tx.sqlTx()
	if st := db.prepared(ctx, h, stx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	if stx != nil {
		return stx.ExecContext(ctx, q, args...)
	}
	return h.ExecContext(ctx, q, args...)
}

// hotQuery is hotExec for a query. A read outside a transaction goes to
// the write pool rather than the answer connection, which is for writes.
func (db *DB) hotQuery(ctx context.Context, h *sql.DB, tx *answerTx, q string, args ...any) (*sql.Rows, error) {
	if tx != nil && tx.ac != nil {
		return tx.query(ctx, q, args...)
	}
	h = db.readsOn(h, tx)
	stx := tx.sqlTx()
	if st := db.prepared(ctx, h, stx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	if stx != nil {
		return stx.QueryContext(ctx, q, args...)
	}
	return h.QueryContext(ctx, q, args...)
}

// hotQueryRow is hotQuery for a query of one row.
func (db *DB) hotQueryRow(ctx context.Context, h *sql.DB, tx *answerTx, q string, args ...any) *sql.Row {
	if tx != nil && tx.ac != nil {
		return tx.queryRow(ctx, q, args...)
	}
	h = db.readsOn(h, tx)
	stx := tx.sqlTx()
	if st := db.prepared(ctx, h, stx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	if stx != nil {
		return stx.QueryRowContext(ctx, q, args...)
	}
	return h.QueryRowContext(ctx, q, args...)
}

// readsOn is where a read meant for h outside a transaction runs: the
// answer connection is held for writes, so the write pool.
func (db *DB) readsOn(h *sql.DB, tx *answerTx) *sql.DB {
	if tx == nil && db.ans != nil && h == db.answerSQL {
		return db.SQL
	}
	return h
}

// shortStatement is the context to run a short read of the run loop with
// (one row by key, or a few): on SQLite without ctx's cancellation, since
// the driver watches a cancellable context from a goroutine of its own for
// every statement, which costs more than such a read; retries and waits
// around the statement still watch ctx. On PostgreSQL, where a statement
// can wait on the network, ctx itself.
func (db *DB) shortStatement(ctx context.Context) context.Context {
	if db.Dialect == SQLite {
		return context.WithoutCancel(ctx)
	}
	return ctx
}
