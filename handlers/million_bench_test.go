package handlers

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/runner"
)

// millionRowsEnv sets the size of BenchmarkMillionSampleRun. The default
// keeps `make bench` quick; BATCHEVAL_BENCH_ROWS=1000000 is the issue's
// million-sample run.
const millionRowsEnv = "BATCHEVAL_BENCH_ROWS"

// defaultMillionRows is the benchmark's size without the variable: large
// enough that every step's cost shows (2,000 batches a round), small
// enough to finish in under a minute on a quiet machine.
const defaultMillionRows = 20000

// BenchmarkMillionSampleRun is the million-sample scenario end to
// end, on SQLite and PostgreSQL, through the real handlers and the real
// runner: a CSV with human ratings (generated into a temporary directory)
// is uploaded and imported; a BatchEval run (1 criterion, 2 rounds,
// batches of 10) is launched as a River job against the simulated judge,
// which answers without latency; once it has finished, the results page
// (GET /runs/:id) and the CSV export are requested through e.ServeHTTP.
//
// Reported per database: each step's wall time (upload-s, import-s, run-s),
// the results page's server time (page-ms), the export's time to its first
// byte and to its end (export-first-byte-ms, export-s) and the peak live
// heap during the export (export-peak-heap-MB), and the run's wall time per
// judge call (run-ms/call). Run it with -benchtime=1x:
//
//	./scripts/with-postgres.sh go test ./handlers -run '^$' -bench MillionSampleRun -benchtime=1x -timeout 0
//	BATCHEVAL_BENCH_ROWS=1000000 ./scripts/with-postgres.sh go test ./handlers -run '^$' -bench MillionSampleRun -benchtime=1x -timeout 0 -v
func BenchmarkMillionSampleRun(b *testing.B) {
	rows := defaultMillionRows
	if v := os.Getenv(millionRowsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			b.Fatalf("%s=%q: want a number of rows of at least 10", millionRowsEnv, v)
		}
		rows = n
	}
	path, size := writeRatedCSV(b, b.TempDir(), rows)
	for _, d := range dbtest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				millionRun(b, d, path, size, rows)
			}
		})
	}
}

// millionRun is one iteration of BenchmarkMillionSampleRun on a fresh
// database.
func millionRun(b *testing.B, d models.Dialect, path string, size int64, rows int) {
	b.StopTimer()
	ctx := context.Background()
	db := dbtest.Open(b, d)
	if err := runner.Migrate(ctx, db, nil); err != nil {
		b.Fatal(err)
	}
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		b.Fatal(err)
	}
	p := models.Project{WorkspaceID: ws.ID, Name: "million"}
	if err := db.CreateProject(ctx, &p); err != nil {
		b.Fatal(err)
	}
	sim, err := simjudge.Start(simjudge.Options{Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	defer sim.Close()
	log := slog.New(slog.DiscardHandler)
	r, err := runner.New(runner.Config{DB: db, Log: log, Work: true, SimulatedURL: sim.URL, PollInterval: 100 * time.Millisecond,
		JudgeTuning: runner.JudgeTuning{MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Start(ctx); err != nil {
		b.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = r.Stop(sctx)
	}()
	h, err := New(db, r, log, ws)
	if err != nil {
		b.Fatal(err)
	}
	h.SimulatedURL = sim.URL
	h.LocalMode = true
	h.Network.AllowedHosts = append(slices.Clone(DefaultAllowedHosts), "example.com")
	h.MaxUploadBytes = 1 << 30
	h.MaxUploadRows = max(rows, 1000000)
	h.UploadQuotaBytes = 0
	e := echo.New()
	h.Register(e)
	serve := func(method, target, ctype string, body *strings.Reader) *httptest.ResponseRecorder {
		var req *http.Request
		if body != nil {
			req = httptest.NewRequest(method, target, body)
		} else {
			req = httptest.NewRequest(method, target, nil)
		}
		if ctype != "" {
			req.Header.Set(echo.HeaderContentType, ctype)
		}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		return rec
	}
	b.StartTimer()

	// Upload, then import through the mapping step.
	start := time.Now()
	body, ctype := multipartFileBody(b, path)
	req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/projects/%d/datasets/upload", p.ID), body)
	req.Header.Set(echo.HeaderContentType, ctype)
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		b.Fatalf("upload = %d: %.300s", rec.Code, rec.Body)
	}
	upload := time.Since(start)
	loc, _ := url.Parse(rec.Header().Get("Location"))
	form := url.Values{"token": {loc.Query().Get("token")}, "name": {"million"}, "id_column": {"id"},
		"show_1": {"1"}, "label_1": {"Response"}, "rating_2": {"1"}}
	start = time.Now()
	rec = serve(http.MethodPost, loc.Path, echo.MIMEApplicationForm, strings.NewReader(form.Encode()))
	if rec.Code != http.StatusSeeOther {
		b.Fatalf("import = %d: %.300s", rec.Code, rec.Body)
	}
	imp := time.Since(start)
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "%s: upload %s, import %s\n", b.Name(), upload.Round(time.Millisecond), imp.Round(time.Millisecond))
	}
	dsID, err := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/datasets/"), 10, 64)
	if err != nil {
		b.Fatalf("import went to %q", rec.Header().Get("Location"))
	}

	// The run: one criterion, two rounds, batches of 10, as a River job.
	s := evaluator.DefaultSettings()
	s.Rounds, s.BatchSize = 2, 10
	rub := evaluator.Rubric{Task: "a response to a request", Fields: []evaluator.Field{{Column: "response", Label: "Response"}},
		Criteria: []evaluator.Criterion{{Name: "Quality", Description: "How good the response is.", Lo: 1, Hi: 5, HumanColumn: "quality"}}}
	run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: dsID, Name: "million", Method: models.MethodBatchEval,
		Settings: s, RubricSnapshot: rub, Simulated: true,
		JudgeSnapshot: models.JudgeSnapshot{Name: "Simulated judge", Simulated: true, Model: "simulated", MaxConcurrency: 16, TimeoutSeconds: 60}}
	start = time.Now()
	if err := r.Launch(ctx, &run); err != nil {
		b.Fatal(err)
	}
	// A generous bound: about 2 ms of wall time per batch on a quiet
	// machine, so a stuck run still ends the benchmark.
	deadline := start.Add(10*time.Minute + time.Duration(rows)*5*time.Millisecond)
	var got models.Run
	lastNote := time.Now()
	for {
		if got, err = db.GetRun(ctx, run.ID); err != nil {
			b.Fatal(err)
		}
		if got.Finished() {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("run still %s after %s (batches %d/%d)", got.Status, time.Since(start).Round(time.Second), got.BatchesDone, got.BatchesTotal)
		}
		if testing.Verbose() && time.Since(lastNote) > time.Minute {
			// A long run says how far it is (benchmark logs wait for the end).
			lastNote = time.Now()
			fmt.Fprintf(os.Stderr, "%s: run %s after %s, batches %d/%d\n", b.Name(), got.Status, time.Since(start).Round(time.Second), got.BatchesDone, got.BatchesTotal)
		}
		time.Sleep(100 * time.Millisecond)
	}
	runTime := time.Since(start)
	if got.Status != models.RunSucceeded {
		b.Fatalf("run ended %s: %s", got.Status, got.Error)
	}
	// The runner stores the run's statistics and summary once it has
	// finished (report.StoreStats): the page is timed after that, as a
	// reader sees it, and storing is its own figure (a page opened before
	// it ends says the results are being prepared).
	start = time.Now()
	for {
		var open int64
		if err := db.Gorm.WithContext(ctx).Raw(`SELECT COUNT(*) FROM river_job WHERE state NOT IN ('completed', 'cancelled', 'discarded')`).Scan(&open).Error; err != nil {
			b.Fatal(err)
		}
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("the run's job still open %s after the run finished", time.Since(start).Round(time.Second))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The statistics are computed after the job has freed its slot
	// (runner.afterFinish): the page and the export are timed once they
	// are stored too, or the export's peak heap was the statistics' (1.4
	// GiB at 1,000,000 samples) and the page the one that says "Preparing".
	wctx, cancel := context.WithDeadline(ctx, deadline)
	r.WaitStats(wctx)
	cancel()
	storeTime := time.Since(start)

	// The results page, then the CSV export.
	start = time.Now()
	rec = serve(http.MethodGet, fmt.Sprintf("/runs/%d", run.ID), "", nil)
	pageTime := time.Since(start)
	if rec.Code != http.StatusOK {
		b.Fatalf("run page = %d: %.300s", rec.Code, rec.Body)
	}
	peak := startHeapPeak()
	fw := &firstByteWriter{header: http.Header{}}
	req = httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d/export.csv", run.ID), nil)
	start = time.Now()
	fw.start = start
	e.ServeHTTP(fw, req)
	exportTime := time.Since(start)
	exportPeak := peak.Stop()
	if fw.code != http.StatusOK || fw.lines < rows {
		b.Fatalf("export = %d with %d lines, want 200 and at least %d", fw.code, fw.lines, rows)
	}
	b.StopTimer()

	calls := max(got.Calls, 1)
	mb := float64(size) / 1e6
	b.ReportMetric(float64(rows), "rows")
	b.ReportMetric(upload.Seconds(), "upload-s")
	b.ReportMetric(mb/upload.Seconds(), "upload-MB/s")
	b.ReportMetric(imp.Seconds(), "import-s")
	b.ReportMetric(runTime.Seconds(), "run-s")
	b.ReportMetric(float64(runTime.Milliseconds())/float64(calls), "run-ms/call")
	b.ReportMetric(float64(pageTime.Microseconds())/1000, "page-ms")
	b.ReportMetric(storeTime.Seconds(), "summary-store-s")
	b.ReportMetric(float64(fw.first.Microseconds())/1000, "export-first-byte-ms")
	b.ReportMetric(exportTime.Seconds(), "export-s")
	b.ReportMetric(float64(exportPeak)/(1<<20), "export-peak-heap-MB")
	b.ReportMetric(0, "ns/op")
	b.Logf("%s, %d rows (%.1f MB): upload %s, import %s, run %s (%d calls, %d batches), summary stored %s later, page %s, export first byte %s, export %s (%d lines), export peak heap %.1f MiB",
		b.Name(), rows, mb, upload.Round(time.Millisecond), imp.Round(time.Millisecond), runTime.Round(time.Millisecond), got.Calls, got.BatchesTotal,
		storeTime.Round(time.Millisecond), pageTime.Round(time.Millisecond), fw.first.Round(time.Millisecond), exportTime.Round(time.Millisecond), fw.lines, float64(exportPeak)/(1<<20))
}

// writeRatedCSV writes a CSV of n rows (id, a response, a human rating from
// 1 to 5) to dir and returns its path and size.
func writeRatedCSV(tb testing.TB, dir string, n int) (string, int64) {
	tb.Helper()
	path := filepath.Join(dir, "rated.csv")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,response,quality")
	for i := range n {
		// Ratings that loosely follow the text, so the run's correlations
		// are figures, not noise.
		fmt.Fprintf(w, "s%07d,\"Response %d: a reply of quality %d to the request, judged for the benchmark\",%d\n", i, i, i%5+1, (i+i/7)%5+1)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	f.Close()
	return path, st.Size()
}

// firstByteWriter is a ResponseWriter that keeps nothing of the body: it
// notes when the first byte was written, counts the bytes and lines, and
// keeps the status.
type firstByteWriter struct {
	header http.Header
	code   int
	start  time.Time
	first  time.Duration // from start to the first Write
	bytes  int64
	lines  int
}

func (w *firstByteWriter) Header() http.Header { return w.header }

func (w *firstByteWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *firstByteWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if w.bytes == 0 && len(p) > 0 {
		w.first = time.Since(w.start)
	}
	w.bytes += int64(len(p))
	w.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// Flush lets streaming handlers flush: nothing is buffered here.
func (w *firstByteWriter) Flush() {}
