package main

// Outage scenarios seen from the operator's side: two workers killed one
// after the other, the judge's address refusing connections for longer
// than the client's retries, and the judge answering in the broken ways
// real endpoints do. Each counts what the fake judge received and compares
// it with what the run stored and counts.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// queueRun starts `batcheval run` and interrupts it once a batch is stored,
// leaving its run queued for the workers; it returns the run's id.
func queueRun(t *testing.T, db *models.DB, dsn, judgeURL, name string) int64 {
	t.Helper()
	before := map[int64]bool{}
	var runs []models.Run
	_ = db.Gorm.Find(&runs).Error // before the first migration: no table yet
	for _, r := range runs {
		before[r.ID] = true
	}
	args := runArgs(t, judgeURL)
	// Each run its own texts, so the judge tells their batches apart (the
	// same data and seed would make the same prompts).
	data := args[2]
	b, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.ReplaceAll(string(b), "Sample ", name+" sample "))
	if err := os.WriteFile(data, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cli := start(t, name, dsn, args...)
	var id int64
	deadline := time.Now().Add(60 * time.Second)
	for id == 0 {
		runs = nil
		_ = db.Gorm.Order("id").Find(&runs).Error
		for _, r := range runs {
			if !before[r.ID] && r.BatchesDone >= 1 {
				id = r.ID
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s stored no batch within a minute", name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cli.signal(syscall.SIGINT)
	_ = cli.wait(30 * time.Second)
	return id
}

// runByID waits for run id to meet cond.
func runByID(t *testing.T, db *models.DB, id int64, within time.Duration, cond func(models.Run) bool) models.Run {
	t.Helper()
	deadline := time.Now().Add(within)
	var run models.Run
	for {
		if err := db.Gorm.First(&run, id).Error; err == nil && cond(run) {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s run %d is %s with %d/%d batches (error %q)", within, id, run.Status, run.BatchesDone, run.BatchesTotal, run.Error)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// inFlight counts, per worker tag, the judge requests whose answer has not
// been written yet.
type inFlight struct {
	mu sync.Mutex
	n  map[string]int
}

func (f *inFlight) add(worker string, d int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == nil {
		f.n = map[string]int{}
	}
	f.n[worker] += d
}

func (f *inFlight) of(worker string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[worker]
}

// waitInFlight waits until worker has a call out at the judge.
func waitInFlight(t *testing.T, f *inFlight, worker string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for f.of(worker) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("worker %s never had a call in flight", worker)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFaultTwoWorkersKilled: two runs shared by two workers on PostgreSQL;
// worker A is killed (SIGKILL) with calls in flight, then worker B, and a
// third worker finishes both runs. Only calls that were out at a kill are
// asked again; every run counts exactly the calls whose answers it stored.
func TestFaultTwoWorkersKilled(t *testing.T) {
	binary(t)
	dsn := dbtest.DSN(t, models.Postgres)
	var flight inFlight
	var fj *faultJudge
	fj = newFaultJudge(t, func(w http.ResponseWriter, r *http.Request, n int, rq request) bool {
		flight.add(rq.worker, 1)
		defer flight.add(rq.worker, -1)
		fj.inner.ServeHTTP(w, r)
		return true
	})
	db := openDSN(t, dsn)
	ids := []int64{queueRun(t, db, dsn, fj.URL(), "run 1"), queueRun(t, db, dsn, fj.URL(), "run 2")}

	one := func(name string) *proc {
		cmd := start(t, name, dsn, "worker")
		return cmd
	}
	t.Setenv("BATCHEVAL_MAX_RUNS", "1") // each worker takes one run
	a, b := one("worker A"), one("worker B")
	tagA, tagB := a.tag(), b.tag()
	waitInFlight(t, &flight, tagA)
	waitInFlight(t, &flight, tagB)
	sentA := len(fj.requests(false))
	outA := flight.of(tagA)
	a.signal(syscall.SIGKILL)
	_ = a.wait(10 * time.Second)
	// B carries on with its run, and takes A's over once A's lease lapses.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !sentAfter(fj, tagB, sentA) {
		time.Sleep(20 * time.Millisecond)
	}
	waitInFlight(t, &flight, tagB)
	outB := flight.of(tagB)
	b.signal(syscall.SIGKILL)
	_ = b.wait(10 * time.Second)
	c := one("worker C")
	for _, id := range ids {
		run := runByID(t, db, id, 90*time.Second, models.Run.Finished)
		wantComplete(t, run)
	}
	c.signal(syscall.SIGTERM)
	_ = c.wait(30 * time.Second)

	twice := 0
	for key, n := range fj.batchRequests() {
		if n > 2 {
			t.Errorf("batch %s requested %d times", key, n)
		}
		if n == 2 {
			twice++
		}
	}
	t.Logf("in flight at the kills: A %d, B %d; batches asked twice: %d; requests %d", outA, outB, twice, len(fj.requests(false)))
	// At most the concurrency (2) of each killed worker's run was out.
	if twice > 4 {
		t.Errorf("%d batches were asked twice, but at most 4 calls were out at the kills: a stored answer was asked again", twice)
	}
	var calls int
	for _, id := range ids {
		var run models.Run
		db.Gorm.First(&run, id)
		calls += run.Calls
	}
	// The two `batcheval run`s' first batches and everything after: every
	// request but those that died with a worker is one of the runs' calls.
	if got := len(fj.requests(false)); calls > got || got-calls > 4 {
		t.Errorf("the runs count %d calls; the judge saw %d requests, and at most 4 died with the killed workers", calls, got)
	}
}

// sentAfter reports whether worker sent a request after the first n.
func sentAfter(fj *faultJudge, worker string, n int) bool {
	reqs := fj.requests(false)
	for _, r := range reqs[min(n, len(reqs)):] {
		if r.worker == worker {
			return true
		}
	}
	return false
}

// refusingProxy forwards TCP connections to target while up; while down,
// its port refuses connections (nothing listens on it).
type refusingProxy struct {
	t      *testing.T
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
}

func newRefusingProxy(t *testing.T, target string) *refusingProxy {
	p := &refusingProxy{t: t, target: target}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = ln.Addr().String()
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *refusingProxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			if p.conns == nil {
				p.conns = map[net.Conn]bool{}
			}
			p.conns[c] = true
			p.mu.Unlock()
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", p.target)
				if err != nil {
					return
				}
				defer u.Close()
				go io.Copy(u, c)
				io.Copy(c, u)
			}()
		}
	}()
}

func (p *refusingProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	// Connections kept alive die with the judge too.
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *refusingProxy) up() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("listen again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// TestFaultJudgeRefusesConnections: the judge's address refuses
// connections for longer than the client's retries; the run waits for the
// judge saying so, probes, and goes on when it is back, with every batch
// asked exactly once.
func TestFaultJudgeRefusesConnections(t *testing.T) {
	eachDialect(t, func(t *testing.T, dsn string) {
		fj := newFaultJudge(t, nil)
		px := newRefusingProxy(t, strings.TrimPrefix(fj.srv.URL, "http://"))
		db := openDSN(t, dsn)
		cli := start(t, "run", dsn, runArgs(t, "http://"+px.addr+"/v1")...)
		theRun(t, db, 60*time.Second, func(r models.Run) bool { return r.BatchesDone >= 3 })
		px.down()
		waiting := theRun(t, db, 20*time.Second, models.Run.WaitingForJudge)
		t.Logf("waiting error: %q", waiting.WaitingError)
		if !strings.Contains(strings.ToLower(waiting.WaitingError), "refused") {
			t.Errorf("waiting with error %q, want it to say the connection was refused", waiting.WaitingError)
		}
		time.Sleep(3 * time.Second) // well past the client's retries
		// The command says it waits for the judge, and why, rather than
		// print only the runner's warnings and seem to hang.
		if out := cli.out.String(); !strings.Contains(out, "waiting for the judge: ") || !strings.Contains(out, "Ctrl-C stops here; every answer received is kept") {
			t.Errorf("batcheval run does not say it waits for its unreachable judge; its output:\n%s", out)
		}
		mid := theRun(t, db, time.Second, func(models.Run) bool { return true })
		if mid.Finished() {
			t.Fatalf("the run ended while its judge was unreachable: %s (%q)", mid.Status, mid.Error)
		}
		px.up()
		if err := cli.wait(60 * time.Second); err != nil {
			t.Errorf("batcheval run through a refused judge: %v", err)
		}
		run := theRun(t, db, time.Second, models.Run.Finished)
		wantComplete(t, run)
		if out := cli.out.String(); !strings.Contains(out[strings.Index(out, "waiting for the judge: ")+1:], "the judge answers again: the run goes on.") {
			t.Errorf("batcheval run does not say the run went on once its judge answered; its output:\n%s", out)
		}
		// The calls out when the judge went down were cut with their
		// connections: those (at most the concurrency, 2) are asked again
		// and counted as retries; nothing else is.
		twice := 0
		for key, n := range fj.batchRequests() {
			if n > 2 {
				t.Errorf("batch %s requested %d times", key, n)
			}
			if n == 2 {
				twice++
			}
		}
		if got := len(fj.requests(false)); twice > 2 || run.Calls != got-twice || run.Retries < twice {
			t.Errorf("run counts %d calls and %d retries; the judge saw %d requests, %d batches twice (at most 2 cut by the outage)", run.Calls, run.Retries, got, twice)
		}
		t.Logf("run: calls %d, retries %d, probes %d", run.Calls, run.Retries, run.ProbeCalls)
	})
}

// TestFaultJudgeBrokenAnswers: the judge answers some requests the broken
// ways real endpoints do: 429 with Retry-After, 503 with Retry-After, a
// body that is not JSON, an empty body, HTTP 200 carrying an error object,
// and a body cut half-way (the connection dropped mid-answer). Each is
// retried; the run ends complete, every faulty request is one retry on
// the run, and no batch is asked again once answered.
func TestFaultJudgeBrokenAnswers(t *testing.T) {
	type fault struct {
		name  string
		write func(w http.ResponseWriter)
	}
	faults := []fault{
		{"429 Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"slow down","type":"rate_limit_exceeded"}}`)
		}},
		{"503 Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "upstream unavailable")
		}},
		{"garbage JSON", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"x","choices":[{"message":{"content":"Sample1: 3`)
		}},
		{"empty body", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
		}},
		{"200 with an error object", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"error":{"message":"The server had an error while processing your request","type":"server_error"}}`)
		}},
		{"body cut half-way", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "400")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Sample1: the`)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the connection drops mid-answer
		}},
	}
	eachDialect(t, func(t *testing.T, dsn string) {
		var mu sync.Mutex
		injected := map[string]int{}
		next := 0
		fj := newFaultJudge(t, func(w http.ResponseWriter, r *http.Request, n int, rq request) bool {
			// Every third batch request gets the next fault, once each.
			if rq.probe || rq.repair || n%3 != 2 {
				return false
			}
			mu.Lock()
			if next >= len(faults) {
				mu.Unlock()
				return false
			}
			f := faults[next]
			next++
			injected[f.name]++
			mu.Unlock()
			f.write(w)
			return true
		})
		db := openDSN(t, dsn)
		cli := start(t, "run", dsn, runArgs(t, fj.URL())...)
		if err := cli.wait(90 * time.Second); err != nil {
			t.Errorf("batcheval run on a judge answering badly: %v", err)
		}
		run := theRun(t, db, time.Second, models.Run.Finished)
		wantComplete(t, run)
		mu.Lock()
		defer mu.Unlock()
		if len(injected) != len(faults) {
			t.Errorf("injected %v, want each of the %d faults once", injected, len(faults))
		}
		sent := len(fj.requests(false))
		t.Logf("run: calls %d, retries %d; the judge saw %d requests; injected %v", run.Calls, run.Retries, sent, injected)
		if run.Calls+run.Retries != sent || run.Retries != len(faults) {
			t.Errorf("run counts %d calls + %d retries; the judge saw %d requests of which %d faulty", run.Calls, run.Retries, sent, len(faults))
		}
		if sent != faultBatches+len(faults) {
			t.Errorf("the judge saw %d requests for %d batches and %d faults: a batch was asked again after its answer", sent, faultBatches, len(faults))
		}
		var bs []models.RunBatch
		if err := db.Gorm.Where("run_id = ?", run.ID).Find(&bs).Error; err != nil {
			t.Fatal(err)
		}
		attempts := 0
		for _, b := range bs {
			attempts += b.Attempts
		}
		if attempts != sent {
			t.Errorf("batches record %d attempts, the judge saw %d requests", attempts, sent)
		}
	})
}

// ownPostgres is a PostgreSQL cluster of the test's own, which the test
// may stop and start: the shared one of scripts/with-postgres.sh serves
// the other tests at the same time. It is skipped without PostgreSQL's
// server binaries (as under TEST_DATABASE_URL pointing elsewhere), and
// fails under CI.
type ownPostgres struct {
	t     *testing.T
	pgctl []string // the pg_ctl command line, as the cluster's owner
	dir   string
	port  string
	dsn   string
}

func startOwnPostgres(t *testing.T) *ownPostgres {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("PostgreSQL's server binaries are missing (apt-get install postgresql)")
		}
		t.Skip("PostgreSQL's server binaries are missing")
	}
	bindir := filepath.Dir(bins[len(bins)-1])
	dir, err := os.MkdirTemp("", "batcheval-ownpg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var runas []string
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root: the cluster belongs to postgres.
		if out, err := exec.Command("chown", "postgres", dir).CombinedOutput(); err != nil {
			t.Skipf("chown to postgres: %v %s", err, out)
		}
		runas = []string{"runuser", "-u", "postgres", "--"}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := func(name string, args ...string) *exec.Cmd {
		all := append(append(append([]string{}, runas...), filepath.Join(bindir, name)), args...)
		return exec.Command(all[0], all[1:]...)
	}
	if out, err := cmd("initdb", "-D", dir+"/data", "-U", "postgres", "-A", "trust", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	p := &ownPostgres{t: t, dir: dir, port: port,
		pgctl: append(append([]string{}, runas...), filepath.Join(bindir, "pg_ctl"), "-D", dir+"/data", "-l", dir+"/log", "-w"),
		dsn:   "postgres://postgres@127.0.0.1:" + port + "/postgres?sslmode=disable"}
	p.ctl("start", "-o", "-p "+port+" -k "+dir+" -c listen_addresses=127.0.0.1 -c fsync=off")
	t.Cleanup(func() { _ = p.run("stop", "-m", "immediate") })
	return p
}

func (p *ownPostgres) run(args ...string) error {
	all := append(append([]string{}, p.pgctl...), args...)
	out, err := exec.Command(all[0], all[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pg_ctl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

func (p *ownPostgres) ctl(args ...string) {
	p.t.Helper()
	if err := p.run(args...); err != nil {
		p.t.Fatal(err)
	}
}

// TestFaultPostgresRestarted: PostgreSQL itself restarted (pg_ctl restart)
// while two workers run, then stopped for longer than the lease and
// started again. The workers reconnect and finish the run without exiting
// or hanging; only calls out at an outage may be asked again, and the run
// counts the calls whose answers it stored.
func TestFaultPostgresRestarted(t *testing.T) {
	binary(t)
	pg := startOwnPostgres(t)
	dsn := pg.dsn
	var flight inFlight
	var fj *faultJudge
	// Every request the judge saw, logged when the test fails: which
	// batch (its first sample), when, and from which worker.
	var seenMu sync.Mutex
	var seen []string
	fj = newFaultJudge(t, func(w http.ResponseWriter, r *http.Request, n int, rq request) bool {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		first := firstSampleRe.FindString(string(body))
		seenMu.Lock()
		seen = append(seen, fmt.Sprintf("%s %s %s worker=%s", rq.at.Format("15:04:05.000"), rq.key, first, rq.worker))
		seenMu.Unlock()
		flight.add("", 1)
		defer flight.add("", -1)
		fj.inner.ServeHTTP(w, r)
		return true
	})
	defer func() {
		if t.Failed() {
			seenMu.Lock()
			defer seenMu.Unlock()
			for _, s := range seen {
				t.Log("judge request", s)
			}
		}
	}()
	db := openDSN(t, dsn)
	id := queueRun(t, db, dsn, fj.URL(), "run")
	a := start(t, "worker A", dsn, "worker")
	b := start(t, "worker B", dsn, "worker")
	a.tag()
	b.tag()
	runByID(t, db, id, 30*time.Second, func(r models.Run) bool { return r.BatchesDone >= 4 })
	pg.ctl("restart", "-m", "fast", "-o", "-p "+pg.port+" -k "+pg.dir+" -c listen_addresses=127.0.0.1 -c fsync=off")
	t.Log("PostgreSQL restarted")
	after := runByID(t, db, id, 30*time.Second, func(r models.Run) bool { return r.BatchesDone >= 8 })
	if after.Finished() {
		t.Fatal("the run finished before the second outage; the test proves less")
	}
	// Stopped with calls out: their answers come back while it is down.
	waitInFlight(t, &flight, "")
	pg.ctl("stop", "-m", "fast")
	down := 2*faultLease + time.Second // past the lease: the worker stops sending
	time.Sleep(down)
	pg.ctl("start", "-o", "-p "+pg.port+" -k "+pg.dir+" -c listen_addresses=127.0.0.1 -c fsync=off")
	t.Logf("PostgreSQL was down for %s", down)
	run := runByID(t, db, id, 90*time.Second, models.Run.Finished)
	wantComplete(t, run)
	for _, p := range []*proc{a, b} {
		select {
		case <-p.done:
			t.Errorf("%s exited during the outages: %v", p.name, p.err)
		default:
		}
	}
	// Answers that were on their way at the outage are counted late, by
	// the worker that held them, once it can write again: stop the
	// workers (they store what they hold) before counting.
	a.signal(syscall.SIGTERM)
	b.signal(syscall.SIGTERM)
	if err := a.wait(30 * time.Second); err != nil {
		t.Errorf("worker A after SIGTERM: %v", err)
	}
	if err := b.wait(30 * time.Second); err != nil {
		t.Errorf("worker B after SIGTERM: %v", err)
	}
	run = runByID(t, db, id, time.Second, models.Run.Finished)
	twice := 0
	for key, n := range fj.batchRequests() {
		if n > 2 {
			t.Errorf("batch %s requested %d times", key, n)
		}
		if n == 2 {
			twice++
			t.Logf("batch %s requested twice", key)
		}
	}
	sent := len(fj.requests(false))
	t.Logf("run: calls %d, retries %d; the judge saw %d requests, %d batches twice", run.Calls, run.Retries, sent, twice)
	if run.Calls != sent {
		t.Errorf("run counts %d calls; the judge answered %d requests: a paid answer was not counted", run.Calls, sent)
		dumpRunLedger(t, db, id)
	}
}

// firstSampleRe finds a batch prompt's first sample, as queueRun names them.
var firstSampleRe = regexp.MustCompile(`run sample \d+`)

// dumpRunLedger logs a run's batches (their calls and paid call
// identities) and events, to tell which answer a miscount missed.
func dumpRunLedger(t *testing.T, db *models.DB, id int64) {
	t.Helper()
	var batches []models.RunBatch
	db.Gorm.Where("run_id = ?", id).Order("id").Find(&batches)
	for _, b := range batches {
		var paid *string
		db.Gorm.Raw("SELECT paid_calls FROM run_batches WHERE id = ?", b.ID).Scan(&paid)
		p := "NULL"
		if paid != nil {
			p = *paid
		}
		t.Logf("batch %d (round %d, index %d): %s, calls %d, attempts %d, paid_calls %q", b.ID, b.Round, b.BatchIndex, b.Status, b.Calls, b.Attempts, p)
	}
	events, _ := db.RunEvents(context.Background(), id)
	for _, e := range events {
		t.Logf("event %s %s by %s: %s", e.At.Format("15:04:05.000"), e.Kind, e.Worker, e.Message)
	}
}
