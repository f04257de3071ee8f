package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEnvSettingsRefused: every environment variable that holds a
// duration, a number, a boolean or an address is refused when the command
// starts if its value cannot be read, with the variable named and what to
// write (it used to fall back to the default in silence), unless the flag
// that replaces it is given; a readable value reaches the setting.
func TestEnvSettingsRefused(t *testing.T) {
	for _, tc := range []struct {
		cmd, key, bad string
		// flag replaces the variable ("" when the command has none: the
		// variable is refused whatever the flags).
		flag string
		// good is a readable value and got reads the setting it gave.
		good string
		got  func(*Config) any
		want any
	}{
		{cmd: "serve", key: "BATCHEVAL_LEASE", bad: "90", flag: "--lease=1m", good: "45s", got: func(c *Config) any { return c.Lease }, want: 45 * time.Second},
		{cmd: "run", key: "BATCHEVAL_LEASE", bad: "1 minute", flag: "--lease=1m", good: "2m", got: func(c *Config) any { return c.Lease }, want: 2 * time.Minute},
		{cmd: "worker", key: "BATCHEVAL_SHUTDOWN_GRACE", bad: "30 seconds", flag: "--shutdown-grace=10s", good: "10s", got: func(c *Config) any { return c.ShutdownGrace }, want: 10 * time.Second},
		{cmd: "resume", key: "BATCHEVAL_PROBE_INTERVAL", bad: "5sec", flag: "--probe-interval=5s", good: "5s", got: func(c *Config) any { return c.ProbeInterval }, want: 5 * time.Second},
		{cmd: "run", key: "BATCHEVAL_DB_RETRY_FOR", bad: "forever", flag: "--db-retry-for=1m", good: "3m", got: func(c *Config) any { return c.DBRetryFor }, want: 3 * time.Minute},
		{cmd: "serve", key: "BATCHEVAL_PARK_AFTER", bad: "never", flag: "--park-after=0", good: "0", got: func(c *Config) any { return c.ParkAfter }, want: time.Duration(0)},
		{cmd: "serve", key: "BATCHEVAL_SIM_LATENCY", bad: "fast", flag: "--sim-latency=0s", good: "10ms", got: func(c *Config) any { return c.SimLatency }, want: 10 * time.Millisecond},
		{cmd: "worker", key: "BATCHEVAL_RESCUE_AFTER", bad: "2 minutes", flag: "--rescue-after=3m", good: "3m", got: func(c *Config) any { return c.RescueAfter }, want: 3 * time.Minute},
		{cmd: "run", key: "BATCHEVAL_TIMEOUT_RETRIES", bad: "two", flag: "--timeout-retries=2", good: "0", got: func(c *Config) any { return c.TimeoutRetries }, want: 0},
		{cmd: "serve", key: "BATCHEVAL_MAX_UPLOAD_MB", bad: "50MB", flag: "--max-upload-mb=50", good: "80", got: func(c *Config) any { return c.MaxUploadMB }, want: 80},
		{cmd: "serve", key: "BATCHEVAL_MAX_UPLOAD_ROWS", bad: "1e6", flag: "--max-upload-rows=1000", good: "1000", got: func(c *Config) any { return c.MaxUploadRows }, want: 1000},
		{cmd: "serve", key: "BATCHEVAL_PAGE_CONCURRENCY", bad: "unlimited", flag: "--page-concurrency=-1", good: "-1", got: func(c *Config) any { return c.PageConcurrency }, want: -1},
		{cmd: "worker", key: "BATCHEVAL_MAX_RUNS", bad: "4.5", flag: "--max-runs=4", good: "8", got: func(c *Config) any { return c.MaxRuns }, want: 8},
		{cmd: "serve", key: "BATCHEVAL_UPLOAD_QUOTA_MB", bad: "none", flag: "--upload-quota-mb=0", good: "0", got: func(c *Config) any { return c.UploadQuotaMB }, want: 0},
		{cmd: "serve", key: "BATCHEVAL_MAX_RUNS_PER_WORKSPACE", bad: "many", flag: "--max-runs-per-workspace=0", good: "5", got: func(c *Config) any { return c.MaxRunsPerWorkspace }, want: 5},
		{cmd: "serve", key: "BATCHEVAL_SEED_DEMO", bad: "no", flag: "--seed-demo=false", good: "0", got: func(c *Config) any { return c.SeedDemo }, want: false},
		{cmd: "serve", key: "BATCHEVAL_WEBHOOK_ALLOW_PRIVATE", bad: "yes", flag: "--webhook-allow-private", good: "1", got: func(c *Config) any { return c.WebhookAllowPrivate }, want: true},
		{cmd: "serve", key: "BATCHEVAL_SECURE_COOKIES", bad: "on", flag: "--secure-cookies=true", good: "TRUE", got: func(c *Config) any { return c.SecureCookies }, want: true},
		{cmd: "worker", key: "BATCHEVAL_JUDGE_ALLOW_PRIVATE", bad: "y", flag: "--judge-allow-private=false", good: "true", got: func(c *Config) any { return c.JudgeAllowPrivate }, want: true},
		{cmd: "serve", key: "BATCHEVAL_ADDR", bad: "8080", flag: "--addr=127.0.0.1:9000", good: ":9000", got: func(c *Config) any { return c.Addr }, want: ":9000"},
		// Commands without a listener read the address for local mode,
		// and have no flag to replace it.
		{cmd: "migrate", key: "BATCHEVAL_ADDR", bad: "localhost", good: "localhost:8080", got: func(c *Config) any { return c.LocalMode() }, want: true},
		{cmd: "run", key: "BATCHEVAL_ADDR", bad: "0.0.0.0", good: "0.0.0.0:80", got: func(c *Config) any { return c.LocalMode() }, want: false},
		{cmd: "migrate", key: "BATCHEVAL_LOG_LEVEL", bad: "verbose", flag: "--log-level=debug", good: "WARN", got: func(c *Config) any { return c.LogLevel }, want: "WARN"},
		{cmd: "run", key: "BATCHEVAL_LOG_FORMAT", bad: "logfmt", flag: "--log-format=json", good: "json", got: func(c *Config) any { return c.LogFormat }, want: "json"},
		{cmd: "worker", key: "BATCHEVAL_METRICS_ADDR", bad: "9090", flag: "--metrics-addr=127.0.0.1:9090", good: "127.0.0.1:9091", got: func(c *Config) any { return c.MetricsAddr }, want: "127.0.0.1:9091"},
	} {
		parse := func(value string, args ...string) (*Config, error) {
			fs, c := newCommand(tc.cmd, func(k string) string {
				if k == tc.key {
					return value
				}
				return ""
			}, io.Discard)
			return c, c.parse(fs, args)
		}
		name := tc.cmd + " " + tc.key + "=" + tc.bad
		_, err := parse(tc.bad)
		if err == nil || !strings.Contains(err.Error(), tc.key+"=\""+tc.bad+"\"") || !strings.Contains(err.Error(), "write ") {
			t.Errorf("%s: error %v, want one naming the variable and what to write", name, err)
		}
		if tc.flag != "" {
			if _, err := parse(tc.bad, tc.flag); err != nil {
				t.Errorf("%s %s: the flag replaces the variable, yet: %v", name, tc.flag, err)
			}
		}
		c, err := parse(tc.good)
		if err != nil {
			t.Errorf("%s %s=%q: %v", tc.cmd, tc.key, tc.good, err)
			continue
		}
		if got := tc.got(c); got != tc.want {
			t.Errorf("%s %s=%q: setting %v, want %v", tc.cmd, tc.key, tc.good, got, tc.want)
		}
	}
}

// TestEnvSettingsRefusedTogether: several unreadable values are all
// named in one error, so the operator fixes them in one go.
func TestEnvSettingsRefusedTogether(t *testing.T) {
	env := map[string]string{"BATCHEVAL_LEASE": "1 minute", "BATCHEVAL_MAX_RUNS": "four", "BATCHEVAL_RESCUE_AFTER": "soon"}
	fs, c := newCommand("worker", func(k string) string { return env[k] }, io.Discard)
	err := c.parse(fs, nil)
	for k := range env {
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("error %v does not name %s", err, k)
		}
	}
}

// TestLogFlagsRefused: a log level or format given as a flag that the
// logger cannot use is refused naming the flag (it used to be taken for
// info or text).
func TestLogFlagsRefused(t *testing.T) {
	for _, args := range [][]string{{"--log-level", "loud"}, {"--log-format=xml"}} {
		fs, c := newCommand("serve", func(string) string { return "" }, io.Discard)
		err := c.parse(fs, args)
		flagName, _, _ := strings.Cut(strings.TrimPrefix(args[0], "--"), "=")
		if err == nil || !strings.Contains(err.Error(), "--"+flagName+"=") || !strings.Contains(err.Error(), "write ") {
			t.Errorf("%v: error %v, want one naming --%s and what to write", args, err, flagName)
		}
	}
}

// TestRunAndResumeRefuseBadSettingsBeforeOpeningTheDatabase: `run` and
// `resume` refuse an unreadable setting (the rescue time among them) when
// their flags are parsed, as serve does, not after opening the database:
// no database file is created.
func TestRunAndResumeRefuseBadSettingsBeforeOpeningTheDatabase(t *testing.T) {
	dir := t.TempDir()
	wide, _ := writeAnnotated(t, dir)
	rubric := writeFile(t, filepath.Join(dir, "r.yaml"), annotatedRubric)
	for i, tc := range []struct {
		key, value string
		args       []string
	}{
		{"BATCHEVAL_RESCUE_AFTER", "soon", []string{"run", "--data", wide, "--rubric", rubric, "--simulated", "--rounds", "1"}},
		{"BATCHEVAL_RESCUE_AFTER", "1s", []string{"run", "--data", wide, "--rubric", rubric, "--simulated", "--rounds", "1"}},
		{"BATCHEVAL_LEASE", "a minute", []string{"run", "--data", wide, "--rubric", rubric, "--simulated", "--rounds", "1"}},
		{"BATCHEVAL_RESCUE_AFTER", "-1m", []string{"resume", "1"}},
		{"BATCHEVAL_DB_RETRY_FOR", "long", []string{"resume", "--queue-only", "1"}},
	} {
		db := filepath.Join(dir, "sub"+string(rune('a'+i)), "t.db")
		args := append(tc.args[:1:1], append([]string{"--db", db}, tc.args[1:]...)...)
		var out, errOut bytes.Buffer
		err := run(context.Background(), args, func(k string) string {
			if k == tc.key {
				return tc.value
			}
			return ""
		}, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%v with %s=%q: error %v, want one naming %s", tc.args[0], tc.key, tc.value, err, tc.key)
		}
		if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v with %s=%q: the database %s was created (stat: %v)", tc.args[0], tc.key, tc.value, db, err)
		}
	}
}
