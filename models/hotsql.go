package models

import (
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

// sqlCache keeps the dialect's text of each hot statement, built once.
type sqlCache struct {
	mu sync.Mutex
	m  map[sqlKey]string
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
	k := sqlKey{d, name, n}
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
	return q
}

// valuesList is n groups of cols placeholders: "(?, ?), (?, ?)".
func valuesList(n, cols int) string {
	group := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(group+", ", n), ", ")
}
