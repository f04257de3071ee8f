package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/batcheval/batcheval/internal/shareddata"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/internal/proccpu"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dataimport"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// The scheduling benchmarks run FED (125 dialogues) on 4 criteria, 5
// rounds, batches of 10: 13 batches per criterion and round, 52 per round,
// 260 calls. The judge is the simulated one behind a fixed latency, served
// by a child process (this test binary started again) so that its CPU is
// not counted as the runner's.

// fakeJudgeEnv makes the test binary serve the fake judge instead of
// running tests: its value is the latency and the slow latency
// ("20ms,100ms"); the child prints its base URL and serves until killed.
const fakeJudgeEnv = "BATCHEVAL_BENCH_FAKE_JUDGE"

func init() {
	spec := os.Getenv(fakeJudgeEnv)
	if spec == "" {
		return
	}
	lat, slowSpec, _ := strings.Cut(spec, ",")
	latency, _ := time.ParseDuration(lat)
	slow, _ := time.ParseDuration(slowSpec)
	serveFakeJudge(latency, slow)
	os.Exit(0)
}

// serveFakeJudge answers like the simulated judge after latency; the first
// request of each round (by its seed) takes slow instead, when set: one
// slow batch per round of the run.
func serveFakeJudge(latency, slow time.Duration) {
	inner := simjudge.NewHandler(simjudge.Options{Seed: 1})
	var mu sync.Mutex
	seen := map[int64]bool{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		wait := latency
		if slow > 0 {
			var req struct {
				Seed int64 `json:"seed"`
			}
			_ = json.Unmarshal(body, &req)
			mu.Lock()
			if !seen[req.Seed] {
				seen[req.Seed] = true
				wait = slow
			}
			mu.Unlock()
		}
		time.Sleep(wait)
		inner.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("http://%s/v1\n", ln.Addr())
	_ = http.Serve(ln, h)
}

// startFakeJudge starts the fake judge in a child process.
func startFakeJudge(b *testing.B, latency, slow time.Duration) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%s", fakeJudgeEnv, latency, slow))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("fake judge did not start: %v", err)
	}
	return string(bytes.TrimSpace([]byte(line)))
}

// fedCriteria are the four FED qualities the benchmark judges.
var fedCriteria = []string{"Coherent", "Understanding", "Likeable", "Informative"}

func fedPath(b *testing.B) string {
	b.Helper()
	p, ok := shareddata.Path("fed-dialog.jsonl")
	if !ok {
		b.Skip("fed-dialog.jsonl not found (set BATCHEVAL_SHARED_DATASETS to the shared datasets folder)")
	}
	return p
}

func fedRubric4() evaluator.Rubric {
	r := evaluator.Rubric{
		Task:   `a whole conversation between a user and a chatbot (the "System" turns)`,
		Fields: []evaluator.Field{{Column: "context", Label: "Conversation"}},
	}
	for _, name := range fedCriteria {
		r.Criteria = append(r.Criteria, evaluator.Criterion{Name: name, Description: "How " + name + " the system is.",
			Lo: 0, Hi: 2, HumanColumn: "scores." + name})
	}
	return r
}

// benchLab is a database with FED imported and a started runner.
type benchLab struct {
	db      *models.DB
	ws      models.Workspace
	project models.Project
	ds      models.Dataset
	rows    int
	r       *Runner
	runs    int // runs made, for their seeds
	// finished receives each run's end (the runner's onFinished hook).
	finished chan runEnd
}

func newBenchLab(b *testing.B, d models.Dialect, rub evaluator.Rubric) *benchLab {
	b.Helper()
	return newBenchLabWith(b, d, rub, nil)
}

// newBenchLabWith is newBenchLab with the runner's configuration changed by
// tune (when not nil), and setup run on the runner, before it starts.
func newBenchLabWith(b *testing.B, d models.Dialect, rub evaluator.Rubric, tune func(*Config), setup ...func(*Runner)) *benchLab {
	b.Helper()
	ctx := context.Background()
	db := dbtest.Open(b, d, migrateJobs)
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		b.Fatal(err)
	}
	p := models.Project{WorkspaceID: ws.ID, Name: "Speed"}
	if err := db.CreateProject(ctx, &p); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(fedPath(b))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	table, err := dataimport.Parse(f, dataimport.JSONL, dataimport.Options{})
	if err != nil {
		b.Fatal(err)
	}
	m := dataimport.Mapping{IDColumn: "id", Fields: rub.Fields}
	for _, c := range rub.Criteria {
		m.RatingColumns = append(m.RatingColumns, c.HumanColumn)
	}
	rows, err := demo.ImportRows(table, m)
	if err != nil {
		b.Fatal(err)
	}
	ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "FED", SourceFilename: "fed-dialog.jsonl",
		Format: string(table.Format), IDColumn: "id", Columns: table.Columns, Fields: rub.Fields, RatingColumns: m.RatingColumns}
	if err := db.CreateDataset(ctx, &ds, rows); err != nil {
		b.Fatal(err)
	}
	// The production polling interval: a launch through this runner is
	// fetched at once anyway, and a faster poll would be counted as the
	// run's CPU.
	cfg := Config{DB: db, Log: testLog(), Work: true, MaxRuns: 4, PollInterval: time.Second,
		JudgeTuning: fastTuning}
	if tune != nil {
		tune(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	finished := make(chan runEnd, 1)
	r.onFinished = func(runID int64) { finished <- runEnd{runID: runID, cpu: processCPU(b)} }
	for _, f := range setup {
		f(r)
	}
	if err := r.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.Stop(sctx)
	})
	return &benchLab{db: db, ws: ws, project: p, ds: ds, rows: len(rows), r: r, finished: finished}
}

// fedRun is a BatchEval run of FED on rub at concurrency c.
func (l *benchLab) fedRun(rub evaluator.Rubric, url string, c, rounds int) models.Run {
	s := evaluator.DefaultSettings()
	s.Rounds, s.BatchSize = rounds, 10
	// A seed of its own for every run of the lab: with one seed, each run
	// after the first found its first round's answers in the answer cache
	// (BatchEval's first round does not depend on the run) and ran below
	// the judge-bound minimum.
	l.runs++
	s.Seed = int64(1000 + l.runs)
	return models.Run{WorkspaceID: l.ws.ID, ProjectID: l.project.ID, DatasetID: l.ds.ID, Name: fmt.Sprintf("FED at C=%d", c),
		Method: models.MethodBatchEval, Settings: s, RubricSnapshot: rub,
		JudgeSnapshot: models.JudgeSnapshot{Name: "fake", BaseURL: url, Model: "fake-judge", MaxConcurrency: c, TimeoutSeconds: 30}}
}

// runToEnd launches run, waits for it to end and returns it with its wall
// time (from its start to its end as stored) and this process's CPU time
// when its end was stored (before the statistics are computed). It waits
// on the runner's onFinished hook rather than polling the database: a
// watcher waking every few milliseconds cost this VM about 0.1 ms of CPU
// per call at C = 1, counted as the run's.
func (l *benchLab) runToEnd(b *testing.B, run models.Run) (models.Run, time.Duration, time.Duration) {
	b.Helper()
	ctx := context.Background()
	if err := l.r.Launch(ctx, &run); err != nil {
		b.Fatal(err)
	}
	var cpuAtEnd time.Duration
	select {
	case end := <-l.finished:
		if end.runID != run.ID {
			b.Fatalf("run %d ended while run %d was awaited", end.runID, run.ID)
		}
		cpuAtEnd = end.cpu
	case <-time.After(5 * time.Minute):
		b.Fatal("run not ended after 5 minutes")
	}
	got, err := l.db.GetRun(ctx, run.ID)
	if err != nil {
		b.Fatal(err)
	}
	if got.Status != models.RunSucceeded {
		b.Fatalf("run ended %s: %s", got.Status, got.Error)
	}
	return got, got.FinishedAt.Sub(*got.StartedAt), cpuAtEnd
}

// runEnd is a run's end as the runner's onFinished hook saw it.
type runEnd struct {
	runID int64
	cpu   time.Duration // the process's CPU time then
}

// exchangeFloor replays the request bodies run sent, in the same order,
// with a bare net/http client at concurrency c against the same fake
// judge, and returns this process's CPU per call. It is the part of a
// judge call any client pays on this machine (the loopback exchange, the
// wake-ups of waiting for an answer): the runner's CPU per call minus this
// is what the product itself spends.
func (l *benchLab) exchangeFloor(b *testing.B, run models.Run, url string, c int) (time.Duration, float64) {
	b.Helper()
	var bodies [][]byte
	rows, err := l.db.Gorm.Raw("SELECT request FROM run_batches WHERE run_id = ? AND request <> '' ORDER BY id", run.ID).Rows()
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			b.Fatal(err)
		}
		// Stored is the messages; the wire body wraps them.
		bodies = append(bodies, append(append([]byte(`{"model":"fake-judge","temperature":0,"messages":`), body...), '}'))
	}
	if err := rows.Close(); err != nil || len(bodies) == 0 {
		b.Fatalf("read run %d's requests: %v (%d)", run.ID, err, len(bodies))
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c}}
	defer client.CloseIdleConnections()
	var next sync.Mutex
	i := 0
	start := proccpu.Now(b)
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= len(bodies) {
					return
				}
				resp, err := client.Post(url+"/chat/completions", "application/json", bytes.NewReader(bodies[k]))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Errorf("fake judge answered %s", resp.Status)
					return
				}
			}
		})
	}
	wg.Wait()
	used := proccpu.Now(b).Sub(start)
	// Each switch is a thread put to sleep and woken: on a virtual machine
	// the wake-up can cost more CPU than the work it is for.
	return used.CPU / time.Duration(len(bodies)), float64(used.Switches) / float64(len(bodies))
}

// statsStored waits until the run's statistics are stored (the runner
// computes them once the run has ended: report.StoreStats).
func (l *benchLab) statsStored(b *testing.B, run models.Run) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var n int
		if err := l.db.Gorm.Raw("SELECT COUNT(*) FROM run_stats WHERE run_id = ?", run.ID).Scan(&n).Error; err != nil {
			b.Fatal(err)
		}
		if n >= len(run.RubricSnapshot.Criteria) {
			return
		}
		if time.Now().After(deadline) {
			b.Fatal("run statistics not stored after 5 minutes")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const (
	defaultBenchLatency = 20 * time.Millisecond
	benchRounds         = 5
)

// benchDialect is the database the FED benchmark runs on: SQLite, or
// PostgreSQL with BATCHEVAL_BENCH_DB=postgres (under
// scripts/with-postgres.sh).
func benchDialect() models.Dialect {
	if os.Getenv("BATCHEVAL_BENCH_DB") == "postgres" {
		return models.Postgres
	}
	return models.SQLite
}

// benchLatencyOf is the fake judge's latency: BATCHEVAL_BENCH_LATENCY (a Go
// duration; the issue measured at 500ms) or 20 ms, which keeps `make bench`
// short but makes the runner's own CPU a larger share of each wave.
func benchLatencyOf(b *testing.B) time.Duration {
	v := os.Getenv("BATCHEVAL_BENCH_LATENCY")
	if v == "" {
		return defaultBenchLatency
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("BATCHEVAL_BENCH_LATENCY=%q: want a positive Go duration such as 500ms", v)
	}
	return d
}

// benchConcurrencies is BATCHEVAL_BENCH_C (comma-separated, e.g. "4,16") or
// the 1, 4, 8, 16, 32.
func benchConcurrencies(b *testing.B) []int {
	v := os.Getenv("BATCHEVAL_BENCH_C")
	if v == "" {
		return []int{1, 4, 8, 16, 32}
	}
	var cs []int
	for _, f := range strings.Split(v, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			b.Fatalf("BATCHEVAL_BENCH_C=%q: want positive integers separated by commas", v)
		}
		cs = append(cs, c)
	}
	return cs
}

// judgeBound is the least wall time the judge allows: every round's calls
// (of every criterion) in waves of c, each wave one latency.
func judgeBound(rounds, callsPerRound, c int, latency time.Duration) time.Duration {
	return time.Duration(rounds*((callsPerRound+c-1)/c)) * latency
}

// scheduleFloor is the least wall time any schedule can reach, the runner's
// costs aside: the larger of the judge's work spread over c slots, and the
// longest criterion's chain of rounds (a round starts when its criterion's
// previous one is done, and takes at least its slowest call). With slow
// set, each round of the run has one call of slow latency (the first
// request of its seed, serveFakeJudge); with more rounds than criteria,
// some criterion gets ceil(rounds/criteria) of them whatever the order of
// the requests: at 4 criteria, 5 rounds, 500 ms and C = 32 that chain is
// 6.5 s, 1.3 times the judge-bound minimum of 5 s.
func scheduleFloor(rounds, criteria, callsPerRound, c int, latency, slow time.Duration) time.Duration {
	work := time.Duration(rounds*callsPerRound) * latency
	chain := time.Duration(rounds) * latency
	if slow > 0 {
		work += time.Duration(rounds) * (slow - latency)
		slowRounds := (rounds + criteria - 1) / criteria
		chain += time.Duration(slowRounds) * (slow - latency)
	}
	return max(work/time.Duration(c), chain)
}

// BenchmarkFEDSchedule reports, for FED on 4 criteria against a judge of
// fixed latency, the wall time as a ratio to the judge-bound minimum
// ("x-min"; target <= 1.05), with one slow batch (5x the latency) per round
// ("slow", target <= 1.2), and the runner's CPU per judge call from the
// launch to the run's end ("cpu-ms/call"; target <= 1); the statistics
// computed once after the end are reported apart ("stats-cpu-ms/run").
// "floor-x-min" is the least ratio any schedule could reach
// (scheduleFloor): the slow case at C = 32 cannot go below 1.3 without
// hedging. "slow-hedged" is the slow case with the run's setting
// HedgeSlowCalls on, which re-sends a call out twice the median answer
// and at least judge.HedgeMinDelay (the floor does not apply to it: the
// copy answers in one latency); "resent-calls" is how many paid calls it
// added to the run's 260. The setting is on by default since December 6,
// so the rows without a slow batch run with it on, as a launched run
// would; "slow" keeps it off, to show what the copies buy.
func BenchmarkFEDSchedule(b *testing.B) {
	rub := fedRubric4()
	benchLatency := benchLatencyOf(b)
	for _, v := range []struct{ slow, hedge bool }{{false, false}, {true, false}, {true, true}} {
		slow := v.slow
		for _, c := range benchConcurrencies(b) {
			name := "C=" + strconv.Itoa(c)
			switch {
			case v.hedge:
				name = "slow-hedged/" + name
			case slow:
				name = "slow/" + name
			}
			b.Run(name, func(b *testing.B) {
				slowLatency := time.Duration(0)
				if slow {
					slowLatency = 5 * benchLatency
				}
				url := startFakeJudge(b, benchLatency, slowLatency)
				l := newBenchLab(b, benchDialect(), rub)
				perRound := len(rub.Criteria) * ((l.rows + 9) / 10)
				min := judgeBound(benchRounds, perRound, c, benchLatency)
				var wall, cpu, stats time.Duration
				calls, csw := 0, int64(0)
				// extra are the calls beyond the 260 the run needs: its
				// re-sent slow calls (slow-hedged), each a paid call.
				extra := 0
				b.ResetTimer()
				var last models.Run
				for range b.N {
					start, sw := processCPU(b), proccpu.Now(b).Switches
					spec := l.fedRun(rub, url, c, benchRounds)
					spec.Settings.HedgeSlowCalls = v.hedge || !slow
					run, took, ended := l.runToEnd(b, spec)
					csw += proccpu.Now(b).Switches - sw
					cpu += ended - start
					last = run
					// The statistics are computed after the run's end, once
					// per run whatever its calls: measured apart, and
					// finished before the next run starts.
					l.statsStored(b, run)
					stats += processCPU(b) - ended
					wall += took
					calls += run.Calls
					extra += run.Calls - benchRounds*perRound
				}
				b.ReportMetric(float64(wall)/float64(b.N)/float64(min), "x-min")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(calls), "cpu-ms/call")
				b.ReportMetric(float64(csw)/float64(calls), "csw/call")
				if !slow {
					// The same calls through a bare client: what any client
					// pays per call here, and the product's CPU beyond it.
					floor, floorSwitches := l.exchangeFloor(b, last, url, c)
					b.ReportMetric(floorSwitches, "exchange-csw/call")
					b.ReportMetric(float64(floor.Microseconds())/1000, "exchange-cpu-ms/call")
					b.ReportMetric(float64(cpu.Microseconds())/1000/float64(calls)-float64(floor.Microseconds())/1000, "app-cpu-ms/call")
				}
				b.ReportMetric(float64(stats.Microseconds())/1000/float64(b.N), "stats-cpu-ms/run")
				if v.hedge || !slow {
					b.ReportMetric(float64(extra)/float64(b.N), "resent-calls")
				}
				b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall-ms")
				b.ReportMetric(float64(min.Milliseconds()), "min-ms")
				floor := scheduleFloor(benchRounds, len(rub.Criteria), perRound, c, benchLatency, slowLatency)
				b.ReportMetric(float64(floor)/float64(min), "floor-x-min")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
