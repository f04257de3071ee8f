package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/libtnb/sqlite"
	"github.com/pressly/goose/v3"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/batcheval/batcheval/migrations"
)

// Dialect names the database engine behind a DB.
type Dialect string

// Supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB is an open database: GORM for the product's tables and the raw handles
// the job engine needs (River shares the same database).
type DB struct {
	Gorm *gorm.DB
	SQL  *sql.DB
	// Read serves the reads of pages and reports. On SQLite it is a
	// separate pool of read-only connections, so that readers never wait
	// for a connection held by a writer (in WAL mode they do not wait for
	// the writer's lock either); on PostgreSQL it is Gorm.
	Read *gorm.DB
	// readSQL is Read's own pool on SQLite (nil on PostgreSQL).
	readSQL *sql.DB
	// answerSQL is, on a SQLite file, one connection kept for the run
	// loop's answer writes (batch results, cached answers): nil elsewhere.
	// SQLite drops a connection's page cache whenever another connection
	// has written, so answers written through a pool of four found the
	// cache cold every time and read their pages again (a system call
	// each); one connection that does most of the writing keeps it warm.
	answerSQL *sql.DB
	// ans holds answerSQL's connection for the answer writes (answerconn.go);
	// nil where answerSQL is.
	ans *answerConn
	// stmts are the hot statements prepared on SQLite (hotsql.go).
	stmts preparedCache
	// teamRated keeps the review queue's team counts, each with the
	// dataset's review version it was counted at (review_progress.go).
	teamRated teamRatedCache
	Dialect   Dialect
	// Pool is set for PostgreSQL: River's pgx driver and GORM share it.
	Pool *pgxpool.Pool
	// Getenv reads the operator's environment: the list of key variables
	// (KeyVarsSetting) and the keys judges name. Nil means os.Getenv.
	Getenv func(string) string
	// Secrets is the secret key judge keys are sealed with; nil: none, and
	// keys cannot be stored.
	Secrets *Secrets
	// heldOut holds the locks of the held-out launches this handle works
	// on a SQLite file (heldoutlock.go).
	heldOut heldOutLocks
	// MaxActiveRunsPerWorkspace bounds the runs a workspace may have queued
	// or running at once; 0 means no limit.
	MaxActiveRunsPerWorkspace int
	// ImportChunkRows is how many rows of a dataset import go in one
	// statement; 0 takes the dialect's default (rows.go). Tests set it
	// small to cross many chunk boundaries with few rows.
	ImportChunkRows int
	// PurgeChunkRows is how many rows one statement of a purge's first
	// stage deletes; 0 takes purgeChunkRows (lifecycle.go). Tests set it
	// small.
	PurgeChunkRows int
	// Retry is how run-state writes ride out transient database errors
	// (set before use; zero fields take defaults).
	Retry RetryPolicy
	// Clock is this process's wall clock (time.Now when nil): what the
	// process stamps its own records with, such as when a run started.
	// Run leases and the judges' shared slots and buckets never follow
	// it: they are written and compared with the database's clock
	// (dbclock.go), so workers whose clocks disagree still agree on whose
	// lease has lapsed. Tests skew it.
	Clock func() time.Time
}

// Now reads the process's wall clock (Clock), in UTC.
func (db *DB) Now() time.Time {
	if db.Clock != nil {
		return db.Clock().UTC()
	}
	return time.Now().UTC()
}

// getenv is db.Getenv or os.Getenv.
func (db *DB) getenv(name string) string {
	if db.Getenv != nil {
		return db.Getenv(name)
	}
	return os.Getenv(name)
}

// KeyFromEnv reads the key of a judge of workspace wsID from the
// environment variable it names, if the operator lists that name (see
// KeyVarsSetting) and the workspace is the default one (KeyEnvAllowedIn).
func (db *DB) KeyFromEnv(ctx context.Context, wsID int64, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	if err := db.KeyEnvAllowedIn(ctx, wsID); err != nil {
		return "", err
	}
	return KeyFromEnv(db.getenv, name)
}

// IsPostgresURL reports whether dsn names a PostgreSQL database
// (postgres:// or postgresql://); Open takes anything else for a SQLite
// file's path.
func IsPostgresURL(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open connects to PostgreSQL when dsn starts with postgres:// or
// postgresql://, and otherwise treats dsn as a SQLite file path (created if
// absent). It does not migrate.
func Open(ctx context.Context, dsn string) (*DB, error) {
	gcfg := &gorm.Config{Logger: logger.Discard, NowFunc: func() time.Time { return time.Now().UTC() }}
	if IsPostgresURL(dsn) {
		pcfg, err := pgxpool.ParseConfig(dsn)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		if !strings.Contains(dsn, "pool_max_conns") {
			// pgx's default, max(4, cores), lets a run's writers, queued
			// on its row lock, take every connection and make the pages
			// wait; the operator's pool_max_conns wins when given.
			pcfg.MaxConns = max(pcfg.MaxConns, postgresMinConns)
		}
		pool, err := pgxpool.NewWithConfig(ctx, pcfg)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		if err := pool.Ping(ctx); err != nil {
			pool.Close()
			return nil, fmt.Errorf("connect to postgres (check DATABASE_URL): %w", err)
		}
		sqlDB := stdlib.OpenDBFromPool(pool)
		g, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), gcfg)
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("open gorm on postgres: %w", err)
		}
		// One pgx pool serves readers and writers: PostgreSQL's readers
		// never wait for writers' row locks (MVCC).
		return &DB{Gorm: g, Read: g, SQL: sqlDB, Dialect: Postgres, Pool: pool}, nil
	}

	path := strings.TrimPrefix(dsn, "sqlite://")
	if path == "" {
		return nil, errors.New("no database path given")
	}
	if path != ":memory:" {
		if err := createPrivateFile(path); err != nil {
			return nil, err
		}
	}
	// WAL lets readers (progress pages) run while a run writes; busy_timeout
	// makes writers wait instead of failing; immediate transactions take the
	// write lock up front so two writers never deadlock on a lock upgrade.
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	// Times are written as 2006-01-02 15:04:05.999999999-07:00, as the
	// former driver (glebarez/go-sqlite) wrote them: modernc.org/sqlite
	// would write time.Time.String(), and a file written by both would
	// hold two formats that neither compare as text nor parse in SQL.
	q.Set("_time_format", "sqlite")
	sqlDB, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// A few connections are enough for one machine; SQLite serialises writes.
	sqlDB.SetMaxOpenConns(4)
	if err := sqlDB.PingContext(ctx); err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	g, err := gorm.Open(sqlite.Dialector{Conn: sqlDB}, gcfg)
	if err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("open gorm on sqlite: %w", err)
	}
	db := &DB{Gorm: g, Read: g, SQL: sqlDB, Dialect: SQLite}
	if path == ":memory:" {
		// Every connection to :memory: is a database of its own.
		return db, nil
	}
	// The readers' pool: the file is already in WAL mode (set above, and
	// kept in the file), query_only refuses any write, and deferred
	// transactions take no lock until they read.
	rq := url.Values{}
	rq.Add("_pragma", "busy_timeout(10000)")
	rq.Add("_pragma", "foreign_keys(1)")
	rq.Add("_pragma", "query_only(1)")
	rq.Set("_time_format", "sqlite")
	readDB, err := sql.Open("sqlite", "file:"+path+"?"+rq.Encode())
	if err != nil {
		sqlDB.Close()
		return nil, fmt.Errorf("open sqlite %s for reading: %w", path, err)
	}
	readDB.SetMaxOpenConns(sqliteReaders)
	readDB.SetMaxIdleConns(sqliteReaders)
	rg, err := gorm.Open(sqlite.Dialector{Conn: readDB}, gcfg)
	if err == nil {
		err = readDB.PingContext(ctx)
	}
	if err != nil {
		readDB.Close()
		sqlDB.Close()
		return nil, fmt.Errorf("open sqlite %s for reading: %w", path, err)
	}
	db.Read, db.readSQL = rg, readDB
	answerDB, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err == nil {
		answerDB.SetMaxOpenConns(1)
		answerDB.SetMaxIdleConns(1)
		err = answerDB.PingContext(ctx)
	}
	if err != nil {
		readDB.Close()
		sqlDB.Close()
		return nil, fmt.Errorf("open sqlite %s for answers: %w", path, err)
	}
	db.answerSQL, db.ans = answerDB, &answerConn{pool: answerDB}
	return db, nil
}

// createPrivateFile makes the SQLite file, and the folders it goes in,
// readable by this account only (0600 and 0700) before SQLite first opens
// it: it holds password hashes, token hashes and sealed judge keys. SQLite
// would create it 0644, and it creates the -wal and -shm files with the
// database file's mode, so those are private too. A file or folder that
// already exists keeps the mode the operator gave it.
func createPrivateFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create database folder: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("create database file %s: %w", path, err)
	}
	return f.Close()
}

// postgresMinConns is the least connections of the PostgreSQL pool: room
// for a run's concurrent writers (one per judge call in flight) and the
// pages' readers together, within PostgreSQL's default of 100 connections
// for a server and two workers.
const postgresMinConns = 32

// sqliteReaders is the size of SQLite's read pool: WAL readers run side
// by side, and past a few per core more connections only add memory (each
// keeps its own page cache).
const sqliteReaders = 16

// answers is the handle of the run loop's answer writes (see answerSQL).
func (db *DB) answers() *sql.DB {
	if db.answerSQL != nil {
		return db.answerSQL
	}
	return db.SQL
}

// reader is the handle for a read of ctx (see DB.Read).
func (db *DB) Reader(ctx context.Context) *gorm.DB {
	if db.Read == nil {
		return db.Gorm.WithContext(ctx)
	}
	return db.Read.WithContext(ctx)
}

// Close releases the connections.
func (db *DB) Close() error {
	// A closed handle's launches are over, as its process's would be.
	db.unlockAllHeldOut()
	err := db.SQL.Close()
	if db.readSQL != nil {
		db.readSQL.Close()
	}
	if db.ans != nil {
		// Waits for a transaction under way, then gives the connection
		// back, so that closing the pool closes it.
		db.ans.close()
	}
	if db.answerSQL != nil {
		db.answerSQL.Close()
	}
	if db.Pool != nil {
		db.Pool.Close()
	}
	db.stmts.close()
	return err
}

// MigrateSchema applies the product's own versioned migrations. River's
// schema is migrated separately by the jobs package (it owns that driver).
func (db *DB) MigrateSchema(ctx context.Context, log *slog.Logger) error {
	var (
		dialect goose.Dialect
		fsys    fs.FS
		err     error
	)
	switch db.Dialect {
	case Postgres:
		dialect = goose.DialectPostgres
		fsys, err = fs.Sub(migrations.Postgres, "postgres")
	default:
		dialect = goose.DialectSQLite3
		fsys, err = fs.Sub(migrations.SQLite, "sqlite")
	}
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(dialect, db.SQL, fsys, goose.WithTableName("batcheval_schema_version"))
	if err != nil {
		return fmt.Errorf("prepare migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	if log != nil {
		for _, r := range results {
			log.Info("applied migration", "version", r.Source.Version, "file", r.Source.Path, "took", r.Duration)
		}
	}
	folded, err := db.FoldStoredNames(ctx)
	if err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	if log != nil && folded > 0 {
		log.Info("stored the folded names of runs and experiments for searches", "names", folded)
	}
	return nil
}

// SchemaVersion reports the newest applied migration.
func (db *DB) SchemaVersion(ctx context.Context) (int64, error) {
	var v sql.NullInt64
	err := db.SQL.QueryRowContext(ctx, "SELECT MAX(version_id) FROM batcheval_schema_version").Scan(&v)
	return v.Int64, err
}
