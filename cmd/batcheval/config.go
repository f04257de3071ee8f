package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/batcheval/batcheval/models/dataimport"
	"io"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
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
	// MaxUploadRows caps the rows of one upload (dataimport.DefaultMaxRows
	// by default).
	MaxUploadRows int
	MaxRuns       int
	SeedDemo      bool
	LogLevel      string
	LogFormat     string
	// Prices is "model=input:output,..." in US dollars per million tokens,
	// used for judges that have no prices of their own.
	Prices string
	// SimLatency is how long the simulated judge takes per answer.
	SimLatency time.Duration
	// SecureCookies marks every cookie Secure on every request; set
	// it when a proxy in front terminates TLS (requests arriving over TLS
	// get Secure cookies anyway).
	SecureCookies bool
	// AllowedHosts lists the host names the dashboard answers to
	// (comma-separated); empty means the loopback names plus the bind host.
	AllowedHosts string
	// TrustedProxies lists the reverse proxies (CIDR ranges or addresses)
	// whose X-Forwarded-For and X-Forwarded-Proto are believed.
	TrustedProxies string
	// JudgeAllowPrivate lets judges live on private networks.
	JudgeAllowPrivate bool
	// JudgeAllowLoopback is "true", "false" or "" (on in local mode only).
	JudgeAllowLoopback string
	// SecretKey (base64, from BATCHEVAL_SECRET_KEY only: a flag would show
	// in the process list) or SecretKeyFile seals judge keys at rest.
	SecretKey     string
	SecretKeyFile string
	// UploadQuotaMB caps a workspace's pending uploads; 0: no quota.
	UploadQuotaMB int
	// PageConcurrency is how many pages render at once (handlers'
	// admission gate); 0: two per core; negative: no gate.
	PageConcurrency int
	// MaxRunsPerWorkspace caps a workspace's queued and running runs; 0: no limit.
	MaxRunsPerWorkspace int
	// APIRateLimit and APILaunchRateLimit are a token's API requests, and
	// its launches, per minute (handlers' rate limit); 0: no limit.
	APIRateLimit       int
	APILaunchRateLimit int
	// WebhookAllowPrivate lets workspace webhooks reach private address
	// ranges (a chat server on the office network); off by default.
	WebhookAllowPrivate bool
	// WebhookAllowLoopback is "true", "false" or "" (on in local mode
	// only), as JudgeAllowLoopback: a worker listens nowhere, so only this
	// says that its webhook deliveries must not reach its loopback.
	WebhookAllowLoopback string
	// Durability knobs; the defaults suit production, tests shorten them.
	Lease          time.Duration // run lease (runner.DefaultLeaseTTL)
	ShutdownGrace  time.Duration // how long a stop waits for calls in flight
	TimeoutRetries int           // retries after a judge timeout (negative: none)
	ProbeInterval  time.Duration // judge probes while a run waits for it
	DBRetryFor     time.Duration // how long a write rides out database errors
	// RescueAfter is how long a webhook delivery may stay marked running
	// before it is taken for left by a dead process and retried
	// (runner.Config.RescueAfter); rescueAfterErr says why the value from
	// BATCHEVAL_RESCUE_AFTER was refused (a --rescue-after clears it).
	RescueAfter    time.Duration
	rescueAfterErr error
	// MetricsAddr, when set, serves /metrics on its own listener (worker).
	MetricsAddr string
	// MetricsToken (from BATCHEVAL_METRICS_TOKEN only: a flag would show in
	// the process list) or MetricsTokenFile is the bearer token /metrics
	// asks for; with neither, serve's /metrics answers only this machine.
	MetricsToken     string
	MetricsTokenFile string
	// ParkAfter parks an idle worker (serve, worker): see
	// runner.Config.IdleAfter. 0 never parks.
	ParkAfter time.Duration
	// envErrs are the environment values that could not be read, each
	// with the flag that replaces it ("" for none); parse refuses them
	// unless that flag is given (see settingsErr).
	envErrs []envErr
	// checks are the settings' sensible values, checked once the flags
	// are parsed (see settingsErr); getenv tells a value from its variable
	// apart from the default.
	checks []rangeCheck
	getenv func(string) string
}

// rangeCheck is the values a setting can sensibly take, checked at start
// whether the value came from its flag or its variable: a readable value
// outside them (no run at once, a negative timeout, a port past 65535, an
// empty SQLite path) was taken in silence, or failed only later, after the
// database was opened.
type rangeCheck struct {
	// flag and key name the setting's flag and variable ("" for none).
	flag, key string
	// ok reports whether the parsed value is sensible.
	ok func() bool
	// want says what to write instead.
	want string
}

// require adds a range check on a setting (see rangeCheck); a command adds
// its own before parse.
func (c *Config) require(flagName, key string, ok func() bool, want string) {
	c.checks = append(c.checks, rangeCheck{flag: flagName, key: key, ok: ok, want: want})
}

// rangeErrs are the refusals of the range checks whose setting was given
// (a default is always sensible), naming the flag when it was given and
// the variable otherwise, with the value as written (given maps each flag
// given to it) and what to write.
func (c *Config) rangeErrs(given map[string]string) []error {
	var errs []error
	for _, rc := range c.checks {
		if rc.ok() {
			continue
		}
		written, isGiven := given[rc.flag]
		switch {
		case rc.flag != "" && isGiven:
			errs = append(errs, fmt.Errorf("--%s=%q cannot be used: write %s", rc.flag, written, rc.want))
		case rc.key != "" && c.getenv != nil && c.getenv(rc.key) != "":
			errs = append(errs, fmt.Errorf("%s=%q cannot be used: write %s, or unset it for the default", rc.key, c.getenv(rc.key), rc.want))
		}
	}
	return errs
}

// listenAddrOK reports whether addr is host:port with a port number from
// 0 to 65535 (0: any free port).
func listenAddrOK(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 0 && n <= 65535
}

// envErr is an environment value that could not be read: err names the
// variable and says what to write; flag, when set on the command line,
// replaces the variable and so clears the error.
type envErr struct {
	flag string
	err  error
}

// parse parses a command's flags, then refuses the settings that could not
// be read (settingsErr), before the command opens anything.
func (c *Config) parse(fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return c.settingsErr(writtenFlags(fs, args))
}

// writtenFlags maps each flag given in args (parsed by fs without error)
// to its value as written, the last one given, which an error quotes: a
// flag's Value.String() is Go's rewriting of it (-1m0s for -1m, 500ms for
// 0.5s, 1e+06 for 1000000.0). It reads args as the flag package does: up
// to the first argument that is not a flag, or "--"; -name=value,
// -name value, and -name alone for a boolean, with one dash or two.
func writtenFlags(fs *flag.FlagSet, args []string) map[string]string {
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			break
		}
		name := strings.TrimPrefix(a[1:], "-")
		name, value, hasValue := strings.Cut(name, "=")
		f := fs.Lookup(name)
		if f == nil {
			break // -h or --help: Parse stopped here too
		}
		if !hasValue {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				value = "true"
			} else if i+1 < len(args) {
				i++
				value = args[i]
			}
		}
		out[name] = value
	}
	return out
}

// settingsErr is every environment value that could not be read and that
// no flag given replaces (nil for none), the rescue time's included, and
// every setting outside its range check, from its flag or its variable:
// an operator who wrote "30 seconds" for a duration, "yes" for a boolean
// or 0 for the runs at once must hear of it at start, before anything
// opens the database, rather than get the default in silence.
func (c *Config) settingsErr(given map[string]string) error {
	var errs []error
	for _, e := range c.envErrs {
		if _, replaced := given[e.flag]; e.flag == "" || !replaced {
			errs = append(errs, e.err)
		}
	}
	if c.rescueAfterErr != nil {
		errs = append(errs, c.rescueAfterErr)
	}
	errs = append(errs, c.rangeErrs(given)...)
	if err := c.databaseURLErr(given); err != nil {
		errs = append(errs, err)
	}
	// The log settings are words; the logger would take an unknown one for
	// info or text. A flag given was checked when parsed (and replaces
	// the variable); the variable is checked here, in the same words.
	for _, s := range []struct {
		flag, key, value string
		want             []string
		ok               func(string) bool
	}{
		{"log-level", "BATCHEVAL_LOG_LEVEL", c.LogLevel, logLevels, logLevelOK},
		{"log-format", "BATCHEVAL_LOG_FORMAT", c.LogFormat, logFormats, logFormatOK},
	} {
		if _, isGiven := given[s.flag]; !isGiven && !s.ok(s.value) {
			errs = append(errs, fmt.Errorf("%s=%q cannot be used: write %s, or unset it for the default", s.key, s.value, orList(s.want)))
		}
	}
	return errors.Join(errs...)
}

// databaseURLErr refuses a database URL that is not a PostgreSQL URL:
// models.Open takes anything else for a SQLite file's path, so a typo
// (postgress://...), a key=value connection string or another database's
// URL made a new, empty SQLite file named after it, in silence, and every
// command then ran on it. The value is not quoted back: it may hold a
// password; only a scheme is.
func (c *Config) databaseURLErr(given map[string]string) error {
	u := strings.TrimSpace(c.DatabaseURL)
	if u == "" || models.IsPostgresURL(u) {
		return nil
	}
	name := "DATABASE_URL"
	if _, ok := given["database-url"]; ok {
		name = "--database-url"
	}
	what := "is not a URL"
	if scheme, _, ok := strings.Cut(u, "://"); ok && scheme != "" && !strings.ContainsAny(scheme, " @:/=") {
		what = fmt.Sprintf("starts with %s://", scheme)
	}
	return fmt.Errorf("%s %s, and the database it names must be PostgreSQL: write postgres://USER:PASSWORD@HOST:5432/DATABASE "+
		"(postgresql:// works too), or leave it empty to use the SQLite file --db (BATCHEVAL_DB)", name, what)
}

// The log levels and formats, as help and refusals list them; either is
// read in any case (WARN), a level also with slog's offset (debug+2).
var (
	logLevels  = []string{"debug", "info", "warn", "error"}
	logFormats = []string{"text", "json"}
)

func logLevelOK(s string) bool {
	var lv slog.Level
	return lv.UnmarshalText([]byte(s)) == nil
}

func logFormatOK(s string) bool {
	return slices.ContainsFunc(logFormats, func(f string) bool { return strings.EqualFold(s, f) })
}

// envReader reads a command's settings from the environment, noting each
// value it cannot read in c.envErrs against the flag that replaces it;
// the default stands in until parse refuses the value.
type envReader struct {
	c      *Config
	getenv func(string) string
}

// refuse notes that key's value v could not be read; want says what to
// write instead.
func (r envReader) refuse(flagName, key, v, want string) {
	r.c.envErrs = append(r.c.envErrs, envErr{flag: flagName, err: fmt.Errorf("%s=%q cannot be read: write %s, or unset it for the default", key, v, want)})
}

// str is key's value, or def when it is empty.
func (r envReader) str(key, def string) string {
	if v := r.getenv(key); v != "" {
		return v
	}
	return def
}

// duration is key's value as a Go duration, or def when it is empty.
func (r envReader) duration(flagName, key string, def time.Duration) time.Duration {
	v := r.getenv(key)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		r.refuse(flagName, key, v, "a duration with its unit, e.g. 90s, 5m or 1h30m")
		return def
	}
	return d
}

// integer is key's value as a whole number, or def when it is empty.
func (r envReader) integer(flagName, key string, def int) int {
	v := r.getenv(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		r.refuse(flagName, key, v, fmt.Sprintf("a whole number, e.g. %d (the default)", def))
		return def
	}
	return n
}

// boolean is key's value as true or false (as a flag reads it: 1, t,
// TRUE, ...), or def when it is empty.
func (r envReader) boolean(flagName, key string, def bool) bool {
	v := r.getenv(key)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		r.refuse(flagName, key, v, fmt.Sprintf("true or false (default %t)", def))
		return def
	}
	return b
}

// address is key's value as a host:port to listen on, or def when it is
// empty.
func (r envReader) address(flagName, key, def string) string {
	v := r.getenv(key)
	if v == "" {
		return def
	}
	if _, _, err := net.SplitHostPort(v); err != nil {
		r.refuse(flagName, key, v, "host:port, e.g. 127.0.0.1:8080 (or :8080 for every interface)")
		return def
	}
	return v
}

// defaultParkAfter is --park-after's default (see the flag).
const defaultParkAfter = time.Minute

// runnerConfig is the part of a runner's configuration that comes from
// the command line and environment. It refuses a setting the runner could not keep (a rescue time that is
// not a positive duration, or too short to take effect).
func (c *Config) runnerConfig() (runner.Config, error) {
	if c.rescueAfterErr != nil {
		return runner.Config{}, c.rescueAfterErr
	}
	timeoutRetries := c.TimeoutRetries
	if timeoutRetries <= 0 {
		timeoutRetries = -1 // the runner reads 0 as "the default"
	}
	return runner.Config{
		MaxRuns: c.MaxRuns, LeaseTTL: c.Lease, DBRetryFor: c.DBRetryFor, IdleAfter: c.ParkAfter, RescueAfter: c.RescueAfter,
		Webhooks:    runner.WebhookConfig{AllowLoopback: c.webhookLoopback(), AllowPrivate: c.WebhookAllowPrivate},
		JudgeTuning: runner.JudgeTuning{TimeoutRetries: timeoutRetries},
		Breaker:     runner.BreakerConfig{ProbeInterval: c.ProbeInterval},
	}, nil
}

// webhookLoopback is whether webhook deliveries may reach this machine's
// loopback: as BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK says, else in local mode
// only. A worker has no listener, so its BATCHEVAL_ADDR is the loopback
// default and it counts as local mode: a worker beside a team's dashboard
// posted a workspace's webhook to its own loopback (its /metrics, a
// database's admin port) where the dashboard refused the same address.
func (c *Config) webhookLoopback() bool {
	if allow, err := parseAllowLoopback(c.WebhookAllowLoopback); err == nil && allow != nil {
		return *allow
	}
	return c.LocalMode()
}

// checkRescueAfter refuses a webhook rescue time the runner would not keep:
// zero or negative (the runner would take it for "the default"), or
// shorter than a delivery attempt may last (runner.MinRescueAfter), which
// would act as that.
// written is d as the operator wrote it, which the message quotes.
func checkRescueAfter(d time.Duration, written string) error {
	switch {
	case d <= 0:
		return fmt.Errorf("%s is not a positive duration: write how long a webhook delivery may stay running before it is retried, e.g. %s (the default)", written, humanDuration(runner.DefaultRescueAfter))
	case d < runner.MinRescueAfter():
		return fmt.Errorf("%s is shorter than a webhook delivery attempt may last (%s), so it would not take effect: a running delivery is never retried before its attempt could have ended; use %s or more", written, humanDuration(runner.MinRescueAfter()), humanDuration(runner.MinRescueAfter()))
	}
	return nil
}

// bindRescueAfter registers --rescue-after, read from BATCHEVAL_RESCUE_AFTER
// by default; both are checked (checkRescueAfter). A bad flag is refused
// when the flags are parsed, a bad variable right after (Config.parse, and
// runnerConfig again) unless the flag replaces it.
func (c *Config) bindRescueAfter(fs *flag.FlagSet, getenv func(string) string) {
	c.RescueAfter = runner.DefaultRescueAfter
	if v := getenv("BATCHEVAL_RESCUE_AFTER"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			err = fmt.Errorf("cannot be read: write a duration with its unit, e.g. %s (the default)", humanDuration(runner.DefaultRescueAfter))
		} else {
			err = checkRescueAfter(d, v)
		}
		if err != nil {
			c.rescueAfterErr = fmt.Errorf("BATCHEVAL_RESCUE_AFTER=%q: %w", v, err)
		}
		c.RescueAfter = d
	}
	fs.Func("rescue-after", fmt.Sprintf("how long (a `duration`) a webhook delivery may stay running before it is taken for left by a crashed process and retried, at least %s (default %s; env BATCHEVAL_RESCUE_AFTER)",
		humanDuration(runner.MinRescueAfter()), humanDuration(runner.DefaultRescueAfter)), func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("cannot be read: write a duration with its unit, e.g. %s (the default)", humanDuration(runner.DefaultRescueAfter))
		}
		if err := checkRescueAfter(d, v); err != nil {
			return err
		}
		c.RescueAfter, c.rescueAfterErr = d, nil
		return nil
	})
}

// bindConfig registers the flags of a subcommand: every command has the
// storage and logging flags; only serve and worker, which run a server or
// shared workers, have the others. Environment variables give the defaults.
func bindConfig(fs *flag.FlagSet, getenv func(string) string, server, works bool) *Config {
	c := &Config{getenv: getenv}
	r := envReader{c: c, getenv: getenv}
	env := r.str
	fs.StringVar(&c.DatabaseURL, "database-url", env("DATABASE_URL", ""), "PostgreSQL URL; empty uses SQLite (env DATABASE_URL)")
	fs.StringVar(&c.SQLitePath, "db", env("BATCHEVAL_DB", "data/batcheval.db"), "SQLite file when no PostgreSQL URL is set (env BATCHEVAL_DB)")
	c.require("db", "BATCHEVAL_DB", func() bool { return c.DatabaseURL != "" || strings.TrimSpace(c.SQLitePath) != "" },
		"the SQLite file's path, e.g. data/batcheval.db (the default), or give a PostgreSQL URL with --database-url or DATABASE_URL")
	// Words, refused as the other word flags are; the variables' values
	// are checked by settingsErr (a flag given replaces them).
	wordsFlag(fs, &c.LogLevel, "log-level", env("BATCHEVAL_LOG_LEVEL", "info"), logLevels, logLevelOK, "how much is logged (env BATCHEVAL_LOG_LEVEL)")
	wordsFlag(fs, &c.LogFormat, "log-format", env("BATCHEVAL_LOG_FORMAT", "text"), logFormats, logFormatOK, "text, or json for structured logs (env BATCHEVAL_LOG_FORMAT)")
	// The runner's durability knobs, wherever runs are worked (serve,
	// worker and run); the defaults suit production, tests shorten them.
	if works {
		fs.DurationVar(&c.Lease, "lease", r.duration("lease", "BATCHEVAL_LEASE", runner.DefaultLeaseTTL), "run lease: a crashed worker's run is taken over after about this long (env BATCHEVAL_LEASE)")
		fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", r.duration("shutdown-grace", "BATCHEVAL_SHUTDOWN_GRACE", defaultShutdownGrace), "on SIGINT/SIGTERM, how long to wait for judge calls already sent (env BATCHEVAL_SHUTDOWN_GRACE)")
		fs.IntVar(&c.TimeoutRetries, "timeout-retries", r.integer("timeout-retries", "BATCHEVAL_TIMEOUT_RETRIES", 1), "retries of a judge call that timed out; 0 for none (env BATCHEVAL_TIMEOUT_RETRIES)")
		fs.DurationVar(&c.ProbeInterval, "probe-interval", r.duration("probe-interval", "BATCHEVAL_PROBE_INTERVAL", runner.DefaultProbeInterval), "while a run waits for a judge that is down, how often it is probed (env BATCHEVAL_PROBE_INTERVAL)")
		// Wherever runs are launched or resumed: the command line's judge
		// has no form to give its prices in (QA: its runs had no cost).
		fs.StringVar(&c.Prices, "prices", env("BATCHEVAL_PRICES", ""), "model prices in USD per million tokens, e.g. gpt-4o=2.5:10,gpt-4o-mini=0.15:0.6 (env BATCHEVAL_PRICES)")
		// Two minutes by default (runner.DefaultRescueAfter says why).
		c.bindRescueAfter(fs, getenv)
		fs.DurationVar(&c.DBRetryFor, "db-retry-for", r.duration("db-retry-for", "BATCHEVAL_DB_RETRY_FOR", models.DefaultRetryFor), "how long a run's writes are retried through database errors before the run pauses (env BATCHEVAL_DB_RETRY_FOR)")
		// The runner reads a zero lease, probe interval or retry time as
		// its default, so only a positive one means what it says.
		c.require("lease", "BATCHEVAL_LEASE", func() bool { return c.Lease > 0 }, fmt.Sprintf("a positive duration, e.g. %s (the default)", humanDuration(runner.DefaultLeaseTTL)))
		c.require("shutdown-grace", "BATCHEVAL_SHUTDOWN_GRACE", func() bool { return c.ShutdownGrace >= 0 }, fmt.Sprintf("0 (do not wait) or a positive duration, e.g. %s (the default)", humanDuration(defaultShutdownGrace)))
		c.require("timeout-retries", "BATCHEVAL_TIMEOUT_RETRIES", func() bool { return c.TimeoutRetries >= 0 }, "0 (no retry) or more, e.g. 1 (the default)")
		c.require("probe-interval", "BATCHEVAL_PROBE_INTERVAL", func() bool { return c.ProbeInterval > 0 }, fmt.Sprintf("a positive duration, e.g. %s (the default)", humanDuration(runner.DefaultProbeInterval)))
		c.require("db-retry-for", "BATCHEVAL_DB_RETRY_FOR", func() bool { return c.DBRetryFor > 0 }, fmt.Sprintf("a positive duration, e.g. %s (the default)", humanDuration(models.DefaultRetryFor)))
		c.bindJudgeNetwork(fs, r)
		// Webhooks are delivered by whichever process works the queue's
		// job, a worker included: each of them reads the setting.
		fs.StringVar(&c.WebhookAllowLoopback, "webhook-allow-loopback", r.str("BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK", ""), "let workspace webhooks reach this machine's loopback: true or false; empty: only in local mode, while BATCHEVAL_ADDR is a loopback address (env BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK)")
		c.require("webhook-allow-loopback", "BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK", func() bool { _, err := parseAllowLoopback(c.WebhookAllowLoopback); return err == nil },
			"true or false, or nothing to allow loopback webhooks in local mode only")
	}
	if !server {
		// Commands without a listener (run, migrate, admin) still follow
		// the deployment's address for local mode: loopback judges and a
		// generated secret key for `batcheval run` on a laptop, and the
		// same key rules as the team's server for migrate and admin.
		c.Addr = r.address("", "BATCHEVAL_ADDR", "127.0.0.1:8080")
		c.require("", "BATCHEVAL_ADDR", func() bool { return listenAddrOK(c.Addr) }, listenAddrWant)
		return c
	}
	// Loopback by default: the dashboard has no accounts yet, so it should
	// not be reachable from the network unless someone says so.
	fs.StringVar(&c.Addr, "addr", r.address("addr", "BATCHEVAL_ADDR", "127.0.0.1:8080"), "address to listen on (env BATCHEVAL_ADDR)")
	// 50 MB holds a few hundred thousand short samples; larger sets are
	// better split than uploaded through a browser.
	fs.IntVar(&c.MaxUploadMB, "max-upload-mb", r.integer("max-upload-mb", "BATCHEVAL_MAX_UPLOAD_MB", 50), "largest dataset upload in MiB (env BATCHEVAL_MAX_UPLOAD_MB)")
	// 100,000 rows keeps a browser upload quick to check and map; teams with
	// bigger sets raise it (imports stream, so memory does not grow with it).
	fs.IntVar(&c.MaxUploadRows, "max-upload-rows", r.integer("max-upload-rows", "BATCHEVAL_MAX_UPLOAD_ROWS", dataimport.DefaultMaxRows), "most rows of one dataset upload (env BATCHEVAL_MAX_UPLOAD_ROWS)")
	fs.IntVar(&c.PageConcurrency, "page-concurrency", r.integer("page-concurrency", "BATCHEVAL_PAGE_CONCURRENCY", 0),
		"pages rendered at once, the rest waiting their turn in arrival order (downloads, events and the API are not queued); 0: two per core, -1: no limit (env BATCHEVAL_PAGE_CONCURRENCY)")
	fs.IntVar(&c.MaxRuns, "max-runs", r.integer("max-runs", "BATCHEVAL_MAX_RUNS", 4), "runs one process executes at once (env BATCHEVAL_MAX_RUNS)")
	fs.BoolVar(&c.SeedDemo, "seed-demo", r.boolean("seed-demo", "BATCHEVAL_SEED_DEMO", true), "create the demo project on start (env BATCHEVAL_SEED_DEMO)")
	// A quarter second per answer lets a newcomer watch the demo run's
	// progress, where an instant answer would finish before the page loads.
	fs.DurationVar(&c.SimLatency, "sim-latency", r.duration("sim-latency", "BATCHEVAL_SIM_LATENCY", 250*time.Millisecond), "how long the simulated judge takes per answer (env BATCHEVAL_SIM_LATENCY)")
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", r.boolean("webhook-allow-private", "BATCHEVAL_WEBHOOK_ALLOW_PRIVATE", false), "let workspace webhooks reach private addresses (env BATCHEVAL_WEBHOOK_ALLOW_PRIVATE); link-local and metadata addresses are always refused")
	fs.BoolVar(&c.SecureCookies, "secure-cookies", r.boolean("secure-cookies", "BATCHEVAL_SECURE_COOKIES", false), "mark every cookie Secure: set when TLS ends at a proxy in front (env BATCHEVAL_SECURE_COOKIES)")
	fs.StringVar(&c.AllowedHosts, "allowed-hosts", env("BATCHEVAL_ALLOWED_HOSTS", ""), "host names the dashboard answers to, comma-separated; empty: localhost, 127.0.0.1, ::1 and the bind host (env BATCHEVAL_ALLOWED_HOSTS)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", env("BATCHEVAL_TRUSTED_PROXIES", ""), "reverse proxies whose X-Forwarded-For/-Proto are believed, CIDRs or addresses (env BATCHEVAL_TRUSTED_PROXIES)")
	// Four full-size uploads can wait for their mapping at once: enough for
	// a team preparing several data sets, and a bound on what unfinished
	// uploads hold in the database.
	fs.IntVar(&c.UploadQuotaMB, "upload-quota-mb", r.integer("upload-quota-mb", "BATCHEVAL_UPLOAD_QUOTA_MB", 200), "most MiB of uploads a workspace may have waiting for their column mapping; 0: no quota (env BATCHEVAL_UPLOAD_QUOTA_MB)")
	// Twenty runs at once holds two "Launch all methods" experiments (nine
	// runs each) plus a couple of single runs; more is likely a mistake
	// that would spend real money.
	fs.IntVar(&c.MaxRunsPerWorkspace, "max-runs-per-workspace", r.integer("max-runs-per-workspace", "BATCHEVAL_MAX_RUNS_PER_WORKSPACE", 20), "most runs a workspace may have queued or running at once; 0: no limit (env BATCHEVAL_MAX_RUNS_PER_WORKSPACE)")
	// A script polling a run every second sends 60 a minute; ten times
	// that leaves room for several scripts on one token. Thirty launches a
	// minute is more than a CI pipeline's matrix and stops a loop early.
	fs.IntVar(&c.APIRateLimit, "api-rate-limit", r.integer("api-rate-limit", "BATCHEVAL_API_RATE_LIMIT", handlers.DefaultAPIRateLimit),
		"most API requests one token may send a minute, counted in the database across server processes; 0: no limit (env BATCHEVAL_API_RATE_LIMIT)")
	fs.IntVar(&c.APILaunchRateLimit, "api-launch-rate-limit", r.integer("api-launch-rate-limit", "BATCHEVAL_API_LAUNCH_RATE_LIMIT", handlers.DefaultAPILaunchRateLimit),
		"most runs and experiments one token may launch through the API a minute; 0: no limit (env BATCHEVAL_API_LAUNCH_RATE_LIMIT)")
	c.SecretKey = getenv("BATCHEVAL_SECRET_KEY")
	fs.StringVar(&c.SecretKeyFile, "secret-key-file", env("BATCHEVAL_SECRET_KEY_FILE", ""), "file holding the base64 key that encrypts stored judge keys; or set BATCHEVAL_SECRET_KEY (env BATCHEVAL_SECRET_KEY_FILE)")
	// On by default after a minute idle: a parked worker notices a run
	// queued by another process as soon as River's own poll would (SQLite:
	// a one-query look a second) or sooner (PostgreSQL: LISTEN), and one
	// queued through this process at once; while parked it costs almost no
	// CPU. Why a minute, not longer: waking costs about as much CPU as one
	// second of an idle started River (7 ms), and a run launched through a
	// parked worker starts no later than through an awake one
	// (BENCHMARKS.md, "Parking after a minute"); a minute still leaves
	// River's leader time for its maintenance (cleaning finished jobs)
	// after each burst of work.
	fs.DurationVar(&c.ParkAfter, "park-after", r.duration("park-after", "BATCHEVAL_PARK_AFTER", defaultParkAfter),
		"stop the job engine after this long with no run to work, cutting an idle worker's CPU to almost nothing; "+
			"runs queued through this process wake it at once, runs queued by another process within a fraction of a second on PostgreSQL "+
			"(LISTEN/NOTIFY, one connection) and within a second on SQLite (one small query a second); 0: never (env BATCHEVAL_PARK_AFTER)")
	c.MetricsToken = getenv("BATCHEVAL_METRICS_TOKEN")
	fs.StringVar(&c.MetricsTokenFile, "metrics-token-file", env("BATCHEVAL_METRICS_TOKEN_FILE", ""),
		"file holding the bearer token Prometheus must send for /metrics; or set BATCHEVAL_METRICS_TOKEN; with neither, serve's /metrics answers only this machine (env BATCHEVAL_METRICS_TOKEN_FILE)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", r.address("metrics-addr", "BATCHEVAL_METRICS_ADDR", ""), "worker: serve Prometheus /metrics on this address, e.g. 127.0.0.1:9090 (env BATCHEVAL_METRICS_ADDR; serve has /metrics on --addr)")
	c.requireServer()
	return c
}

// listenAddrWant says what to write for an address to listen on.
const listenAddrWant = "host:port with a port from 0 to 65535, e.g. 127.0.0.1:8080 (or :8080 for every interface)"

// requireServer adds the range checks of serve's and worker's settings.
func (c *Config) requireServer() {
	for _, rc := range []rangeCheck{
		{"addr", "BATCHEVAL_ADDR", func() bool { return listenAddrOK(c.Addr) }, listenAddrWant},
		{"metrics-addr", "BATCHEVAL_METRICS_ADDR", func() bool { return c.MetricsAddr == "" || listenAddrOK(c.MetricsAddr) }, listenAddrWant + ", or nothing for no metrics listener"},
		{"max-upload-mb", "BATCHEVAL_MAX_UPLOAD_MB", func() bool { return c.MaxUploadMB >= 1 }, "a whole number of MiB from 1 up, e.g. 50 (the default)"},
		{"max-upload-rows", "BATCHEVAL_MAX_UPLOAD_ROWS", func() bool { return c.MaxUploadRows >= 1 }, fmt.Sprintf("a whole number from 1 up, e.g. %d (the default)", dataimport.DefaultMaxRows)},
		{"page-concurrency", "BATCHEVAL_PAGE_CONCURRENCY", func() bool { return c.PageConcurrency >= -1 }, "a whole number from 1 up, 0 for two per core (the default), or -1 for no limit"},
		{"max-runs", "BATCHEVAL_MAX_RUNS", func() bool { return c.MaxRuns >= 1 }, "a whole number from 1 up, e.g. 4 (the default)"},
		{"sim-latency", "BATCHEVAL_SIM_LATENCY", func() bool { return c.SimLatency >= 0 }, "0 or a positive duration, e.g. 250ms (the default)"},
		{"upload-quota-mb", "BATCHEVAL_UPLOAD_QUOTA_MB", func() bool { return c.UploadQuotaMB >= 0 }, "a whole number of MiB, e.g. 200 (the default), or 0 for no quota"},
		{"max-runs-per-workspace", "BATCHEVAL_MAX_RUNS_PER_WORKSPACE", func() bool { return c.MaxRunsPerWorkspace >= 0 }, "a whole number, e.g. 20 (the default), or 0 for no limit"},
		{"api-rate-limit", "BATCHEVAL_API_RATE_LIMIT", func() bool { return c.APIRateLimit >= 0 }, fmt.Sprintf("a whole number of requests a minute, e.g. %d (the default), or 0 for no limit", handlers.DefaultAPIRateLimit)},
		{"api-launch-rate-limit", "BATCHEVAL_API_LAUNCH_RATE_LIMIT", func() bool { return c.APILaunchRateLimit >= 0 }, fmt.Sprintf("a whole number of launches a minute, e.g. %d (the default), or 0 for no limit", handlers.DefaultAPILaunchRateLimit)},
		{"park-after", "BATCHEVAL_PARK_AFTER", func() bool { return c.ParkAfter >= 0 }, fmt.Sprintf("a positive duration, e.g. %s (the default), or 0 to never park", humanDuration(defaultParkAfter))},
	} {
		c.checks = append(c.checks, rc)
	}
}

// bindHost is the host part of Addr ("" when it has none, e.g. ":8080").
func (c *Config) bindHost() string {
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return ""
	}
	return host
}

// LocalMode reports whether the server binds a loopback address only, so
// that only people on this machine can reach it: then loopback judges are
// allowed by default and a secret key is generated when first needed.
// An empty host (":8080") or 0.0.0.0 listens on every interface.
func (c *Config) LocalMode() bool {
	host := c.bindHost()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// NetworkPolicy is the dashboard's host allowlist and trusted proxies.
func (c *Config) NetworkPolicy() (handlers.NetworkPolicy, error) {
	var p handlers.NetworkPolicy
	p.AllowedHosts = handlers.ParseAllowedHosts(c.AllowedHosts)
	if len(p.AllowedHosts) == 0 {
		p.AllowedHosts = slices.Clone(handlers.DefaultAllowedHosts)
		// The bind host is a name people use to reach the server, unless
		// it is the "every interface" address, which is no name at all.
		if h := strings.ToLower(c.bindHost()); h != "" && !slices.Contains(p.AllowedHosts, h) {
			if a, err := netip.ParseAddr(h); err != nil || !a.IsUnspecified() {
				p.AllowedHosts = append(p.AllowedHosts, h)
			}
		}
	}
	var err error
	if p.TrustedProxies, err = handlers.ParseTrustedProxies(c.TrustedProxies); err != nil {
		return p, fmt.Errorf("BATCHEVAL_TRUSTED_PROXIES: %w", err)
	}
	return p, nil
}

// bindJudgeNetwork registers the judge network policy's flags, read from
// BATCHEVAL_JUDGE_ALLOW_PRIVATE and BATCHEVAL_JUDGE_ALLOW_LOOPBACK by
// default, on every command that calls judges (serve, worker, run,
// resume): one policy, set the same way wherever a judge is called.
//
// Judges on private networks and loopback are off unless the operator says
// so (loopback is on in local mode, for Ollama on the same laptop): a
// judge URL is typed in the dashboard, and a process that calls it, the
// dashboard's or a command resuming its run, must not become a way into
// the networks it can reach.
func (c *Config) bindJudgeNetwork(fs *flag.FlagSet, r envReader) {
	fs.BoolVar(&c.JudgeAllowPrivate, "judge-allow-private", r.boolean("judge-allow-private", "BATCHEVAL_JUDGE_ALLOW_PRIVATE", false), "allow judges on private networks: 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, 64:ff9b:1::/48 (env BATCHEVAL_JUDGE_ALLOW_PRIVATE)")
	fs.StringVar(&c.JudgeAllowLoopback, "judge-allow-loopback", r.str("BATCHEVAL_JUDGE_ALLOW_LOOPBACK", ""), "allow judges on this machine's loopback: true or false; empty: only in local mode, while BATCHEVAL_ADDR is a loopback address (env BATCHEVAL_JUDGE_ALLOW_LOOPBACK)")
	// Checked with the settings rather than when the policy is built,
	// which comes after the database is opened.
	c.require("judge-allow-loopback", "BATCHEVAL_JUDGE_ALLOW_LOOPBACK", func() bool { _, err := parseAllowLoopback(c.JudgeAllowLoopback); return err == nil },
		"true or false, or nothing to allow loopback judges in local mode only")
}

// applyJudgeEgress sets the judge network policy (Egress) of every judge
// client this process builds; simURL is the in-process simulated judge.
// Every command that calls a judge calls it before its first call: until
// then the judge package refuses loopback and private addresses (its safe
// default), so the simulated judge and a local judge would be refused.
//
// Its refusals name the address refused only in local mode while no
// account exists (addrsShownTo): elsewhere they reach the people who edit
// judges, who are not to learn what the server's internal names resolve
// to; the name typed, the kind of address and the setting are enough.
func (c *Config) applyJudgeEgress(simURL string, db *models.DB) error {
	p, err := c.Egress(simURL)
	if err != nil {
		return err
	}
	p.ShowAddrs = addrsShownTo(c.LocalMode(), db)
	judge.SetEgress(p)
	return nil
}

// accountsCheckTimeout bounds addrsShownTo's read of the accounts: a
// refusal's message waits for it.
const accountsCheckTimeout = 5 * time.Second

// addrsShownTo is the egress policy's ShowAddrs: nil (never) outside
// local mode; in local mode, yes while no account exists in db, read when
// a connection is refused. Once accounts exist (the first made at /setup,
// without a restart) the server serves them and stops naming addresses;
// a database that cannot be read says no.
func addrsShownTo(local bool, db *models.DB) func(context.Context) bool {
	if !local || db == nil {
		return nil
	}
	var accounts atomic.Bool // accounts exist: never false again
	return func(ctx context.Context) bool {
		if accounts.Load() {
			return false
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), accountsCheckTimeout)
		defer cancel()
		has, err := db.HasUsers(rctx)
		if has {
			accounts.Store(true)
		}
		return err == nil && !has
	}
}

// Egress is the judge network policy, from the settings bindJudgeNetwork
// registers; simURL is the in-process simulated judge, allowed whatever
// the policy.
func (c *Config) Egress(simURL string) (judge.Egress, error) {
	p := judge.Egress{AllowPrivate: c.JudgeAllowPrivate, AllowLoopback: c.LocalMode(),
		PrivateSetting: "BATCHEVAL_JUDGE_ALLOW_PRIVATE or --judge-allow-private", LoopbackSetting: "BATCHEVAL_JUDGE_ALLOW_LOOPBACK or --judge-allow-loopback"}
	allow, err := parseAllowLoopback(c.JudgeAllowLoopback)
	if err != nil {
		return p, err
	}
	if allow != nil {
		p.AllowLoopback = *allow
	}
	if simURL != "" {
		u, err := url.Parse(simURL)
		if err != nil {
			return p, fmt.Errorf("simulated judge URL: %w", err)
		}
		ap, err := netip.ParseAddrPort(u.Host)
		if err != nil {
			return p, fmt.Errorf("simulated judge address: %w", err)
		}
		p.AllowAddrs = append(p.AllowAddrs, ap)
	}
	return p, nil
}

// parseAllowLoopback reads the loopback allowance: nil when it is empty
// (loopback judges in local mode only), else true or false as a flag reads
// a boolean (true, 1, FALSE, ...).
func parseAllowLoopback(v string) (*bool, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return nil, fmt.Errorf("BATCHEVAL_JUDGE_ALLOW_LOOPBACK (--judge-allow-loopback) is %q: use true, false, or leave it empty", v)
	}
	return &b, nil
}

// localKeyFile is where local mode keeps a generated secret key: next to
// the SQLite database, in the data folder.
func (c *Config) localKeyFile() string {
	return filepath.Join(filepath.Dir(c.SQLitePath), "secret.key")
}

// Secrets is the secret key that seals judge keys: the configured one, or
// in local mode one generated into the data folder when first needed.
func (c *Config) Secrets(log *slog.Logger) (*models.Secrets, error) {
	var sealer *models.Sealer
	var err error
	switch {
	case c.SecretKey != "" && c.SecretKeyFile != "":
		return nil, errors.New("set BATCHEVAL_SECRET_KEY or BATCHEVAL_SECRET_KEY_FILE, not both")
	case c.SecretKey != "":
		if sealer, err = models.ParseSecretKey(c.SecretKey); err != nil {
			return nil, fmt.Errorf("BATCHEVAL_SECRET_KEY: %w", err)
		}
	case c.SecretKeyFile != "":
		if sealer, err = models.ReadSecretKeyFile(c.SecretKeyFile); err != nil {
			return nil, err
		}
	}
	file := ""
	if sealer == nil && c.LocalMode() {
		file = c.localKeyFile()
	}
	s := models.NewSecrets(sealer, file)
	s.OnGenerate = func(path string) {
		log.Warn("generated a secret key to encrypt judge keys; back it up with the database, or stored keys cannot be read", "file", path)
	}
	return s, nil
}

// MetricsBearer is the token /metrics asks for ("" for none): from
// BATCHEVAL_METRICS_TOKEN or the file --metrics-token-file names (trimmed,
// as Prometheus' credentials_file is).
func (c *Config) MetricsBearer() (string, error) {
	switch {
	case c.MetricsToken != "" && c.MetricsTokenFile != "":
		return "", errors.New("set BATCHEVAL_METRICS_TOKEN or BATCHEVAL_METRICS_TOKEN_FILE (--metrics-token-file), not both")
	case c.MetricsToken != "":
		return strings.TrimSpace(c.MetricsToken), nil
	case c.MetricsTokenFile != "":
		b, err := os.ReadFile(c.MetricsTokenFile)
		if err != nil {
			return "", fmt.Errorf("metrics token file: %w", err)
		}
		token := strings.TrimSpace(string(b))
		if token == "" {
			return "", fmt.Errorf("metrics token file %s is empty: put the token Prometheus sends in it", c.MetricsTokenFile)
		}
		return token, nil
	}
	return "", nil
}

// DSN is the database to open.
func (c *Config) DSN() string {
	if u := strings.TrimSpace(c.DatabaseURL); u != "" {
		return u
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
	db.MaxActiveRunsPerWorkspace = max(c.MaxRunsPerWorkspace, 0)
	if db.Secrets, err = c.Secrets(log); err != nil {
		db.Close()
		return nil, err
	}
	// Keys stored before encryption existed are sealed now.
	n, err := db.SealStoredKeys(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	if n > 0 {
		log.Info("encrypted judge keys stored in plaintext by an older version", "count", n)
	}
	return db, nil
}

// newCommand makes a subcommand's flag set with the settings that apply to
// it bound: serve and worker get the server's flags, migrate and run only
// the database and logging ones.
func newCommand(name string, getenv func(string) string, stderr io.Writer) (*flag.FlagSet, *Config) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = commandUsage(stderr, fs)
	server := name == "serve" || name == "worker"
	return fs, bindConfig(fs, getenv, server, server || name == "run" || name == "resume")
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
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
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
