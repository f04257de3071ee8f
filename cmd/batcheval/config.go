package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/batcheval/batcheval/handlers"
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
	// Prices is "model=input:output,..." in US dollars per million tokens,
	// used for judges that have no prices of their own.
	Prices string
	// SimLatency is how long the simulated judge takes per answer.
	SimLatency time.Duration
	// Durability knobs; the defaults suit production, tests shorten them.
	Lease          time.Duration // run lease (runner.DefaultLeaseTTL)
	ShutdownGrace  time.Duration // how long a stop waits for calls in flight
	TimeoutRetries int           // retries after a judge timeout (negative: none)
	ProbeInterval  time.Duration // judge probes while a run waits for it
	DBRetryFor     time.Duration // how long a write rides out database errors
	// MetricsAddr, when set, serves /metrics on its own listener (worker).
	MetricsAddr string
}

// runnerConfig is the part of a runner's configuration that comes from
// the command line and environment.
func (c *Config) runnerConfig() runner.Config {
	timeoutRetries := c.TimeoutRetries
	if timeoutRetries <= 0 {
		timeoutRetries = -1 // the runner reads 0 as "the default"
	}
	return runner.Config{
		MaxRuns: c.MaxRuns, LeaseTTL: c.Lease, DBRetryFor: c.DBRetryFor,
		JudgeTuning: runner.JudgeTuning{TimeoutRetries: timeoutRetries},
		Breaker:     runner.BreakerConfig{ProbeInterval: c.ProbeInterval},
	}
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
	fs.StringVar(&c.Prices, "prices", env("BATCHEVAL_PRICES", ""), "model prices in USD per million tokens, e.g. gpt-4o=2.5:10,gpt-4o-mini=0.15:0.6 (env BATCHEVAL_PRICES)")
	// A quarter second per answer lets a newcomer watch the demo run's
	// progress, where an instant answer would finish before the page loads.
	fs.DurationVar(&c.SimLatency, "sim-latency", envDuration(getenv, "BATCHEVAL_SIM_LATENCY", 250*time.Millisecond), "how long the simulated judge takes per answer (env BATCHEVAL_SIM_LATENCY)")
	fs.StringVar(&c.LogFormat, "log-format", env("BATCHEVAL_LOG_FORMAT", "text"), "text or json (env BATCHEVAL_LOG_FORMAT)")
	fs.DurationVar(&c.Lease, "lease", envDuration(getenv, "BATCHEVAL_LEASE", runner.DefaultLeaseTTL), "run lease: a crashed worker's run is taken over after about this long (env BATCHEVAL_LEASE)")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", envDuration(getenv, "BATCHEVAL_SHUTDOWN_GRACE", defaultShutdownGrace), "on SIGINT/SIGTERM, how long to wait for judge calls already sent (env BATCHEVAL_SHUTDOWN_GRACE)")
	fs.IntVar(&c.TimeoutRetries, "timeout-retries", envInt("BATCHEVAL_TIMEOUT_RETRIES", 1), "retries of a judge call that timed out; 0 for none (env BATCHEVAL_TIMEOUT_RETRIES)")
	fs.DurationVar(&c.ProbeInterval, "probe-interval", envDuration(getenv, "BATCHEVAL_PROBE_INTERVAL", runner.DefaultProbeInterval), "while a run waits for a judge that is down, how often it is probed (env BATCHEVAL_PROBE_INTERVAL)")
	fs.DurationVar(&c.DBRetryFor, "db-retry-for", envDuration(getenv, "BATCHEVAL_DB_RETRY_FOR", models.DefaultRetryFor), "how long a run's writes are retried through database errors before the run pauses (env BATCHEVAL_DB_RETRY_FOR)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", env("BATCHEVAL_METRICS_ADDR", ""), "worker: serve Prometheus /metrics on this address, e.g. 127.0.0.1:9090 (env BATCHEVAL_METRICS_ADDR; serve has /metrics on --addr)")
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

// newCommand makes a subcommand's flag set with the shared settings bound.
func newCommand(name string, getenv func(string) string, stderr io.Writer) (*flag.FlagSet, *Config) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs, bindConfig(fs, getenv)
}

// openWorkspace opens and migrates the database and returns the default
// workspace, which every command works in until accounts exist.
func openWorkspace(ctx context.Context, c *Config, log *slog.Logger) (*models.DB, models.Workspace, error) {
	db, err := openDB(ctx, c, log)
	if err != nil {
		return nil, models.Workspace{}, err
	}
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		db.Close()
		return nil, ws, err
	}
	return db, ws, nil
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := newCommand("migrate", getenv, stderr)
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

// parsePrices reads "model=input:output,..." (USD per million tokens).
func parsePrices(s string) (map[string]handlers.Price, error) {
	out := map[string]handlers.Price{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		model, pair, ok := strings.Cut(item, "=")
		in, outp, ok2 := strings.Cut(pair, ":")
		if !ok || !ok2 || strings.TrimSpace(model) == "" {
			return nil, fmt.Errorf("price %q: write model=input:output, e.g. gpt-4o=2.5:10", item)
		}
		pi, err1 := strconv.ParseFloat(strings.TrimSpace(in), 64)
		po, err2 := strconv.ParseFloat(strings.TrimSpace(outp), 64)
		if err1 != nil || err2 != nil || !(pi >= 0) || !(po >= 0) || math.IsInf(pi, 0) || math.IsInf(po, 0) {
			return nil, fmt.Errorf("price %q: the prices must be non-negative numbers", item)
		}
		out[strings.TrimSpace(model)] = handlers.Price{Input: pi, Output: po}
	}
	return out, nil
}

func envDuration(getenv func(string) string, key string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(getenv(key)); err == nil {
		return d
	}
	return def
}
