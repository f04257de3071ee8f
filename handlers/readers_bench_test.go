package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
)

// BenchmarkRunPageReaders is the issue's "50 concurrent readers during 4
// runs" on SQLite, through the real handlers: a finished 1,000-sample run
// (its summary stored, as the runner leaves it) is read by 50 readers, 20
// page views each, while 4 BatchEval runs of 5,000 rows write their
// answers (concurrency 4 each, against the simulated judge behind
// BATCHEVAL_BENCH_READERS_LATENCY, 100ms by default). The same readers are
// served by two Echo instances over the same handlers' dependencies, one
// with the page gate (admission.go, the default) and one without
// ("ungated-"), alternately, so both see the same machine and the same
// writers. Reported: p50 and p99 of the page time, and the p50 of one
// reader alone with no run going ("alone-p50-ms").
func BenchmarkRunPageReaders(b *testing.B) {
	const readers, views, writers, rows = 50, 20, 4, 5000
	latency := 100 * time.Millisecond
	if v := os.Getenv("BATCHEVAL_BENCH_READERS_LATENCY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("BATCHEVAL_BENCH_READERS_LATENCY=%q: %v", v, err)
		}
		latency = d
	}
	ctx := context.Background()
	db := dbtest.Open(b, models.SQLite)
	mustB(b, runner.Migrate(ctx, db, nil))
	ws, err := db.EnsureDefaultWorkspace(ctx)
	mustB(b, err)
	p := models.Project{WorkspaceID: ws.ID, Name: "readers"}
	mustB(b, db.CreateProject(ctx, &p))

	// The page being read, finished and summarised.
	readID := synthExportRun(b, db, p, 1000)
	mustB(b, report.StoreStats(ctx, db, ws.ID, readID))
	// The writers' dataset and rubric.
	writeTemplate, err := db.GetRun(ctx, synthExportRun(b, db, p, rows))
	mustB(b, err)

	sim, err := simjudge.Start(simjudge.Options{Seed: 7, Latency: latency})
	mustB(b, err)
	defer sim.Close()
	log := slog.New(slog.DiscardHandler)
	r, err := runner.New(runner.Config{DB: db, Log: log, Work: true, SimulatedURL: sim.URL, MaxRuns: writers,
		PollInterval: 100 * time.Millisecond})
	mustB(b, err)
	mustB(b, r.Start(ctx))
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = r.Stop(sctx)
	}()

	server := func(pageConcurrency int) *echo.Echo {
		h, err := New(db, r, log, ws)
		mustB(b, err)
		h.LocalMode = true
		h.Network.AllowedHosts = append(slices.Clone(DefaultAllowedHosts), "example.com")
		h.PageConcurrency = pageConcurrency
		e := echo.New()
		h.Register(e)
		return e
	}
	servers := []struct {
		name string
		e    *echo.Echo
	}{{"ungated-", server(-1)}, {"", server(0)}}
	page := fmt.Sprintf("/runs/%d", readID)
	view := func(e *echo.Echo) time.Duration {
		req := httptest.NewRequest(http.MethodGet, page, nil)
		rec := httptest.NewRecorder()
		start := time.Now()
		e.ServeHTTP(rec, req)
		took := time.Since(start)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s: %d %s", page, rec.Code, rec.Body.String())
		}
		return took
	}

	// Alone: one reader, nothing running (warms the caches too). Reported
	// at the end: ResetTimer drops metrics reported before it.
	alone := map[string][]time.Duration{}
	for _, s := range servers {
		for range 20 {
			alone[s.name] = append(alone[s.name], view(s.e))
		}
	}
	times := map[string][]time.Duration{}
	answered := map[string]int{}

	seed := int64(5000)
	b.ResetTimer()
	for range b.N {
		for _, s := range servers {
			// Four runs writing answers while the readers read.
			var runIDs []int64
			for range writers {
				run := writeTemplate
				run.ID, run.Status, run.StartedAt, run.FinishedAt = 0, "", nil, nil
				run.Calls, run.PromptTokens, run.CompletionTokens, run.CostUSD = 0, 0, 0, nil
				run.Name = "writer"
				run.JudgeSnapshot = models.JudgeSnapshot{Name: "simulated", BaseURL: sim.URL, Model: "simulated", MaxConcurrency: 4, TimeoutSeconds: 30}
				seed++
				run.Settings.Seed, run.Settings.NoCache = seed, true
				mustB(b, r.Launch(ctx, &run))
				runIDs = append(runIDs, run.ID)
			}
			waitRunning(b, db, runIDs)
			// Readers start once every writer is storing answers, not
			// while the runs are still laying out their batches.
			waitWriting(b, db, runIDs)
			callsBefore := writerCalls(b, db, runIDs)

			var mu sync.Mutex
			var wg sync.WaitGroup
			for range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range views {
						d := view(s.e)
						mu.Lock()
						times[s.name] = append(times[s.name], d)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			answered[s.name] += writerCalls(b, db, runIDs) - callsBefore
			stillRunning := waitRunning(b, db, runIDs)
			for _, id := range runIDs {
				_, _ = r.Cancel(ctx, ws.ID, id)
			}
			waitEnded(b, db, runIDs)
			if stillRunning < writers {
				b.Logf("%s: only %d of %d writers still running when the readers finished", s.name, stillRunning, writers)
			}
		}
	}
	b.StopTimer()
	for _, s := range servers {
		b.ReportMetric(ms(percentile(times[s.name], 0.5)), s.name+"p50-ms")
		b.ReportMetric(ms(percentile(times[s.name], 0.99)), s.name+"p99-ms")
		b.ReportMetric(ms(slices.Max(times[s.name])), s.name+"max-ms")
		b.ReportMetric(ms(percentile(alone[s.name], 0.5)), s.name+"alone-p50-ms")
		// The writers' judge calls answered and stored while the readers
		// read: shows the pages were read during writes.
		b.ReportMetric(float64(answered[s.name])/float64(b.N), s.name+"writes/op")
	}
	b.ReportMetric(0, "ns/op")
}

// writerCalls is the judge calls the runs have stored so far.
func writerCalls(b *testing.B, db *models.DB, ids []int64) int {
	b.Helper()
	n := 0
	for _, id := range ids {
		run, err := db.GetRun(context.Background(), id)
		mustB(b, err)
		n += run.Calls
	}
	return n
}

// waitWriting waits until every run has stored at least one answer.
func waitWriting(b *testing.B, db *models.DB, ids []int64) {
	waitEach(b, db, ids, "stored no answer", func(r models.Run) bool { return r.Calls > 0 })
}

// waitEach waits until done holds for every run of ids, for a minute at
// most; what says what a run still failing it has not done.
func waitEach(b *testing.B, db *models.DB, ids []int64, what string, done func(models.Run) bool) {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, id := range ids {
		for {
			run, err := db.GetRun(context.Background(), id)
			mustB(b, err)
			if done(run) {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("run %d %s within a minute (status %s)", id, what, run.Status)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// waitRunning waits until every run has started and returns how many are
// running (one may already have ended).
func waitRunning(b *testing.B, db *models.DB, ids []int64) int {
	b.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		running, queued := 0, 0
		for _, id := range ids {
			run, err := db.GetRun(context.Background(), id)
			mustB(b, err)
			switch run.Status {
			case models.RunRunning:
				running++
			case models.RunQueued:
				queued++
			}
		}
		if queued == 0 {
			return running
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d writer runs still queued after a minute", queued)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEnded waits until no run of ids is queued or running.
func waitEnded(b *testing.B, db *models.DB, ids []int64) {
	waitEach(b, db, ids, "did not end after its cancel", func(r models.Run) bool {
		return r.Status != models.RunQueued && r.Status != models.RunRunning
	})
}

func percentile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q*float64(len(s)) + 0.5)
	return s[min(max(i-1, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
