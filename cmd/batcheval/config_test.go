package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/batcheval/batcheval/models/dataimport"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/runner"
)

func TestParsePrices(t *testing.T) {
	got, err := parsePrices("gpt-4o=2.5:10, llama = 0:0")
	if err != nil {
		t.Fatal(err)
	}
	if p := got["gpt-4o"]; p.Input != 2.5 || p.Output != 10 {
		t.Errorf("gpt-4o = %+v", p)
	}
	if _, ok := got["llama"]; !ok || len(got) != 2 {
		t.Errorf("prices = %+v", got)
	}
	for _, bad := range []string{"gpt-4o=2.5", "=1:2", "x=a:1", "x=-1:2"} {
		if _, err := parsePrices(bad); err == nil {
			t.Errorf("parsePrices(%q) accepted", bad)
		}
	}
}

func TestLocalModeAndAllowedHosts(t *testing.T) {
	for _, tc := range []struct {
		addr, hosts string
		local       bool
		want        string
	}{
		{"127.0.0.1:8080", "", true, "localhost,127.0.0.1,::1"},
		{"localhost:8080", "", true, "localhost,127.0.0.1,::1"},
		{"[::1]:8080", "", true, "localhost,127.0.0.1,::1"},
		{"0.0.0.0:8080", "", false, "localhost,127.0.0.1,::1"},
		{":8080", "", false, "localhost,127.0.0.1,::1"},
		{"192.168.1.20:8080", "", false, "localhost,127.0.0.1,::1,192.168.1.20"},
		{"0.0.0.0:8080", "Evals.Example.org:443, intranet", false, "evals.example.org,intranet"},
	} {
		c := &Config{Addr: tc.addr, AllowedHosts: tc.hosts}
		if got := c.LocalMode(); got != tc.local {
			t.Errorf("%s: LocalMode = %v, want %v", tc.addr, got, tc.local)
		}
		p, err := c.NetworkPolicy()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(p.AllowedHosts, ","); got != tc.want {
			t.Errorf("%s %q: allowed hosts %s, want %s", tc.addr, tc.hosts, got, tc.want)
		}
	}
	if _, err := (&Config{Addr: ":1", TrustedProxies: "nonsense"}).NetworkPolicy(); err == nil {
		t.Error("a malformed trusted proxy list was accepted")
	}
}

// TestEgressPolicy: loopback judges are on in local mode only unless the
// operator says otherwise; private networks only when asked; the simulated
// judge's own port works in every mode.
func TestEgressPolicy(t *testing.T) {
	const sim = "http://127.0.0.1:41234/v1"
	for _, tc := range []struct {
		addr, loopback string
		private        bool
		wantLoopback   bool
	}{
		{"127.0.0.1:8080", "", false, true},
		{"0.0.0.0:8080", "", false, false},
		{"0.0.0.0:8080", "true", true, true},
		{"127.0.0.1:8080", "false", false, false},
	} {
		c := &Config{Addr: tc.addr, JudgeAllowLoopback: tc.loopback, JudgeAllowPrivate: tc.private}
		p, err := c.Egress(sim)
		if err != nil {
			t.Fatal(err)
		}
		if p.AllowLoopback != tc.wantLoopback || p.AllowPrivate != tc.private {
			t.Errorf("%s loopback=%q: policy %+v", tc.addr, tc.loopback, p)
		}
		if err := p.Check(netip.MustParseAddrPort("127.0.0.1:41234")); err != nil {
			t.Errorf("%s: the simulated judge is refused: %v", tc.addr, err)
		}
		if err := p.Check(netip.MustParseAddrPort("127.0.0.1:11434")); (err == nil) != tc.wantLoopback {
			t.Errorf("%s: another loopback port: %v, want allowed=%v", tc.addr, err, tc.wantLoopback)
		}
	}
	if _, err := (&Config{Addr: ":1", JudgeAllowLoopback: "yes"}).Egress(sim); err == nil {
		t.Error("a malformed loopback setting was accepted")
	}
}

// TestMaxUploadRows: the upload row cap defaults to the importer's and can
// be raised by environment or flag (the flag wins), so a team can accept a
// million-row file.
func TestMaxUploadRows(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		want int
	}{
		{"", nil, dataimport.DefaultMaxRows},
		{"1000000", nil, 1000000},
		{"1000000", []string{"--max-upload-rows", "250000"}, 250000},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		c := bindConfig(fs, func(k string) string {
			if k == "BATCHEVAL_MAX_UPLOAD_ROWS" {
				return tc.env
			}
			return ""
		}, true, true)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if c.MaxUploadRows != tc.want {
			t.Errorf("env %q args %v: MaxUploadRows = %d, want %d", tc.env, tc.args, c.MaxUploadRows, tc.want)
		}
	}
}

// TestParkAfter: serve and worker park an idle worker after a minute
// unless told otherwise (--park-after or BATCHEVAL_PARK_AFTER, the flag
// winning; 0 never parks), and the setting
// reaches the runner; headless commands have no such flag.
func TestParkAfter(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		env  string
		args []string
		want time.Duration
		bad  bool // the flag does not exist for this command
	}{
		{cmd: "serve", want: time.Minute},
		{cmd: "worker", want: time.Minute},
		{cmd: "serve", env: "0", want: 0},
		{cmd: "worker", env: "30s", want: 30 * time.Second},
		{cmd: "worker", env: "30s", args: []string{"--park-after", "2m"}, want: 2 * time.Minute},
		{cmd: "serve", args: []string{"--park-after=0"}, want: 0},
		{cmd: "run", args: []string{"--park-after", "1m"}, bad: true},
	} {
		fs, c := newCommand(tc.cmd, func(k string) string {
			if k == "BATCHEVAL_PARK_AFTER" {
				return tc.env
			}
			return ""
		}, io.Discard)
		err := fs.Parse(tc.args)
		if tc.bad {
			if err == nil {
				t.Errorf("%s %v: accepted --park-after", tc.cmd, tc.args)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %v: %v", tc.cmd, tc.args, err)
		}
		rc, err := c.runnerConfig()
		if err != nil {
			t.Fatalf("%s %v: %v", tc.cmd, tc.args, err)
		}
		if c.ParkAfter != tc.want || rc.IdleAfter != tc.want {
			t.Errorf("%s env %q args %v: ParkAfter %s, runner IdleAfter %s; want %s",
				tc.cmd, tc.env, tc.args, c.ParkAfter, rc.IdleAfter, tc.want)
		}
	}
}

// TestRescueAfter: the webhook rescue time (runner.Config.RescueAfter) is
// a setting of every command that works runs, --rescue-after or
// BATCHEVAL_RESCUE_AFTER (the flag winning), 2 minutes by default, and it
// reaches the runner. A value that is no duration, not positive, or
// shorter than a delivery attempt may last is refused with what to write,
// from the flag when parsed and from the variable before the runner is
// made (unless the flag replaces it); commands that work no runs have no
// such flag.
func TestRescueAfter(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		env  string
		args []string
		want time.Duration
		// bad is a part of the error; "has no flag" when the command
		// has no such flag.
		bad string
	}{
		{cmd: "serve", want: runner.DefaultRescueAfter},
		{cmd: "worker", env: "5m", want: 5 * time.Minute},
		{cmd: "run", env: "5m", args: []string{"--rescue-after", "90s"}, want: 90 * time.Second},
		{cmd: "resume", args: []string{"--rescue-after=1h"}, want: time.Hour},
		{cmd: "worker", args: []string{"--rescue-after", "soon"}, bad: `--rescue-after="soon" cannot be read: write a duration with its unit, e.g. 2m (the default)`},
		{cmd: "worker", args: []string{"--rescue-after", "0"}, bad: "not a positive duration"},
		{cmd: "serve", args: []string{"--rescue-after", "5s"}, bad: "shorter than a webhook delivery attempt may last"},
		{cmd: "worker", env: "-1m", bad: "BATCHEVAL_RESCUE_AFTER=\"-1m\": -1m is not a positive duration"},
		{cmd: "serve", env: "2 minutes", bad: "BATCHEVAL_RESCUE_AFTER=\"2 minutes\""},
		{cmd: "worker", env: "2 minutes", args: []string{"--rescue-after", "3m"}, want: 3 * time.Minute},
		{cmd: "migrate", args: []string{"--rescue-after", "3m"}, bad: "batcheval migrate has no flag --rescue-after"},
	} {
		name := fmt.Sprintf("%s env %q args %v", tc.cmd, tc.env, tc.args)
		fs, c := newCommand(tc.cmd, func(k string) string {
			if k == "BATCHEVAL_RESCUE_AFTER" {
				return tc.env
			}
			return ""
		}, io.Discard)
		err := parseFlags(fs, tc.args) // as every command parses its flags
		var rc runner.Config
		if err == nil {
			rc, err = c.runnerConfig()
		}
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%s: error %v, want one saying %q", name, err, tc.bad)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if rc.RescueAfter != tc.want {
			t.Errorf("%s: runner RescueAfter %s, want %s", name, rc.RescueAfter, tc.want)
		}
	}
}

// TestPageConcurrency: serve takes the page gate's size from the flag or
// BATCHEVAL_PAGE_CONCURRENCY (0, the default, means two per core).
func TestPageConcurrency(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
		want int
	}{
		{want: 0},
		{env: "6", want: 6},
		{env: "6", args: []string{"--page-concurrency", "-1"}, want: -1},
	} {
		fs, c := newCommand("serve", func(k string) string {
			if k == "BATCHEVAL_PAGE_CONCURRENCY" {
				return tc.env
			}
			return ""
		}, io.Discard)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("serve %v: %v", tc.args, err)
		}
		if c.PageConcurrency != tc.want {
			t.Errorf("env %q args %v: PageConcurrency %d, want %d", tc.env, tc.args, c.PageConcurrency, tc.want)
		}
	}
}

// TestMetricsBearer: the metrics token comes from BATCHEVAL_METRICS_TOKEN
// or from the file --metrics-token-file (or its variable) names, trimmed;
// both at once, a missing file or an empty one are refused with the way out.
func TestMetricsBearer(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "metrics.token")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.token")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		cmd     string
		env     map[string]string
		args    []string
		want    string
		wantErr string
	}{
		{name: "none", cmd: "serve"},
		{name: "env", cmd: "serve", env: map[string]string{"BATCHEVAL_METRICS_TOKEN": "from-env"}, want: "from-env"},
		{name: "flag file", cmd: "worker", args: []string{"--metrics-token-file", file}, want: "from-file"},
		{name: "env file", cmd: "worker", env: map[string]string{"BATCHEVAL_METRICS_TOKEN_FILE": file}, want: "from-file"},
		{name: "both", cmd: "serve", env: map[string]string{"BATCHEVAL_METRICS_TOKEN": "x"}, args: []string{"--metrics-token-file", file}, wantErr: "not both"},
		{name: "missing file", cmd: "serve", args: []string{"--metrics-token-file", filepath.Join(dir, "nope")}, wantErr: "metrics token file"},
		{name: "empty file", cmd: "serve", args: []string{"--metrics-token-file", empty}, wantErr: "is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, c := newCommand(tc.cmd, func(k string) string { return tc.env[k] }, io.Discard)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := c.MetricsBearer()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestJudgeNetworkPolicyIsTheSameForEveryCommand: every command that calls
// a judge (serve, worker, run, resume) reads the judge network policy from
// the same flags and variables, safe by default: private networks off,
// loopback on only while BATCHEVAL_ADDR is loopback (the default, so Ollama
// on the same laptop works). `run` ignored BATCHEVAL_JUDGE_ALLOW_PRIVATE
// and BATCHEVAL_JUDGE_ALLOW_LOOPBACK and had no flags for them, so a judge
// on the local network could not be allowed; resume had none either.
func TestJudgeNetworkPolicyIsTheSameForEveryCommand(t *testing.T) {
	private, loopback := netip.MustParseAddrPort("192.168.1.20:8000"), netip.MustParseAddrPort("127.0.0.1:11434")
	for _, cmd := range []string{"serve", "worker", "run", "resume"} {
		for _, tc := range []struct {
			name                     string
			env                      map[string]string
			args                     []string
			wantPrivate, wantLoopbck bool
		}{
			{name: "default", wantLoopbck: true},
			{name: "private from the environment", env: map[string]string{"BATCHEVAL_JUDGE_ALLOW_PRIVATE": "true"}, wantPrivate: true, wantLoopbck: true},
			{name: "private from the flag", args: []string{"--judge-allow-private"}, wantPrivate: true, wantLoopbck: true},
			{name: "the flag wins over the environment", env: map[string]string{"BATCHEVAL_JUDGE_ALLOW_PRIVATE": "true"}, args: []string{"--judge-allow-private=false"}, wantLoopbck: true},
			{name: "loopback off from the environment", env: map[string]string{"BATCHEVAL_JUDGE_ALLOW_LOOPBACK": "false"}},
			{name: "loopback off from the flag", args: []string{"--judge-allow-loopback=false"}},
			{name: "not local mode", env: map[string]string{"BATCHEVAL_ADDR": "0.0.0.0:8080"}},
			{name: "not local mode, loopback asked for", env: map[string]string{"BATCHEVAL_ADDR": "0.0.0.0:8080", "BATCHEVAL_JUDGE_ALLOW_LOOPBACK": "true"}, wantLoopbck: true},
		} {
			fs, c := newCommand(cmd, func(k string) string { return tc.env[k] }, io.Discard)
			if err := c.parse(fs, tc.args); err != nil {
				t.Errorf("%s, %s: %v", cmd, tc.name, err)
				continue
			}
			p, err := c.Egress("")
			if err != nil {
				t.Errorf("%s, %s: %v", cmd, tc.name, err)
				continue
			}
			if err := p.Check(private); (err == nil) != tc.wantPrivate {
				t.Errorf("%s, %s: a judge on %s: %v, want allowed=%v", cmd, tc.name, private, err, tc.wantPrivate)
			}
			if err := p.Check(loopback); (err == nil) != tc.wantLoopbck {
				t.Errorf("%s, %s: a judge on %s: %v, want allowed=%v", cmd, tc.name, loopback, err, tc.wantLoopbck)
			}
			// A refusal says how to allow it, by variable and flag.
			if err := p.Check(private); err != nil && !strings.Contains(err.Error(), "BATCHEVAL_JUDGE_ALLOW_PRIVATE or --judge-allow-private") {
				t.Errorf("%s, %s: refusal %q does not say how to allow it", cmd, tc.name, err)
			}
		}
		// A loopback allowance that is no boolean is refused at start.
		fs, c := newCommand(cmd, func(k string) string { return map[string]string{"BATCHEVAL_JUDGE_ALLOW_LOOPBACK": "yes"}[k] }, io.Discard)
		if err := c.parse(fs, nil); err == nil || !strings.Contains(err.Error(), `BATCHEVAL_JUDGE_ALLOW_LOOPBACK="yes" cannot be used`) {
			t.Errorf("%s: BATCHEVAL_JUDGE_ALLOW_LOOPBACK=yes: %v, want it refused", cmd, err)
		}
	}
}

// TestDatabaseURLMustBePostgres: a DATABASE_URL (or --database-url) that
// is not a postgres:// or postgresql:// URL is refused before anything
// opens, naming the setting and what to write, without quoting the value
// (it may hold a password). It was taken for a SQLite file's path: a typo
// or a key=value connection string made a new, empty SQLite database named
// after it, and the command ran on that in silence.
func TestDatabaseURLMustBePostgres(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		name, env string
		args      []string
		want      string // in the error; "" for none of this test's refusals
	}{
		{"a word", "notaurl", nil, "DATABASE_URL is not a URL, and the database it names must be PostgreSQL: write postgres://"},
		{"a misspelt scheme", "postgress://batcheval:s3cret@db:5432/batcheval", nil, "DATABASE_URL starts with postgress://"},
		{"key=value", "host=db user=batcheval password=s3cret dbname=batcheval", nil, "DATABASE_URL is not a URL"},
		{"another database", "mysql://root:s3cret@db/batcheval", nil, "DATABASE_URL starts with mysql://"},
		{"the flag", "", []string{"--database-url", "sqlite://data/s3cret.db"}, "--database-url starts with sqlite://"},
		{"the flag over a good variable", "postgres://u@127.0.0.1:1/db", []string{"--database-url=file.db"}, "--database-url is not a URL"},
		{"PostgreSQL, unreachable", "postgresql://u:s3cret@127.0.0.1:1/db?connect_timeout=2", nil, ""},
		{"PostgreSQL with spaces around", " postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=2 ", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"DATABASE_URL": tc.env, "BATCHEVAL_DB": filepath.Join(dir, "sqlite.db"), "BATCHEVAL_LOG_LEVEL": "error"}
			var out, errOut strings.Builder
			err := run(context.Background(), append([]string{"migrate"}, tc.args...), func(k string) string { return env[k] }, &out, &errOut)
			if err == nil {
				t.Fatal("migrate ran")
			}
			if tc.want == "" {
				// Our refusal is not this one's: PostgreSQL was tried.
				if strings.Contains(err.Error(), "must be PostgreSQL") || !strings.Contains(err.Error(), "postgres") {
					t.Errorf("err %v, want a failed PostgreSQL connection", err)
				}
			} else if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v\nwant %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error shows the password: %v", err)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				t.Errorf("a file was made: %s", e.Name())
			}
		})
	}
}

// TestDatabaseShownHidesThePassword: the database a message names (resume
// of an unknown run) is the SQLite file, or PostgreSQL's database and
// host, never the URL's password.
func TestDatabaseShownHidesThePassword(t *testing.T) {
	for _, tc := range []struct{ url, path, want string }{
		{"", "data/b.db", "the SQLite file data/b.db (--db or BATCHEVAL_DB; DATABASE_URL for PostgreSQL)"},
		{"postgres://batcheval:s3cret@db.internal:5432/evals?sslmode=disable", "", "the PostgreSQL database evals on db.internal:5432 (DATABASE_URL)"},
	} {
		c := &Config{DatabaseURL: tc.url, SQLitePath: tc.path}
		if got := c.databaseShown(); got != tc.want || strings.Contains(got, "s3cret") {
			t.Errorf("databaseShown(%q, %q) = %q, want %q", tc.url, tc.path, got, tc.want)
		}
	}
}
