package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// largeBenchEnv reads a positive integer setting of BenchmarkLargeRunAnswers,
// or def when it is unset.
func largeBenchEnv(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		b.Fatalf("%s=%q is not a count", name, v)
	}
	return n
}

// BenchmarkLargeRunAnswers times, through the real Echo app, the pages and
// API answers around large finished runs that the other page benchmarks
// leave out, on SQLite and (with TEST_DATABASE_URL, e.g. through
// scripts/with-postgres.sh) on PostgreSQL: the compare page of two runs,
// the experiment page of three, a run's share link, the runs list and the
// API's runs list of a workspace holding BATCHEVAL_BENCH_LARGE_RUNS (200)
// small finished runs besides, the audit log holding
// BATCHEVAL_BENCH_LARGE_AUDIT (10,000) events, the run's and the
// dataset's exports, and the API's run, results, compare, experiment and
// dataset answers with a bearer token. The three large runs have
// BATCHEVAL_BENCH_LARGE (1,000) samples each (synthRunOn, figures stored
// as the runner leaves them; not timed). Each answer is timed on its
// first view with a fresh report cache (and what that view started in the
// background waited for) and as the median of three views after it;
// exports also give the first byte and the peak live heap. Run with
// -benchtime=1x.
func BenchmarkLargeRunAnswers(b *testing.B) {
	n := largeBenchEnv(b, "BATCHEVAL_BENCH_LARGE", 1000)
	manyRuns := largeBenchEnv(b, "BATCHEVAL_BENCH_LARGE_RUNS", 200)
	auditEvents := largeBenchEnv(b, "BATCHEVAL_BENCH_LARGE_AUDIT", 10_000)
	dialects := []models.Dialect{models.SQLite}
	if os.Getenv("TEST_DATABASE_URL") != "" {
		dialects = append(dialects, models.Postgres)
	}
	if only := os.Getenv("BATCHEVAL_BENCH_LARGE_DB"); only != "" {
		dialects = []models.Dialect{models.Dialect(only)}
	}
	ctx := context.Background()
	for b.Loop() {
		for _, d := range dialects {
			e, h, p := benchServer(b, d)
			start := time.Now()
			ds, ids := synthDataset(b, h.DB, p, n)
			var large []int64
			for v := range 3 {
				large = append(large, synthRunOn(b, h.DB, p, ds, ids, v))
			}
			for _, id := range large {
				mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, id))
			}
			b.Logf("%s: 3 runs of %d samples synthesized and stored in %v", d, n, time.Since(start).Round(time.Millisecond))
			start = time.Now()
			small, smallIDs := synthDataset(b, h.DB, p, 10)
			for range manyRuns {
				id := synthRunOn(b, h.DB, p, small, smallIDs, 0)
				mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, id))
			}
			b.Logf("%s: %d small runs in %v", d, manyRuns, time.Since(start).Round(time.Millisecond))
			start = time.Now()
			events := make([]models.AuditEvent, 0, exportBenchChunk)
			for i := range auditEvents {
				events = append(events, models.AuditEvent{WorkspaceID: p.WorkspaceID, Actor: "local user", Action: models.AuditRunLaunched,
					Target: fmt.Sprintf("run %d", i), Address: "127.0.0.1", CreatedAt: time.Now().UTC()})
				if len(events) == cap(events) || i == auditEvents-1 {
					mustB(b, h.DB.Gorm.CreateInBatches(&events, exportBenchChunk).Error)
					events = events[:0]
				}
			}
			b.Logf("%s: %d audit events in %v", d, auditEvents, time.Since(start).Round(time.Millisecond))
			exp := models.Experiment{WorkspaceID: p.WorkspaceID, ProjectID: p.ID, DatasetID: ds.ID, Name: "bench", CreatedAt: time.Now()}
			mustB(b, h.DB.CreateExperiment(ctx, &exp))
			for _, id := range large {
				mustB(b, h.DB.SetRunExperiment(ctx, p.WorkspaceID, id, exp.ID))
			}
			_, runToken, err := h.DB.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: p.WorkspaceID, Kind: models.ShareRun, RunID: large[0]})
			mustB(b, err)
			_, cmpToken, err := h.DB.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: p.WorkspaceID, Kind: models.ShareCompare, RunID: large[0], OtherRunID: large[1]})
			mustB(b, err)
			_, expToken, err := h.DB.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: p.WorkspaceID, Kind: models.ShareExperiment, ExperimentID: exp.ID})
			mustB(b, err)
			a, bb := large[0], large[1]
			pages := []struct{ name, path string }{
				{"compare", fmt.Sprintf("/compare?a=%d&b=%d", a, bb)},
				{"experiment", fmt.Sprintf("/experiments/%d", exp.ID)},
				{"shared-run", "/s/" + runToken},
				{"shared-run-page-50", "/s/" + runToken + "?page=50"},
				{"shared-compare", "/s/" + cmpToken},
				{"shared-experiment", "/s/" + expToken},
				{"runs-list", "/runs"},
				{"runs-list-last", "/runs?page=1000"},
				{"project", fmt.Sprintf("/projects/%d", p.ID)},
				{"dataset", fmt.Sprintf("/datasets/%d", ds.ID)},
				{"audit", "/audit"},
				{"shares", "/shares"},
			}
			for _, pg := range pages {
				timeAnswer(b, e, h, d, n, pg.name, pg.path, "")
			}
			for _, ex := range []struct{ name, path string }{
				{"run-export-json", fmt.Sprintf("/runs/%d/export.json", a)},
				{"run-export-csv", fmt.Sprintf("/runs/%d/export.csv", a)},
				{"dataset-export-csv", fmt.Sprintf("/datasets/%d/export.csv", ds.ID)},
			} {
				h.reports = newReportCache()
				f := serveExport(b, e, ex.path)
				b.Logf("%s %s %d: first byte %v, total %v (%d bytes), peak heap %.1f MiB", d, ex.name, n,
					f.first.Round(time.Millisecond), f.total.Round(time.Millisecond), f.bytes, float64(f.peak)/(1<<20))
				b.ReportMetric(float64(f.first.Microseconds())/1000, fmt.Sprintf("%s-%s-first-byte-ms", d, ex.name))
				b.ReportMetric(float64(f.peak)/(1<<20), fmt.Sprintf("%s-%s-peak-heap-MiB", d, ex.name))
			}
			// The API with a token: an account exists from here on, so the
			// pages above (local mode) are timed first.
			u, err := h.DB.CreateFirstOwner(ctx, p.WorkspaceID, models.NewUser{Email: "bench@example.com", Name: "Bench", Password: "correct horse battery"})
			mustB(b, err)
			_, secret, err := h.DB.CreateAPIToken(ctx, p.WorkspaceID, u.ID, "bench")
			mustB(b, err)
			var lastCursor int64
			{
				var all []models.Run
				all, err = h.DB.ListRuns(ctx, p.WorkspaceID, 0)
				mustB(b, err)
				lastCursor = all[min(len(all)-1, 100)].ID
			}
			api := []struct{ name, path string }{
				{"api-runs", "/api/v1/runs?limit=200"},
				{"api-runs-deep", fmt.Sprintf("/api/v1/runs?limit=200&cursor=%d", lastCursor)},
				{"api-run", fmt.Sprintf("/api/v1/runs/%d", a)},
				{"api-compare", fmt.Sprintf("/api/v1/compare?a=%d&b=%d", a, bb)},
				{"api-experiment", fmt.Sprintf("/api/v1/experiments/%d", exp.ID)},
				{"api-dataset", fmt.Sprintf("/api/v1/datasets/%d", ds.ID)},
				{"api-reviews", fmt.Sprintf("/api/v1/datasets/%d/reviews", ds.ID)},
			}
			for _, pg := range api {
				timeAnswer(b, e, h, d, n, pg.name, pg.path, secret)
			}
			for _, ex := range []struct{ name, path string }{
				{"api-results", fmt.Sprintf("/api/v1/runs/%d/results", a)},
				{"api-export-json", fmt.Sprintf("/api/v1/runs/%d/export.json", a)},
			} {
				req := httptest.NewRequest(http.MethodGet, ex.path, nil)
				req.Header.Set("Authorization", "Bearer "+secret)
				h.reports = newReportCache()
				peak := startHeapPeak()
				w := &timedResponse{header: http.Header{}, start: time.Now()}
				e.ServeHTTP(w, req)
				f := exportFigures{first: w.first, total: time.Since(w.start), bytes: w.n, peak: peak.Stop()}
				if w.code != http.StatusOK {
					b.Fatalf("GET %s = %d", req.URL, w.code)
				}
				b.Logf("%s %s %d: first byte %v, total %v (%d bytes), peak heap %.1f MiB", d, ex.name, n,
					f.first.Round(time.Millisecond), f.total.Round(time.Millisecond), f.bytes, float64(f.peak)/(1<<20))
				b.ReportMetric(float64(f.first.Microseconds())/1000, fmt.Sprintf("%s-%s-first-byte-ms", d, ex.name))
				b.ReportMetric(float64(f.peak)/(1<<20), fmt.Sprintf("%s-%s-peak-heap-MiB", d, ex.name))
			}
		}
	}
}

// timeAnswer serves path (with a bearer token when secret is not empty)
// on a fresh report cache, waits for what that first view started in the
// background, serves it three more times and logs the first view and the
// median of the others.
func timeAnswer(b *testing.B, e *echo.Echo, h *Handlers, d models.Dialect, n int, name, path, secret string) {
	b.Helper()
	serve := func(preparing bool) (time.Duration, int) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if secret != "" {
			req.Header.Set("Authorization", "Bearer "+secret)
		}
		rec := httptest.NewRecorder()
		start := time.Now()
		e.ServeHTTP(rec, req)
		took := time.Since(start)
		// A first view may find its figures being prepared: the API then
		// answers 503 (the pages say so with a 200).
		if rec.Code != http.StatusOK && (!preparing || rec.Code != http.StatusServiceUnavailable) {
			b.Fatalf("GET %s: %d %.500s", path, rec.Code, rec.Body.String())
		}
		if strings.Contains(rec.Body.String(), `data-testid="results-preparing"`) || rec.Code == http.StatusServiceUnavailable {
			b.Logf("%s %s: preparing", d, name)
		}
		return took, rec.Body.Len()
	}
	h.reports = newReportCache()
	first, size := serve(true)
	start := time.Now()
	h.reports.settling.Wait()
	bg := time.Since(start)
	var warm []time.Duration
	for range 3 {
		t, _ := serve(false)
		warm = append(warm, t)
	}
	// What those views started (the compare page's paired tests, once
	// its pairing is cached) ends before the next answer is timed.
	h.reports.settling.Wait()
	slices.Sort(warm)
	b.Logf("%s %s %d: first %v (background after it %v), then median %v, %d bytes", d, name, n,
		first.Round(100*time.Microsecond), bg.Round(time.Millisecond), warm[1].Round(100*time.Microsecond), size)
	b.ReportMetric(float64(first.Microseconds())/1000, fmt.Sprintf("%s-%s-first-ms", d, name))
	b.ReportMetric(float64(warm[1].Microseconds())/1000, fmt.Sprintf("%s-%s-ms", d, name))
}

// BenchmarkRunsListGrowth times, on SQLite (or the database
// BATCHEVAL_BENCH_LARGE_DB names), the lists of a workspace's
// runs for workspaces of 200 and 2,000 small finished runs (their figures
// stored; BATCHEVAL_BENCH_RUNS_LIST lists other counts): the runs list
// (its first and its 40th page), the project page, the projects list and
// the API's first page of 200 and the share links' page (whose form
// offers the newest runs), each the median of five views after a
// first, with its ratio to the smallest workspace's. Run with
// -benchtime=1x.
func BenchmarkRunsListGrowth(b *testing.B) {
	counts := []int{200, 2000}
	if v := os.Getenv("BATCHEVAL_BENCH_RUNS_LIST"); v != "" {
		counts = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("BATCHEVAL_BENCH_RUNS_LIST=%q: %q is not a count", v, f)
			}
			counts = append(counts, n)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		base := map[string]time.Duration{}
		for _, n := range counts {
			d := models.SQLite
			if v := os.Getenv("BATCHEVAL_BENCH_LARGE_DB"); v != "" {
				d = models.Dialect(v)
			}
			e, h, p := benchServer(b, d)
			small, ids := synthDataset(b, h.DB, p, 10)
			for range n {
				id := synthRunOn(b, h.DB, p, small, ids, 0)
				mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, id))
			}
			for _, pg := range []struct{ name, path string }{
				{"runs", "/runs"},
				{"runs-page-40", "/runs?page=40"},
				{"project", fmt.Sprintf("/projects/%d", p.ID)},
				{"projects", "/"},
				{"api-runs", "/api/v1/runs?limit=200"},
				{"shares", "/shares"},
			} {
				servePage(b, e, pg.path)
				var took []time.Duration
				for range 5 {
					took = append(took, servePage(b, e, pg.path))
				}
				slices.Sort(took)
				med := took[2]
				if _, ok := base[pg.name]; !ok {
					base[pg.name] = med
				}
				b.Logf("%s, %d runs: median %v (x%.2f the %d runs')", pg.name, n, med.Round(100*time.Microsecond),
					med.Seconds()/base[pg.name].Seconds(), counts[0])
				b.ReportMetric(float64(med.Microseconds())/1000, fmt.Sprintf("%s-%d-ms", pg.name, n))
			}
		}
	}
}
