package models_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/internal/proccpu"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// BenchmarkStoreAnswer stores one judge answer as the runner does at
// concurrency 1: a group of the run's answer (fenced on its lease, handing
// the lease on) and its copy for the answer cache, in one transaction. The
// payloads are the size of a FED batch of 10 (a 12 KB prompt, a 2 KB
// answer, an analysis a score). "cpu-us/answer" is the process's CPU per
// answer (user and system: SQLite's writes are system calls), the figure
// the runner's CPU per judge call is made of; "csw/answer" the process's
// context switches per answer.
//
// BATCHEVAL_BENCH_STORE_GAP (a Go duration, e.g. 20ms) sleeps that long
// before each answer, as a run at concurrency 1 waits for its judge: on a
// virtual machine the same store then costs about three times the CPU
// (BENCHMARKS.md, "Run speed, eighth pass").
//
// BATCHEVAL_BENCH_PROMPT_BYTES sets the stored prompt's size (12288 by
// default; a FED batch of 10 is 9,200 on average, of which 1,500 are the
// criterion's instructions, the same in every batch: "Run speed,
// eighteenth pass"). On Linux "writes/answer" and "written-kb/answer" are
// the process's write system calls and bytes per answer (/proc/self/io):
// the WAL's frames, two writes each (a 24-byte header, a 4 KiB page), and
// the checkpoints' copies of them into the database file (SQLite only:
// PostgreSQL's are its server's).
func BenchmarkStoreAnswer(b *testing.B) {
	for _, d := range dbtest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			benchStoreAnswer(b, dbtest.Open(b, d))
		})
	}
}

const benchBatch = 10

func benchStoreAnswer(b *testing.B, db *models.DB) {
	ctx := context.Background()
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		b.Fatal(err)
	}
	p, err := demo.Seed(ctx, db, ws)
	if err != nil {
		b.Fatal(err)
	}
	dss, err := db.ListDatasets(ctx, ws.ID, p.ID)
	if err != nil || len(dss) == 0 {
		b.Fatalf("demo datasets: %v", err)
	}
	ds := dss[0]
	rows, err := db.ListDatasetRows(ctx, ds.ID, 0, benchBatch)
	if err != nil || len(rows) != benchBatch {
		b.Fatalf("rows: %d, %v", len(rows), err)
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds.ID, Name: "bench", Method: models.MethodBatchEval, CreatedAt: time.Now()}
	if err := db.CreateRun(ctx, &run, nil); err != nil {
		b.Fatal(err)
	}
	const owner = "bench-worker"
	if err := db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ? WHERE id = ?`, owner, models.RunRunning, run.ID).Error; err != nil {
		b.Fatal(err)
	}
	// One batch a round, a round an answer: the scores' places stay unique.
	batches := make([]models.RunBatch, 0, b.N)
	for round := range b.N {
		bs, err := db.CreateRoundBatches(ctx, run.ID, 0, round, [][]int64{ids})
		if err != nil {
			b.Fatal(err)
		}
		batches = append(batches, bs...)
	}
	promptBytes := 12 * 1024
	if v := os.Getenv("BATCHEVAL_BENCH_PROMPT_BYTES"); v != "" {
		if promptBytes, err = strconv.Atoi(v); err != nil || promptBytes < 0 {
			b.Fatalf("BATCHEVAL_BENCH_PROMPT_BYTES=%q: want a number of bytes such as 9200", v)
		}
	}
	const turn = "User: how was your weekend? System: I went hiking with my sister. "
	request := strings.Repeat(turn, promptBytes/len(turn)+1)[:promptBytes]
	response := strings.Repeat("Sample 3: the reply follows the topic and answers the question. ", 2*1024/64)
	analysis := strings.Repeat("on topic, coherent; ", 8)
	cache := db.ResponseCache(ws.ID)
	sctx := models.WithLeaseOwner(ctx, owner)
	var lease models.LeaseState
	b.ResetTimer()
	var gap time.Duration
	if v := os.Getenv("BATCHEVAL_BENCH_STORE_GAP"); v != "" {
		if gap, err = time.ParseDuration(v); err != nil || gap < 0 {
			b.Fatalf("BATCHEVAL_BENCH_STORE_GAP=%q: want a Go duration such as 20ms", v)
		}
	}
	io0, ioOK := readProcIO()
	start := proccpu.Now(b)
	for i := range b.N {
		if gap > 0 {
			// Not between StopTimer and StartTimer: those read the memory
			// statistics, which stops the world and wakes every thread.
			time.Sleep(gap)
		}
		bt := batches[i]
		bt.Status, bt.Request, bt.Response = models.BatchDone, request, response
		bt.PromptTokens, bt.CompletionTokens, bt.LatencyMS, bt.Attempts, bt.Calls = 3000, 500, 20, 1, 1
		res := models.BatchResult{Batch: bt}
		for k, id := range ids {
			v := float64(k%3 + 1)
			res.Scores = append(res.Scores, models.RunScore{RunID: run.ID, BatchID: bt.ID, Round: bt.Round, RowID: id,
				Label: k + 1, Score: &v, Analysis: analysis})
		}
		answer := cache.Answer(fmt.Sprintf("%064x", i), 0, []byte(response))
		errs := db.SaveBatchResults(sctx, []models.BatchSave{
			{Result: res, Owner: owner, OnLease: func(st models.LeaseState) { lease = st }},
			{Cached: &answer},
		})
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	used := proccpu.Now(b).Sub(start)
	io1, _ := readProcIO()
	b.StopTimer()
	if lease.Owner != owner {
		b.Fatalf("lease handed on: %+v, want owner %q", lease, owner)
	}
	b.ReportMetric(float64(used.CPU.Microseconds())/float64(b.N), "cpu-us/answer")
	b.ReportMetric(float64(used.Switches)/float64(b.N), "csw/answer")
	// PostgreSQL's writes are its server's, not this process's.
	if ioOK && db.Dialect == models.SQLite {
		b.ReportMetric(float64(io1.writes-io0.writes)/float64(b.N), "writes/answer")
		b.ReportMetric(float64(io1.bytes-io0.bytes)/1024/float64(b.N), "written-kb/answer")
	}
}

// procIO is the process's write system calls and the bytes they wrote so
// far, as Linux counts them (syscw and wchar of /proc/self/io).
type procIO struct{ writes, bytes int64 }

// readProcIO reads /proc/self/io; ok is false where there is none.
func readProcIO() (io procIO, ok bool) {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return io, false
	}
	seen := 0
	for _, line := range strings.Split(string(data), "\n") {
		name, value, found := strings.Cut(line, ": ")
		if !found {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "syscw":
			io.writes, seen = n, seen+1
		case "wchar":
			io.bytes, seen = n, seen+1
		}
	}
	return io, seen == 2
}
