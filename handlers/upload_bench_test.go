package handlers

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/internal/proccpu"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/runner"
)

// benchRows is the size of the generated dataset: the target of a
// million-sample upload.
const benchRows = 1000000

// writeBenchCSV writes a CSV of n rows (id, a sentence, a rating) to dir
// and returns its path and size. It is generated at benchmark time and
// never committed.
func writeBenchCSV(tb testing.TB, dir string, n int) (string, int64) {
	tb.Helper()
	path := filepath.Join(dir, "bench.csv")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,response,quality")
	for i := range n {
		fmt.Fprintf(w, "s%07d,\"The response number %d, judged for the benchmark\",%d\n", i, i, i%5+1)
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

// heapPeak samples the live heap every few milliseconds until stopped and
// reports the highest value above the heap at start.
type heapPeak struct {
	base, peak atomic.Uint64
	stop       chan struct{}
	done       chan struct{}
}

func heapNow() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func startHeapPeak() *heapPeak {
	runtime.GC()
	p := &heapPeak{stop: make(chan struct{}), done: make(chan struct{})}
	p.base.Store(heapNow())
	go func() {
		defer close(p.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if h := heapNow(); h > p.peak.Load() {
				p.peak.Store(h)
			}
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// Stop returns the peak heap above the starting heap, in bytes.
func (p *heapPeak) Stop() uint64 {
	close(p.stop)
	<-p.done
	if pk, b := p.peak.Load(), p.base.Load(); pk > b {
		return pk - b
	}
	return 0
}

// processCPU is the CPU time this process has used (user and system); the
// database server's CPU (PostgreSQL) is not in it.
func processCPU() time.Duration {
	u, _ := proccpu.Read()
	return u.CPU
}

// rssPeak measures the peak resident memory of the process during a step
// (Linux: VmHWM in /proc/self/status, reset by writing 5 to
// /proc/self/clear_refs). resetRSSPeak returns the resident memory at the
// start; ok is false where that is not available.
func resetRSSPeak() (start uint64, ok bool) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, false
	}
	return procStatusKB("VmRSS:"), true
}

// rssPeakSince is the peak resident memory since resetRSSPeak, above
// start, in bytes.
func rssPeakSince(start uint64) uint64 {
	if pk := procStatusKB("VmHWM:"); pk > start {
		return pk - start
	}
	return 0
}

// procStatusKB reads one "Name: N kB" line of /proc/self/status, in bytes.
func procStatusKB(name string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// benchServer is the real Echo app on a real database, without the job
// workers an upload does not need.
func benchServer(b *testing.B, d models.Dialect) (*echo.Echo, *Handlers, models.Project) {
	db := dbtest.Open(b, d)
	ctx := context.Background()
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		b.Fatal(err)
	}
	p := models.Project{WorkspaceID: ws.ID, Name: "bench"}
	if err := db.CreateProject(ctx, &p); err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	r, err := runner.New(runner.Config{DB: db, Log: log})
	if err != nil {
		b.Fatal(err)
	}
	h, err := New(db, r, log, ws)
	if err != nil {
		b.Fatal(err)
	}
	h.LocalMode = true
	h.Network.AllowedHosts = append(slices.Clone(DefaultAllowedHosts), "example.com")
	h.MaxUploadBytes = 1 << 30
	h.MaxUploadRows = 2 * benchRows
	h.UploadQuotaBytes = 0
	// BATCHEVAL_BENCH_IMPORT_CHUNK overrides the rows per INSERT/COPY of
	// an import, to compare chunk sizes.
	if n, err := strconv.Atoi(os.Getenv("BATCHEVAL_BENCH_IMPORT_CHUNK")); err == nil {
		db.ImportChunkRows = n
	}
	e := echo.New()
	h.Register(e)
	return e, h, p
}

// BenchmarkUploadImport1M uploads a generated 1,000,000-row CSV through the
// real handlers (multipart POST, then the mapping step's import) on each
// database, and reports throughput in MB/s of file and the peak heap
// growth of each step as a ratio to the file's size. Run it with
// -benchtime=1x: one iteration is a whole million-row import.
func BenchmarkUploadImport1M(b *testing.B) {
	path, size := writeBenchCSV(b, b.TempDir(), benchRows)
	for _, d := range dbtest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			e, h, p := benchServer(b, d)
			var upSecs, impSecs float64
			var upPeak, impPeak, upRSS, impRSS uint64
			var upCPU, impCPU time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				body, ctype := multipartFileBody(b, path)
				b.StartTimer()

				peak := startHeapPeak()
				rss, _ := resetRSSPeak()
				cpu := processCPU()
				start := time.Now()
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/projects/%d/datasets/upload", p.ID), body)
				req.Header.Set(echo.HeaderContentType, ctype)
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				upSecs += time.Since(start).Seconds()
				upCPU += processCPU() - cpu
				upPeak = max(upPeak, peak.Stop())
				upRSS = max(upRSS, rssPeakSince(rss))
				if rec.Code != http.StatusSeeOther {
					b.Fatalf("upload = %d: %.300s", rec.Code, rec.Body)
				}
				loc, _ := url.Parse(rec.Header().Get("Location"))

				form := url.Values{"token": {loc.Query().Get("token")}, "name": {fmt.Sprintf("bench %d", i)}, "id_column": {"id"},
					"show_1": {"1"}, "label_1": {"Response"}, "rating_2": {"1"}}
				peak = startHeapPeak()
				rss, _ = resetRSSPeak()
				cpu = processCPU()
				start = time.Now()
				req = httptest.NewRequest(http.MethodPost, loc.Path, strings.NewReader(form.Encode()))
				req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
				rec = httptest.NewRecorder()
				e.ServeHTTP(rec, req)
				impSecs += time.Since(start).Seconds()
				impCPU += processCPU() - cpu
				impPeak = max(impPeak, peak.Stop())
				impRSS = max(impRSS, rssPeakSince(rss))
				if rec.Code != http.StatusSeeOther {
					b.Fatalf("import = %d: %.300s", rec.Code, rec.Body)
				}
			}
			b.StopTimer()
			ds, err := h.DB.ListDatasets(context.Background(), h.DefaultWorkspace.ID, p.ID)
			if err != nil || len(ds) == 0 || ds[0].RowCount != benchRows {
				b.Fatalf("imported %v (%v), want %d rows", ds, err, benchRows)
			}
			mb := float64(size) / 1e6
			n := float64(b.N)
			b.ReportMetric(mb*n/upSecs, "upload-MB/s")
			b.ReportMetric(mb*n/impSecs, "import-MB/s")
			b.ReportMetric(float64(upPeak)/float64(size), "upload-peak-heap/file")
			b.ReportMetric(float64(impPeak)/float64(size), "import-peak-heap/file")
			b.ReportMetric(float64(upRSS)/float64(size), "upload-peak-rss/file")
			b.ReportMetric(float64(impRSS)/float64(size), "import-peak-rss/file")
			b.ReportMetric(upCPU.Seconds()/n, "upload-cpu-s")
			b.ReportMetric(impCPU.Seconds()/n, "import-cpu-s")
			b.ReportMetric(mb, "file-MB")
		})
	}
}

// multipartFileBody streams a multipart form holding the file at path,
// as a browser sends it, without reading the file into memory.
func multipartFileBody(tb testing.TB, path string) (io.Reader, string) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		f, err := os.Open(path)
		if err != nil {
			pw.CloseWithError(err)
			return
		}
		defer f.Close()
		fw, err := mw.CreateFormFile("file", filepath.Base(path))
		if err == nil {
			_, err = io.Copy(fw, f)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	return pr, mw.FormDataContentType()
}
