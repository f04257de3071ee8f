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

// benchPageSizes are the run sizes of BenchmarkComparisonPages: 1,000 by
// default so `make bench` stays short; BATCHEVAL_BENCH_PAGES lists others
// (comma-separated, e.g. "10000,100000").
func benchPageSizes(b *testing.B) []int {
	v := os.Getenv("BATCHEVAL_BENCH_PAGES")
	if v == "" {
		return []int{1000}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("BATCHEVAL_BENCH_PAGES=%q: %q is not a size", v, f)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkComparisonPages times, through the real Echo app on SQLite, the
// pages that compare finished runs: the experiment page of two runs of one
// dataset, the compare page of the two, the experiment's, the comparison's
// and one run's share links and the experiment's HTML report, for runs of
// BATCHEVAL_BENCH_PAGES samples synthesized straight into the database
// with their summaries stored (report.StoreStats, as the runner leaves a
// finished run; not timed). Each page is timed on its first view (fresh
// handlers, nothing cached: small runs' paired tests are computed in the
// request, large runs' start in the background, whose time is logged) and
// as the median of BATCHEVAL_BENCH_PAGE_VIEWS (3) views after it and
// after any background work it started. BATCHEVAL_BENCH_PAGE_ONLY names
// one page to time alone (e.g. "compare"). Run with -benchtime=1x.
func BenchmarkComparisonPages(b *testing.B) {
	views := 3
	if v, err := strconv.Atoi(os.Getenv("BATCHEVAL_BENCH_PAGE_VIEWS")); err == nil && v >= 0 {
		views = v
	}
	ctx := context.Background()
	for b.Loop() {
		for _, n := range benchPageSizes(b) {
			e, h, p := benchServer(b, models.SQLite)
			start := time.Now()
			ds, ids := synthDataset(b, h.DB, p, n)
			a := synthRunOn(b, h.DB, p, ds, ids, 0)
			bb := synthRunOn(b, h.DB, p, ds, ids, 1)
			synthTook := time.Since(start)
			start = time.Now()
			for _, id := range []int64{a, bb} {
				mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, id))
			}
			storeTook := time.Since(start)
			exp := models.Experiment{WorkspaceID: p.WorkspaceID, ProjectID: p.ID, DatasetID: ds.ID, Name: "bench", CreatedAt: time.Now()}
			mustB(b, h.DB.CreateExperiment(ctx, &exp))
			for _, id := range []int64{a, bb} {
				mustB(b, h.DB.SetRunExperiment(ctx, p.WorkspaceID, id, exp.ID))
			}
			_, expToken, err := h.DB.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: p.WorkspaceID, Kind: models.ShareExperiment, ExperimentID: exp.ID})
			mustB(b, err)
			_, cmpToken, err := h.DB.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: p.WorkspaceID, Kind: models.ShareCompare, RunID: a, OtherRunID: bb})
			mustB(b, err)
			_, runToken, err := h.DB.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: p.WorkspaceID, Kind: models.ShareRun, RunID: a})
			mustB(b, err)
			b.Logf("%d samples: synthesized in %v, summaries stored in %v", n, synthTook.Round(time.Millisecond), storeTook.Round(time.Millisecond))
			if os.Getenv("BATCHEVAL_BENCH_PAGE_PARTS") == "1" {
				// Where a compare page's first view goes: reading one
				// run's stored scores of one criterion, and the pairing.
				start = time.Now()
				_, err := h.DB.ListRunSampleScores(ctx, a, 0, false)
				mustB(b, err)
				read := time.Since(start)
				bctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})
				var cmp comparison
				cmp.a, _ = h.DB.FindRun(ctx, p.WorkspaceID, a)
				cmp.b, _ = h.DB.FindRun(ctx, p.WorkspaceID, bb)
				cmp.dsA, cmp.dsB = ds, ds
				cmp.critA, cmp.critB = cmp.a.RubricSnapshot.Criteria[0], cmp.b.RubricSnapshot.Criteria[0]
				start = time.Now()
				repA, repB, err := h.compareReports(bctx, cmp)
				mustB(b, err)
				reports := time.Since(start)
				start = time.Now()
				matchSamples(repA, repB, cmp, true)
				b.Logf("%d samples: one run's stored scores read in %v; both runs' summaries and scores in %v; paired and sorted in %v",
					n, read.Round(time.Millisecond), reports.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
				h.reports = newReportCache()
			}
			pages := []struct{ name, path string }{
				{"experiment", fmt.Sprintf("/experiments/%d", exp.ID)},
				{"compare", fmt.Sprintf("/compare?a=%d&b=%d", a, bb)},
				{"shared-experiment", "/s/" + expToken},
				{"shared-compare", "/s/" + cmpToken},
				{"shared-run", "/s/" + runToken},
				{"experiment-html", fmt.Sprintf("/experiments/%d/report.html", exp.ID)},
			}
			for _, pg := range pages {
				if only := os.Getenv("BATCHEVAL_BENCH_PAGE_ONLY"); only != "" && only != pg.name {
					continue
				}
				// A fresh cache for each page's first view, so each pays
				// for what it reads and computes itself.
				h.reports = newReportCache()
				first := servePage(b, e, pg.path)
				// What the first view started in the background (the
				// paired tests of large runs) ends before the next views,
				// which then show the whole page.
				start := time.Now()
				h.reports.settling.Wait()
				if bg := time.Since(start); bg > 10*time.Millisecond {
					b.Logf("%s %d samples: background work after the first view ended %v later", pg.name, n, bg.Round(time.Millisecond))
				}
				var warm []time.Duration
				for range views {
					warm = append(warm, servePage(b, e, pg.path))
				}
				slices.Sort(warm)
				med := time.Duration(0)
				if len(warm) > 0 {
					med = warm[len(warm)/2]
				}
				b.Logf("%s %d samples: first view %v, then median of %d %v", pg.name, n, first.Round(time.Millisecond), views, med.Round(time.Millisecond))
				b.ReportMetric(float64(first.Microseconds())/1000, fmt.Sprintf("%s-%dk-first-ms", pg.name, n/1000))
				if views > 0 {
					b.ReportMetric(float64(med.Microseconds())/1000, fmt.Sprintf("%s-%dk-ms", pg.name, n/1000))
				}
			}
		}
	}
}

// servePage GETs path from the Echo app and returns the server time; any
// answer but 200 fails the benchmark.
func servePage(b *testing.B, e *echo.Echo, path string) time.Duration {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	rec := httptest.NewRecorder()
	start := time.Now()
	e.ServeHTTP(rec, req)
	took := time.Since(start)
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s: %d %.500s", path, rec.Code, rec.Body.String())
	}
	return took
}
