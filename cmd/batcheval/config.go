package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

// Config is every setting, from flags with environment defaults.
type Config struct {
	Addr        string
	DatabaseURL string
	SQLitePath  string
	MaxUploadMB int
	MaxRuns     int
	SeedDemo    bool
	LogLevel    string
	LogFormat   string
}

// bindConfig registers the shared flags; environment variables give the defaults.
func bindConfig(fs *flag.FlagSet, getenv func(string) string) *Config {
	env := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	envInt := func(k string, def int) int {
		if v, err := strconv.Atoi(getenv(k)); err == nil {
			return v
		}
		return def
	}
	c := &Config{}
	// Loopback by default: the dashboard has no accounts yet, so it should
	// not be reachable from the network unless someone says so.
	fs.StringVar(&c.Addr, "addr", env("BATCHEVAL_ADDR", "127.0.0.1:8080"), "address to listen on (env BATCHEVAL_ADDR)")
	fs.StringVar(&c.DatabaseURL, "database-url", env("DATABASE_URL", ""), "PostgreSQL URL; empty uses SQLite (env DATABASE_URL)")
	fs.StringVar(&c.SQLitePath, "db", env("BATCHEVAL_DB", "data/batcheval.db"), "SQLite file when no PostgreSQL URL is set (env BATCHEVAL_DB)")
	// 50 MB holds a few hundred thousand short samples; larger sets are
	// better split than uploaded through a browser.
	fs.IntVar(&c.MaxUploadMB, "max-upload-mb", envInt("BATCHEVAL_MAX_UPLOAD_MB", 50), "largest dataset upload in MiB (env BATCHEVAL_MAX_UPLOAD_MB)")
	fs.IntVar(&c.MaxRuns, "max-runs", envInt("BATCHEVAL_MAX_RUNS", 4), "runs one process executes at once (env BATCHEVAL_MAX_RUNS)")
	fs.BoolVar(&c.SeedDemo, "seed-demo", env("BATCHEVAL_SEED_DEMO", "true") == "true", "create the demo project on start (env BATCHEVAL_SEED_DEMO)")
	fs.StringVar(&c.LogLevel, "log-level", env("BATCHEVAL_LOG_LEVEL", "info"), "debug, info, warn or error (env BATCHEVAL_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", env("BATCHEVAL_LOG_FORMAT", "text"), "text or json (env BATCHEVAL_LOG_FORMAT)")
	return c
}

// DSN is the database to open.
func (c *Config) DSN() string {
	if c.DatabaseURL != "" {
		return c.DatabaseURL
	}
	return c.SQLitePath
}

func (c *Config) logger(w io.Writer) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(c.LogLevel)); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	if strings.EqualFold(c.LogFormat, "json") {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// openDB opens and migrates the database (product schema and River's).
func openDB(ctx context.Context, c *Config, log *slog.Logger) (*models.DB, error) {
	db, err := models.Open(ctx, c.DSN())
	if err != nil {
		return nil, err
	}
	if err := db.MigrateSchema(ctx, log); err != nil {
		db.Close()
		return nil, err
	}
	if err := runner.Migrate(ctx, db, log); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := bindConfig(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	log := c.logger(stderr)
	db, err := openDB(ctx, c, log)
	if err != nil {
		return err
	}
	defer db.Close()
	v, err := db.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "database is at schema version %d (%s)\n", v, db.Dialect)
	return nil
}
