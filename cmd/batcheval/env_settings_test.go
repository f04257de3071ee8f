package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
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

// TestSettingsOutOfRangeRefused: a readable value a setting cannot
// sensibly take (no run at once, a negative timeout, a port past 65535, an
// empty SQLite path, a loopback allowance that is no boolean) is refused
// at start, from its flag as from its variable, naming the one given, the
// value and what to write; it used to be taken in silence (the runner read
// 0 runs as 4) or to fail only after the database was opened. A sensible
// value passes.
func TestSettingsOutOfRangeRefused(t *testing.T) {
	for _, tc := range []struct {
		cmd, flag, key, bad, good string
	}{
		{"serve", "max-runs", "BATCHEVAL_MAX_RUNS", "0", "1"},
		{"worker", "max-runs", "BATCHEVAL_MAX_RUNS", "-2", "8"},
		{"serve", "max-upload-mb", "BATCHEVAL_MAX_UPLOAD_MB", "0", "1"},
		{"serve", "max-upload-rows", "BATCHEVAL_MAX_UPLOAD_ROWS", "-1", "10"},
		{"serve", "page-concurrency", "BATCHEVAL_PAGE_CONCURRENCY", "-2", "-1"},
		{"serve", "upload-quota-mb", "BATCHEVAL_UPLOAD_QUOTA_MB", "-5", "0"},
		{"serve", "max-runs-per-workspace", "BATCHEVAL_MAX_RUNS_PER_WORKSPACE", "-1", "0"},
		{"serve", "sim-latency", "BATCHEVAL_SIM_LATENCY", "-1s", "0s"},
		{"worker", "park-after", "BATCHEVAL_PARK_AFTER", "-5m", "0s"},
		{"run", "lease", "BATCHEVAL_LEASE", "0s", "1s"},
		{"worker", "lease", "BATCHEVAL_LEASE", "-10s", "30s"},
		{"serve", "shutdown-grace", "BATCHEVAL_SHUTDOWN_GRACE", "-1m", "0s"},
		{"resume", "timeout-retries", "BATCHEVAL_TIMEOUT_RETRIES", "-1", "0"},
		{"worker", "probe-interval", "BATCHEVAL_PROBE_INTERVAL", "0s", "1s"},
		{"run", "db-retry-for", "BATCHEVAL_DB_RETRY_FOR", "-30s", "30s"},
		{"serve", "addr", "BATCHEVAL_ADDR", "127.0.0.1:70000", "127.0.0.1:0"},
		{"serve", "addr", "BATCHEVAL_ADDR", "127.0.0.1:-1", ":8081"},
		{"worker", "metrics-addr", "BATCHEVAL_METRICS_ADDR", "127.0.0.1:99999", "127.0.0.1:9090"},
		{"serve", "judge-allow-loopback", "BATCHEVAL_JUDGE_ALLOW_LOOPBACK", "yes", "false"},
		{"worker", "judge-allow-loopback", "BATCHEVAL_JUDGE_ALLOW_LOOPBACK", "sometimes", "1"},
		// Commands without a listener have no --addr, only the variable.
		{"migrate", "", "BATCHEVAL_ADDR", "localhost:123456", "localhost:8080"},
		{"run", "", "BATCHEVAL_ADDR", "0.0.0.0:http", "0.0.0.0:80"},
	} {
		parse := func(env string, args ...string) error {
			fs, c := newCommand(tc.cmd, func(k string) string {
				if k == tc.key {
					return env
				}
				return ""
			}, io.Discard)
			return c.parse(fs, args)
		}
		name := tc.cmd + " " + tc.key
		if tc.flag != "" {
			err := parse("", "--"+tc.flag+"="+tc.bad)
			if err == nil || !strings.Contains(err.Error(), "--"+tc.flag+"=") || !strings.Contains(err.Error(), "write ") {
				t.Errorf("%s --%s=%s: error %v, want one naming the flag and what to write", tc.cmd, tc.flag, tc.bad, err)
			}
			if err := parse("", "--"+tc.flag+"="+tc.good); err != nil {
				t.Errorf("%s --%s=%s: %v", tc.cmd, tc.flag, tc.good, err)
			}
			// The flag replaces a senseless variable.
			if err := parse(tc.bad, "--"+tc.flag+"="+tc.good); err != nil {
				t.Errorf("%s=%s with --%s=%s: %v", name, tc.bad, tc.flag, tc.good, err)
			}
		}
		err := parse(tc.bad)
		if err == nil || !strings.Contains(err.Error(), tc.key+"=\""+tc.bad+"\"") || !strings.Contains(err.Error(), "write ") {
			t.Errorf("%s=%s: error %v, want one naming the variable, its value and what to write", name, tc.bad, err)
		}
		if err := parse(tc.good); err != nil {
			t.Errorf("%s=%s: %v", name, tc.good, err)
		}
	}
}

// TestRunFlagsOutOfRangeRefused: `batcheval run` refuses a concurrency,
// a timeout or a sample count it cannot use, naming the flag, together with
// the settings and before anything is stored (a zero concurrency ran one
// call at a time and a zero timeout took the default, in silence).
func TestRunFlagsOutOfRangeRefused(t *testing.T) {
	dir := t.TempDir()
	wide, _ := writeAnnotated(t, dir)
	rubric := writeFile(t, filepath.Join(dir, "r.yaml"), annotatedRubric)
	for i, bad := range []string{"--concurrency=0", "--concurrency=-3", "--timeout=0s", "--timeout=-5s", "--timeout=500ms", "--samples=0"} {
		db := filepath.Join(dir, "sub"+string(rune('a'+i)), "t.db")
		err := run(context.Background(), []string{"run", "--db", db, "--data", wide, "--rubric", rubric, "--simulated", "--rounds", "1", bad},
			func(string) string { return "" }, io.Discard, io.Discard)
		name, value, _ := strings.Cut(bad, "=")
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s=%q cannot be used: write ", name, value)) {
			t.Errorf("%s: error %v, want it refused naming the flag, its value and what to write", bad, err)
		}
		if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the database %s was created (stat: %v)", bad, db, err)
		}
	}
}

// TestServeRefusesSettingsBeforeOpeningTheDatabase: serve refuses an
// empty SQLite path, a port out of range and a loopback allowance that is
// no boolean before opening the database (the allowance was checked only
// after the database had been opened and migrated).
func TestServeRefusesSettingsBeforeOpeningTheDatabase(t *testing.T) {
	dir := t.TempDir()
	for i, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{env: map[string]string{"BATCHEVAL_JUDGE_ALLOW_LOOPBACK": "yes"}, want: `BATCHEVAL_JUDGE_ALLOW_LOOPBACK="yes" cannot be used: write true or false`},
		{args: []string{"--judge-allow-loopback", "maybe"}, want: `--judge-allow-loopback="maybe" cannot be used`},
		{args: []string{"--addr", "127.0.0.1:65536"}, want: `--addr="127.0.0.1:65536" cannot be used: write host:port`},
		{env: map[string]string{"BATCHEVAL_MAX_RUNS": "0"}, want: `BATCHEVAL_MAX_RUNS="0" cannot be used`},
	} {
		db := filepath.Join(dir, "sub"+string(rune('a'+i)), "t.db")
		args := append([]string{"serve", "--db", db, "--seed-demo=false"}, tc.args...)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := run(ctx, args, func(k string) string { return tc.env[k] }, io.Discard, io.Discard)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: error %v, want %q", tc.env, tc.args, err, tc.want)
		}
		if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v %v: the database %s was created (stat: %v)", tc.env, tc.args, db, err)
		}
	}
	// An empty SQLite path names the flag (BATCHEVAL_DB empty is unset).
	err := run(context.Background(), []string{"migrate", "--db", ""}, func(string) string { return "" }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `--db="" cannot be used: write the SQLite file's path`) {
		t.Errorf("migrate --db '': error %v, want it refused naming --db", err)
	}
}

// TestFlagErrorsNameTheFlagAndQuoteWhatWasWritten: a value out of range
// is refused naming its flag and quoting it as written: `batcheval run
// --rounds 0` said "rounds must be between 1 and 50, got 0" (no flag),
// after the data had been read, and a duration was shown as Go rewrites it
// (--timeout=-1m as -1m0s, 0.5s as 500ms, -90s as -1m30s).
func TestFlagErrorsNameTheFlagAndQuoteWhatWasWritten(t *testing.T) {
	dir := t.TempDir()
	wide, _ := writeAnnotated(t, dir)
	rubric := writeFile(t, filepath.Join(dir, "r.yaml"), annotatedRubric)
	for i, tc := range []struct {
		cmd  string
		args []string
		want string
		not  string // Go's rewriting of the value, which must not show
	}{
		{"run", []string{"--rounds=0"}, `--rounds="0" cannot be used: write a whole number from 1 to 50`, ""},
		{"run", []string{"--rounds", "51"}, `--rounds="51" cannot be used: write a whole number from 1 to 50`, ""},
		{"run", []string{"--batch-size=0"}, `--batch-size="0" cannot be used: write a whole number from 1 to 100`, ""},
		{"run", []string{"--batch-size=101"}, `--batch-size="101" cannot be used`, ""},
		{"run", []string{"--temperature=2.5"}, `--temperature="2.5" cannot be used: write a number from 0 to 2`, ""},
		{"run", []string{"--top-p=0"}, `--top-p="0" cannot be used: write a number above 0, at most 1`, ""},
		{"run", []string{"--samples=101"}, `--samples="101" cannot be used: write a whole number from 1 to 100`, ""},
		{"run", []string{"--sample-temperature=3"}, `--sample-temperature="3" cannot be used: write a number from 0 to 2`, ""},
		{"run", []string{"--timeout=-1m"}, `--timeout="-1m" cannot be used`, "-1m0s"},
		{"run", []string{"--timeout", "0.5s"}, `--timeout="0.5s" cannot be used`, "500ms"},
		{"run", []string{"--simulated", "--lease=-90s"}, `--lease="-90s" cannot be used`, "-1m30s"},
		{"run", []string{"--rescue-after=-90s"}, `--rescue-after="-90s": -90s is not a positive duration`, "-1m30s"},
		{"serve", []string{"--park-after", "-90s"}, `--park-after="-90s" cannot be used`, "-1m30s"},
		// Words and numbers a flag cannot take at all: the flag named with
		// two dashes, the value quoted, the accepted values listed (before,
		// "unknown procedure", or Go's "invalid value ... for flag -rounds:
		// parse error" after the whole help).
		{"run", []string{"--procedure=four"}, `--procedure="four" cannot be used: write one, two or three`, ""},
		{"run", []string{"--composition", "mixed"}, `--composition="mixed" cannot be used: write heterogeneous, random or homogeneous`, ""},
		{"run", []string{"--scoring=float"}, `--scoring="float" cannot be used: write decimal or integer`, ""},
		{"run", []string{"--sort-key=last"}, `--sort-key="last" cannot be used: write previous or mean`, ""},
		{"run", []string{"--method=g-eval"}, `--method="g-eval" cannot be used: write batcheval, geval, llmeval or closerlook`, ""},
		{"run", []string{"--llmeval-scale=1-10"}, `--llmeval-scale="1-10" cannot be used: write 0-5 or 0-100`, ""},
		{"run", []string{"--rounds=five"}, `--rounds="five" cannot be read: write a whole number, e.g. 5 (the default)`, "parse error"},
		{"run", []string{"--temperature", "hot"}, `--temperature="hot" cannot be read: write a number, e.g. 0.2 (the default)`, "parse error"},
		{"run", []string{"--timeout=90"}, `--timeout="90" cannot be read: write a duration with its unit, e.g. 2m (the default)`, "2m0s"},
		{"run", []string{"--simulated=yes"}, `--simulated="yes" cannot be read: write true or false`, ""},
		{"serve", []string{"--max-runs"}, `--max-runs needs a value`, ""},
		{"run", []string{"--round=3"}, `batcheval run has no flag --round: "batcheval run --help" lists its flags`, ""},
		{"serve", []string{"--max-runs=four"}, `--max-runs="four" cannot be read: write a whole number, e.g. 4 (the default)`, ""},
		{"worker", []string{"--shutdown-grace=-1m"}, `--shutdown-grace="-1m" cannot be used: write 0 (do not wait) or a positive duration, e.g. 2m (the default)`, "2m0s"},
		// The log and key-header words, in the words of the other word
		// flags (they said "cannot be read", and --key-header: the key
		// header "x" is not one of "bearer" (...) and "api-key" (...)).
		{"migrate", []string{"--log-format=yaml"}, `--log-format="yaml" cannot be used: write text or json`, ""},
		{"serve", []string{"--log-level", "verbose"}, `--log-level="verbose" cannot be used: write debug, info, warn or error`, ""},
		{"worker", []string{"--log-level="}, `--log-level="" cannot be used: write debug, info, warn or error`, ""},
		{"run", []string{"--key-header=x-api-key"}, `--key-header="x-api-key" cannot be used: write bearer or api-key`, "is not one of"},
		{"resume", []string{"--queue-only=maybe", "1"}, `--queue-only="maybe" cannot be read: write true or false`, ""},
		{"admin", []string{"create-user", "--role=boss", "--email=a@b.c", "--name=A"}, `--role: "boss" is not a role: choose owner, editor, reviewer or viewer`, ""},
	} {
		db := filepath.Join(dir, "sub"+string(rune('a'+i)), "t.db")
		args := append([]string{tc.cmd, "--db", db}, tc.args...)
		if tc.cmd == "run" {
			args = append(args, "--data", wide, "--rubric", rubric, "--simulated")
		}
		if tc.cmd == "admin" {
			args = append([]string{"admin"}, append(tc.args, "--db", db)...)
		}
		var stderr strings.Builder
		err := run(context.Background(), args, func(string) string { return "" }, io.Discard, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.not != "" && strings.Contains(err.Error(), tc.not)) {
			t.Errorf("%s %v: error %v, want it to say %q (and not %q)", tc.cmd, tc.args, err, tc.want, tc.not)
		}
		if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s %v: the database %s was created (stat: %v)", tc.cmd, tc.args, db, err)
		}
		// The error is said once, not after a dump of every flag.
		if strings.Contains(stderr.String(), "--db") || strings.Contains(stderr.String(), "-db string") {
			t.Errorf("%s %v: the help was printed with the error:\n%s", tc.cmd, tc.args, stderr.String())
		}
	}
	// The variable's value is quoted as written in what follows it, too.
	fs, c := newCommand("worker", func(k string) string { return map[string]string{"BATCHEVAL_RESCUE_AFTER": "-90s"}[k] }, io.Discard)
	err := c.parse(fs, nil)
	if err == nil || !strings.Contains(err.Error(), `BATCHEVAL_RESCUE_AFTER="-90s": -90s is not a positive duration`) || strings.Contains(err.Error(), "-1m30s") {
		t.Errorf("BATCHEVAL_RESCUE_AFTER=-90s: %v, want it quoted as written", err)
	}
}

// TestWordFlagsReadAsBefore: --log-level, --log-format and --key-header,
// refused now as the other word flags are, still take their words in any
// case (and a level with slog's offset), list them in help as the others
// do, and their variables are refused in the same words.
func TestWordFlagsReadAsBefore(t *testing.T) {
	fs, c := newCommand("serve", func(string) string { return "" }, io.Discard)
	if err := c.parse(fs, []string{"--log-level=WARN", "--log-format", "JSON"}); err != nil || c.LogLevel != "WARN" || c.LogFormat != "JSON" {
		t.Errorf("--log-level=WARN --log-format JSON: %v, level %q, format %q", err, c.LogLevel, c.LogFormat)
	}
	fs, c = newCommand("worker", func(string) string { return "" }, io.Discard)
	if err := c.parse(fs, []string{"--log-level=debug+2"}); err != nil || c.LogLevel != "debug+2" {
		t.Errorf("--log-level=debug+2: %v, level %q", err, c.LogLevel)
	}
	fs, c = newCommand("migrate", func(k string) string { return map[string]string{"BATCHEVAL_LOG_FORMAT": "yaml"}[k] }, io.Discard)
	if err := c.parse(fs, nil); err == nil || err.Error() != `BATCHEVAL_LOG_FORMAT="yaml" cannot be used: write text or json, or unset it for the default` {
		t.Errorf("BATCHEVAL_LOG_FORMAT=yaml: %v", err)
	}
	var help strings.Builder
	if err := run(context.Background(), []string{"run", "-h"}, func(string) string { return "" }, &help, io.Discard); err != nil {
		t.Fatalf("run -h: %v", err)
	}
	for _, want := range []string{"--key-header bearer|api-key\n", "--log-level debug|info|warn|error\n", "--log-format text|json\n", "(default bearer)\n", "(env BATCHEVAL_LOG_LEVEL) (default info)\n", "(env BATCHEVAL_LOG_FORMAT) (default text)\n"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("run -h does not show %q:\n%s", want, help.String())
		}
	}
}

// TestHelpShowsDefaultsAsTyped: every command's -h lists its flags with two
// dashes and their defaults as one would type them ("2m", "5m", "250ms",
// data/batcheval.db), never Go's spelling ("2m0s", quoted strings), lists
// the words an enum flag takes, and ends without an error (serve -h used to
// end in "flag: help requested").
func TestHelpShowsDefaultsAsTyped(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "-h"}, []string{
			"--timeout duration\n    \tjudge request timeout per attempt (default 2m)\n",
			"--shutdown-grace duration\n", "(default 2m)\n",
			"--procedure one|two|three\n", "(default two)\n",
			"--method batcheval|geval|llmeval|closerlook\n",
			"--project string\n    \tproject the run is stored under (default \"Command-line runs\")\n",
			"--db string\n", "(default data/batcheval.db)\n",
			"at least 40s (default 2m; env BATCHEVAL_RESCUE_AFTER)",
			"--spend-cap-usd USD\n",
		}},
		{[]string{"serve", "--help"}, []string{"Usage: batcheval serve [flags]", "--park-after duration\n", "(default 1m)\n", "(default 250ms)\n", "(default 127.0.0.1:8080)\n", "--seed-demo\n"}},
		{[]string{"worker", "-h"}, []string{"Usage: batcheval worker [flags]", "--shutdown-grace duration\n"}},
		{[]string{"migrate", "-h"}, []string{"Usage: batcheval migrate [flags]", "(default info)\n"}},
		{[]string{"resume", "-h"}, []string{"Usage: batcheval resume [flags] RUN_ID", "--queue-only\n"}},
		{[]string{"export", "-h"}, []string{"Usage: batcheval export [flags] RUN_ID", "--format csv|json\n", "--out FILE\n"}},
		{[]string{"admin", "create-user", "-h"}, []string{"--role string\n", "(default default)\n"}},
	} {
		var stdout strings.Builder // asked for, the help is printed on stdout
		if err := run(context.Background(), tc.args, func(string) string { return "" }, &stdout, io.Discard); err != nil {
			t.Errorf("%v: %v, want the help and no error", tc.args, err)
		}
		help := stdout.String()
		for _, w := range tc.want {
			if !strings.Contains(help, w) {
				t.Errorf("%v: the help does not say %q:\n%s", tc.args, w, help)
			}
		}
		if goStyle := regexp.MustCompile(`\n  -[a-z]`).FindString(help); goStyle != "" {
			t.Errorf("%v: the help names a flag with one dash (%q)", tc.args, goStyle)
		}
		for _, bad := range []string{"m0s", "h0m", "(default \"data", "(default \"text", "(default \"two"} {
			if strings.Contains(help, bad) {
				t.Errorf("%v: the help says %q, Go's spelling:\n%s", tc.args, bad, help)
			}
		}
	}
}
