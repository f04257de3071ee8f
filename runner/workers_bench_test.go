package runner

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// Several workers on one PostgreSQL database, each a process of its own as
// `batcheval worker` is: the test binary started again with
// workerChildEnv set runs a runner (Work: true) on the database named by
// its value until its stdin closes, then stops gracefully. The fake judge
// lives in the parent, which counts the calls it has in flight at once.

// workerChildEnv makes the test binary a worker process: its value is the
// database URL; workerMaxRunsEnv is the worker's MaxRuns.
const (
	workerChildEnv   = "BATCHEVAL_TEST_WORKER_DSN"
	workerMaxRunsEnv = "BATCHEVAL_TEST_WORKER_MAX_RUNS"
)

func init() {
	dsn := os.Getenv(workerChildEnv)
	if dsn == "" {
		return
	}
	os.Exit(serveTestWorker(dsn))
}

// serveTestWorker is a worker process with the production settings of
// `batcheval worker` (its poll interval, lease and judge retries): it prints
// "ready" once its runner has started and stops when stdin closes or on
// SIGTERM.
func serveTestWorker(dsn string) int {
	ctx := context.Background()
	db, err := models.Open(ctx, dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker: open database:", err)
		return 1
	}
	defer db.Close()
	maxRuns, _ := strconv.Atoi(os.Getenv(workerMaxRunsEnv))
	r, err := New(Config{DB: db, Log: testLog(), Work: true, MaxRuns: maxRuns})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	if err := r.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	fmt.Println("ready")
	stop := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stop) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
	case <-sig:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Stop(sctx); err != nil {
		fmt.Fprintln(os.Stderr, "worker: stop:", err)
		return 1
	}
	return 0
}

// startWorkerProcs starts n worker processes on the database at dsn, each
// executing up to maxRuns runs at once, and returns when every one has
// started its runner. They are stopped (gracefully) when the test ends,
// or earlier by calling the returned function.
func startWorkerProcs(tb testing.TB, dsn string, n, maxRuns int) (stop func()) {
	tb.Helper()
	ready := make(chan error, n)
	var stops []func()
	for range n {
		cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
		cmd.Env = append(os.Environ(), workerChildEnv+"="+dsn, workerMaxRunsEnv+"="+strconv.Itoa(maxRuns))
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			tb.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			tb.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		stops = append(stops, sync.OnceFunc(func() {
			_ = stdin.Close()
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		}))
		go func() {
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err == nil && strings.TrimSpace(line) != "ready" {
				err = fmt.Errorf("worker said %q", line)
			}
			ready <- err
			_, _ = io.Copy(io.Discard, stdout)
		}()
	}
	for range n {
		select {
		case err := <-ready:
			if err != nil {
				tb.Fatalf("worker process did not start: %v", err)
			}
		case <-time.After(30 * time.Second):
			tb.Fatal("worker process not ready after 30 s")
		}
	}
	stop = func() {
		var wg sync.WaitGroup
		for _, s := range stops {
			wg.Go(s)
		}
		wg.Wait()
	}
	tb.Cleanup(stop)
	return stop
}

// countingJudge is the simulated judge behind a fixed latency, counting
// the calls it has in flight and the most it ever had at once.
type countingJudge struct {
	srv            *httptest.Server
	inFlight, peak atomic.Int64
	calls          atomic.Int64
}

func newCountingJudge(tb testing.TB, latency time.Duration) *countingJudge {
	tb.Helper()
	cj := &countingJudge{}
	inner := simjudge.NewHandler(simjudge.Options{Seed: 5})
	cj.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := cj.inFlight.Add(1)
		defer cj.inFlight.Add(-1)
		for {
			p := cj.peak.Load()
			if n <= p || cj.peak.CompareAndSwap(p, n) {
				break
			}
		}
		cj.calls.Add(1)
		time.Sleep(latency)
		inner.ServeHTTP(w, r)
	}))
	tb.Cleanup(cj.srv.Close)
	return cj
}

func (cj *countingJudge) URL() string { return cj.srv.URL + "/v1" }

// workersLab is a fresh PostgreSQL database holding the demo project, its
// URL (for worker processes) and an insert-only runner to launch runs.
type workersLab struct {
	db      *models.DB
	dsn     string
	ws      models.Workspace
	project models.Project
	dataset models.Dataset
	rubric  evaluator.Rubric
	jobs    *Runner
}

func newWorkersLab(tb testing.TB) *workersLab {
	tb.Helper()
	ctx := context.Background()
	db := dbtest.Open(tb, models.Postgres, migrateJobs)
	var name string
	if err := db.SQL.QueryRowContext(ctx, "SELECT current_database()").Scan(&name); err != nil {
		tb.Fatal(err)
	}
	u, err := url.Parse(os.Getenv("TEST_DATABASE_URL"))
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := demo.Seed(ctx, db, ws)
	if err != nil {
		tb.Fatal(err)
	}
	dss, err := db.ListDatasets(ctx, ws.ID, p.ID)
	if err != nil || len(dss) != 1 {
		tb.Fatalf("demo datasets: %v (%d)", err, len(dss))
	}
	rub, err := demo.Rubric()
	if err != nil {
		tb.Fatal(err)
	}
	rub.Criteria = rub.Criteria[:1]
	jobs, err := New(Config{DB: db, Log: testLog()})
	if err != nil {
		tb.Fatal(err)
	}
	return &workersLab{db: db, dsn: u.String(), ws: ws, project: p, dataset: dss[0], rubric: rub, jobs: jobs}
}

// limitedJudge stores a judge on url whose calls, across every worker,
// are at most limit at once; it returns the judge's id.
func (l *workersLab) limitedJudge(tb testing.TB, url string, limit int) int64 {
	tb.Helper()
	ctx := context.Background()
	j := models.Judge{WorkspaceID: l.ws.ID, Name: "shared key", BaseURL: url, Model: "fake-judge", MaxConcurrency: 8}
	if err := l.db.SaveJudge(ctx, &j); err != nil {
		tb.Fatal(err)
	}
	if err := l.db.SetJudgeLimits(ctx, models.JudgeLimits{JudgeID: j.ID, MaxConcurrency: limit}); err != nil {
		tb.Fatal(err)
	}
	return j.ID
}

// launchRuns queues n BatchEval runs of the demo dataset (30 samples,
// batches of 10, one criterion, answer cache off) of the given rounds and concurrency on the
// judge at url (limited by judgeID when it is not 0).
func (l *workersLab) launchRuns(tb testing.TB, n int, url string, judgeID int64, rounds, concurrency int) []int64 {
	tb.Helper()
	ids := make([]int64, 0, n)
	for k := range n {
		s := evaluator.DefaultSettings()
		s.Rounds, s.BatchSize = rounds, 10
		// Every run calls the judge: identical runs would otherwise be
		// answered from the workspace's answer cache.
		s.NoCache = true
		run := models.Run{WorkspaceID: l.ws.ID, ProjectID: l.project.ID, DatasetID: l.dataset.ID,
			Name: fmt.Sprintf("worker run %d", k), Method: models.MethodBatchEval, Settings: s, RubricSnapshot: l.rubric,
			JudgeSnapshot: models.JudgeSnapshot{Name: "fake", BaseURL: url, Model: "fake-judge",
				MaxConcurrency: concurrency, TimeoutSeconds: 30}}
		if judgeID != 0 {
			run.JudgeID = &judgeID
		}
		if err := l.jobs.Launch(context.Background(), &run); err != nil {
			tb.Fatalf("launch: %v", err)
		}
		ids = append(ids, run.ID)
	}
	return ids
}

// waitAll waits until every run of ids has finished, fails the test unless
// all succeeded, and returns when the last one finished (as stored).
func (l *workersLab) waitAll(tb testing.TB, ids []int64, within time.Duration) time.Time {
	tb.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(within)
	for {
		var done int64
		if err := l.db.Gorm.WithContext(ctx).Model(&models.Run{}).
			Where("id IN ? AND status IN ?", ids, []string{models.RunSucceeded, models.RunFailed, models.RunCancelled}).
			Count(&done).Error; err != nil {
			tb.Fatal(err)
		}
		if int(done) == len(ids) {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d of %d runs finished after %s", done, len(ids), within)
		}
		time.Sleep(25 * time.Millisecond)
	}
	var runs []models.Run
	if err := l.db.Gorm.WithContext(ctx).Where("id IN ?", ids).Find(&runs).Error; err != nil {
		tb.Fatal(err)
	}
	var last time.Time
	for _, r := range runs {
		if r.Status != models.RunSucceeded {
			tb.Fatalf("run %d ended %s: %s", r.ID, r.Status, r.Error)
		}
		if r.FinishedAt != nil && r.FinishedAt.After(last) {
			last = *r.FinishedAt
		}
	}
	return last
}

// workersOf is how many distinct worker processes (River clients) worked
// the jobs of the runs ids.
func (l *workersLab) workersOf(tb testing.TB, ids []int64) int {
	tb.Helper()
	var n int
	err := l.db.SQL.QueryRowContext(context.Background(), `SELECT count(DISTINCT w) FROM river_job j, unnest(j.attempted_by) AS w
		WHERE j.id IN (SELECT job_id FROM runs WHERE id = ANY($1))`, ids).Scan(&n)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestSharedJudgeLimitAcrossProcesses: four worker processes, each with its
// own runner and connection pool as separate `batcheval worker`s have, run
// eight runs at concurrency 8 on one judge limited to 3 calls at once: the
// judge never has more than 3 in flight, and every slot is given back.
// (TestSharedJudgeLimit shows the same with runners inside one process.)
func TestSharedJudgeLimitAcrossProcesses(t *testing.T) {
	t.Parallel()
	l := newWorkersLab(t)
	cj := newCountingJudge(t, 20*time.Millisecond)
	const limit = 3
	judgeID := l.limitedJudge(t, cj.URL(), limit)
	startWorkerProcs(t, l.dsn, 4, 2)
	ids := l.launchRuns(t, 8, cj.URL(), judgeID, 2, 8)
	l.waitAll(t, ids, 2*time.Minute)
	if p := cj.peak.Load(); p > limit || p < 2 {
		t.Errorf("the judge had up to %d calls in flight; want at most the shared limit %d (and more than 1)", p, limit)
	}
	if want := int64(len(ids) * 2 * 3); cj.calls.Load() < want {
		t.Errorf("the judge saw %d calls, want at least %d", cj.calls.Load(), want)
	}
	workers := l.workersOf(t, ids)
	t.Logf("peak %d calls in flight; runs worked by %d processes", cj.peak.Load(), workers)
	if workers < 2 {
		t.Errorf("the runs were worked by %d process(es); the test needs several", workers)
	}
	if n, err := l.db.JudgeSlotsHeld(context.Background(), judgeID, time.Now().UnixMilli()); err != nil || n != 0 {
		t.Errorf("%d slots still held after every run ended (%v)", n, err)
	}
}

// Workers benchmark settings: 40 queued runs of 30 samples, 2 rounds of 3
// batches; each worker executes 2 runs at once at concurrency 2, so one
// worker keeps at most 4 calls in flight (the judge's per-worker
// concurrency); 40 runs fill 1 worker's 2 slots 20 times and 4 workers' 8
// slots 5 times, so the ideal ratio is exactly 4.
const (
	workersRuns       = 40
	workersMaxRuns    = 2
	workersRunConc    = 2
	workersRounds     = 2
	workersLatency    = 100 * time.Millisecond
	workersSharedCap  = 3
	workersTimeLimit  = 5 * time.Minute
	workersProcsScale = 4
)

// BenchmarkWorkers: 40 queued runs on PostgreSQL processed by 1 worker
// process and by 4, against a judge with a fixed latency and a concurrency
// per worker: "x4/x1" is the wall time of 1 worker over that of 4 (target
// >= 3.5); then the same 40 runs on 4 workers sharing one judge limited to
// 3 calls at once through the database: "shared-peak" is the most calls the
// judge ever had in flight (must not exceed 3).
func BenchmarkWorkers(b *testing.B) {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		b.Skip("needs PostgreSQL: TEST_DATABASE_URL is not set (run through ./scripts/with-postgres.sh)")
	}
	for range b.N {
		one, onePeak := timeWorkers(b, 1, 0)
		four, fourPeak := timeWorkers(b, workersProcsScale, 0)
		shared, sharedPeak := timeWorkers(b, workersProcsScale, workersSharedCap)
		if perWorker := int64(workersMaxRuns * workersRunConc); onePeak > perWorker || fourPeak > workersProcsScale*perWorker {
			b.Errorf("judge peaks %d (1 worker) and %d (4 workers); each worker allows %d", onePeak, fourPeak, perWorker)
		}
		if sharedPeak > workersSharedCap {
			b.Errorf("with the shared limit the judge had %d calls in flight; the limit is %d", sharedPeak, workersSharedCap)
		}
		b.ReportMetric(float64(one)/float64(four), "x4/x1")
		b.ReportMetric(float64(one.Milliseconds()), "1w-ms")
		b.ReportMetric(float64(four.Milliseconds()), "4w-ms")
		b.ReportMetric(float64(shared.Milliseconds()), "shared-ms")
		b.ReportMetric(float64(sharedPeak), "shared-peak")
		b.ReportMetric(0, "ns/op")
	}
}

// timeWorkers starts procs worker processes on a fresh database, queues
// the 40 runs and returns the time from the first launch to the last run's
// end, and the most calls the judge had in flight at once. With limit > 0
// the runs' judge is limited to that many calls at once across every
// worker.
func timeWorkers(b *testing.B, procs, limit int) (time.Duration, int64) {
	b.Helper()
	l := newWorkersLab(b)
	cj := newCountingJudge(b, workersLatency)
	var judgeID int64
	if limit > 0 {
		judgeID = l.limitedJudge(b, cj.URL(), limit)
	}
	stop := startWorkerProcs(b, l.dsn, procs, workersMaxRuns)
	defer stop()
	start := time.Now()
	ids := l.launchRuns(b, workersRuns, cj.URL(), judgeID, workersRounds, workersRunConc)
	took := l.waitAll(b, ids, workersTimeLimit).Sub(start)
	b.Logf("%d worker(s), shared limit %d: %d runs in %s, judge peak %d calls in flight, %d calls",
		procs, limit, len(ids), took.Round(time.Millisecond), cj.peak.Load(), cj.calls.Load())
	return took, cj.peak.Load()
}
