package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Copying the template is most of a PostgreSQL test's set-up (0.1-0.25 s
// on a quiet machine, up to a second on a loaded one), and the server does
// it in a process of its own. So each process keeps one copy made ahead:
// a test takes it and a copy for the next test is started at once, while
// this one runs (serial packages run their SQLite subtest meanwhile). A
// spare is named bt_spare_<key> and its process holds the advisory lock
// <key> until a test takes it (renamed bt_<random>, then dropped with its
// test like any copy). A process that ended with a spare untaken released
// that lock with its connection: the next process to take a copy drops
// such spares, so a long-lived server keeps none.
type spares struct {
	once   sync.Once
	err    error
	mu     sync.Mutex // guards holder, filling, waiting
	holder *pgx.Conn  // holds the locks of this process's spares
	// ready has the spare made ahead, if any (one at most).
	ready   chan spare
	filling bool
	// waiting: a test waits for the spare on its way. Another test
	// (parallel tests) makes its own copy instead of queuing behind it:
	// queued, the tests of a parallel package made their copies one at a
	// time (see BENCHMARKS.md, tests44).
	waiting bool
}

type spare struct {
	name string
	key  int64
	err  error
}

var pgSpares = spares{ready: make(chan spare, 1)}

const sparePrefix = "bt_spare_"

// take returns the name of a new copy of template, the test's own: the
// spare made ahead when there is one (waiting for the one on its way
// unless another test already does), else a copy made now. Either way a
// copy for the next test is started.
func (s *spares) take(ctx context.Context, base, template string) (string, error) {
	s.once.Do(func() { s.err = s.connect(ctx, base) })
	if s.err != nil {
		return "", s.err
	}
	s.mu.Lock()
	wait := s.filling && !s.waiting
	s.waiting = s.waiting || wait
	s.mu.Unlock()
	var got spare
	if wait {
		got = <-s.ready
		s.mu.Lock()
		s.waiting = false
		s.mu.Unlock()
	} else {
		select {
		case got = <-s.ready:
		default:
		}
	}
	defer s.refill(base, template)
	if got.name != "" && got.err == nil {
		name := "bt_" + randomSuffix()
		if err := s.adopt(ctx, got, name); err == nil {
			return name, nil
		}
	}
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	name := "bt_" + randomSuffix()
	return name, createDatabase(ctx, conn, name, template)
}

// connect opens the connection that holds the spares' locks, and drops
// the spares of processes that ended.
func (s *spares) connect(ctx context.Context, base string) error {
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return err
	}
	s.holder = conn
	rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE datname LIKE $1", sparePrefix+"%")
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, name := range names {
		key, err := strconv.ParseInt(strings.TrimPrefix(name, sparePrefix), 16, 64)
		if err != nil {
			continue
		}
		var free bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&free); err != nil {
			return err
		}
		if !free {
			continue // a live process's spare
		}
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_, _ = conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", key)
	}
	return nil
}

// adopt renames the spare got to name, out of the spares' names, and
// releases its lock: no sweep drops it from now on.
func (s *spares) adopt(ctx context.Context, got spare, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.holder.Exec(ctx, "ALTER DATABASE "+got.name+" RENAME TO "+name); err != nil {
		return err
	}
	_, err := s.holder.Exec(ctx, "SELECT pg_advisory_unlock($1)", got.key)
	return err
}

// refill starts making the next spare unless one is ready or on its way.
func (s *spares) refill(base, template string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.filling || len(s.ready) > 0 {
		return
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	key := int64(binary.BigEndian.Uint64(b[:]) >> 1) // positive: its name is its hex
	ctx := context.Background()
	if _, err := s.holder.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		return
	}
	s.filling = true
	go func() {
		sp := spare{name: fmt.Sprintf("%s%x", sparePrefix, key), key: key}
		conn, err := pgx.Connect(ctx, base)
		if err == nil {
			err = createDatabase(ctx, conn, sp.name, template)
			conn.Close(ctx)
		}
		sp.err = err
		s.mu.Lock()
		s.filling = false
		s.ready <- sp
		s.mu.Unlock()
	}()
}
