package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
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
	// SecureCookies marks the session cookie Secure on every request; set
	// it when a proxy in front terminates TLS (requests arriving over TLS
	// get Secure cookies anyway).
	SecureCookies bool
	// WebhookAllowPrivate lets workspace webhooks reach private address
	// ranges (a chat server on the office network); off by default.
	WebhookAllowPrivate bool
}

// LocalMode reports whether the server binds a loopback address only
// (127.0.0.0/8, ::1 or "localhost"): then, while no account exists, the
// dashboard works without signing in, as the local user.
func (c *Config) LocalMode() bool {
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", env("BATCHEVAL_WEBHOOK_ALLOW_PRIVATE", "false") == "true", "let workspace webhooks reach private addresses (env BATCHEVAL_WEBHOOK_ALLOW_PRIVATE); link-local and metadata addresses are always refused")
	fs.BoolVar(&c.SecureCookies, "secure-cookies", env("BATCHEVAL_SECURE_COOKIES", "false") == "true", "mark the session cookie Secure: set when TLS ends at a proxy in front (env BATCHEVAL_SECURE_COOKIES)")
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
