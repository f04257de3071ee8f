package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/web"
)

// BenchmarkReviewAndAlignPages times, on SQLite, the review queue page and
// the alignment's start (the split and the draft's disagreements) and page
// of a finished run of BATCHEVAL_BENCH_REVIEW samples (comma-separated
// sizes; 1,000 by default) synthesized straight into the database with its
// summary and per-sample results stored as the runner leaves them (not
// timed). Each is timed both ways: from the run's full report (the path
// before the stored results were read; nothing cached, as on a first view)
// and from the stored results (first view with a fresh cache, then the
// median of three). With BATCHEVAL_BENCH_REVIEW_HELDOUT=1 two more runs of
// the dataset are synthesized and the alignment page includes their
// held-out comparison; past pairLiveSamples that comparison is computed in
// the background, and the page is timed on its first view (which starts
// it), the background computation and a second view after it. Run with
// -benchtime=1x.
func BenchmarkReviewAndAlignPages(b *testing.B) {
	sizes := []int{1000}
	if v := os.Getenv("BATCHEVAL_BENCH_REVIEW"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("BATCHEVAL_BENCH_REVIEW=%q: %q is not a size", v, f)
			}
			sizes = append(sizes, n)
		}
	}
	heldOut := os.Getenv("BATCHEVAL_BENCH_REVIEW_HELDOUT") == "1"
	ctx := context.Background()
	for b.Loop() {
		for _, n := range sizes {
			e, h, p := benchServer(b, models.SQLite)
			start := time.Now()
			ds, ids := synthDataset(b, h.DB, p, n)
			src := synthRunOn(b, h.DB, p, ds, ids, 0)
			runs := []int64{src}
			if heldOut {
				runs = append(runs, synthRunOn(b, h.DB, p, ds, ids, 1), synthRunOn(b, h.DB, p, ds, ids, 2))
			}
			synthTook := time.Since(start)
			start = time.Now()
			for _, id := range runs {
				mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, id))
			}
			b.Logf("%d samples: synthesized in %v, summaries stored in %v", n, synthTook.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
			lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})
			run, err := h.DB.FindRun(ctx, p.WorkspaceID, src)
			mustB(b, err)
			// A reviewer who rated a few samples, so the queue opens on the
			// first sample they have not rated.
			crit := run.RubricSnapshot.Criteria[0]
			for _, id := range ids[:min(len(ids), 20)] {
				v := 3.0
				_, err := h.DB.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, RowID: id, Criterion: crit.Name,
					HumanColumn: crit.HumanColumn, Reviewer: "Ann", RunID: &src, Lo: crit.Lo, Hi: crit.Hi, Score: &v})
				mustB(b, err)
			}
			queue := func(order string, full bool) func() {
				return func() {
					q := url.Values{"run": {strconv.FormatInt(src, 10)}, "criterion": {"0"}, "order": {order}}
					req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/datasets/%d/review?%s", ds.ID, q.Encode()), nil).WithContext(lctx)
					req.AddCookie(&http.Cookie{Name: reviewerCookie, Value: "Ann"})
					rec := httptest.NewRecorder()
					c := e.NewContext(req, rec)
					c.SetParamNames("id")
					c.SetParamValues(strconv.FormatInt(ds.ID, 10))
					mustB(b, h.reviewQueue(c, full))
					if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="review-sample"`) {
						b.Fatalf("queue: %d %.500s", rec.Code, rec.Body.String())
					}
				}
			}
			var plan alignmentPlan
			start1 := func(full bool) func() {
				return func() {
					var err error
					plan, err = h.planAlignment(lctx, run, 0, 1, 0.2, full)
					mustB(b, err)
				}
			}
			// alignView renders the alignment's page; pending says the
			// held-out comparison may be still being computed (a large pair
			// from stored results: its first view starts it).
			alignView := func(full, pending bool) web.AlignmentView {
				a := models.Alignment{ID: 1, SourceRunID: src, Seed: 1, CalibrationRowIDs: plan.calibration, HeldOutRowIDs: plan.heldOut,
					BaseVersion: 1, Status: models.AlignmentDrafted, Draft: align.TemplateDraft(crit, plan.worst)}
				if heldOut {
					nv := 2
					a.Status, a.NewVersion, a.BeforeRunID, a.AfterRunID = models.AlignmentAccepted, &nv, &runs[1], &runs[2]
				}
				req := httptest.NewRequest(http.MethodGet, "/alignments/1", nil).WithContext(lctx)
				c := e.NewContext(req, httptest.NewRecorder())
				v, err := h.alignmentViewWith(c, a, run, crit, draftFormOf(a.Draft), nil, full)
				mustB(b, err)
				var sb strings.Builder
				mustB(b, web.AlignmentPage(v).Render(ctx, &sb))
				if len(v.Worst) == 0 || (heldOut && !pending && len(v.Comparisons) == 0) {
					b.Fatalf("alignment page: %d disagreements, %d comparisons (%s)", len(v.Worst), len(v.Comparisons), v.CompareNote)
				}
				return v
			}
			alignPage := func(full bool) func() {
				return func() { alignView(full, false) }
			}
			// allocated is what fn allocates, in MB (the full report's
			// samples and rows against the stored results' columns).
			allocated := func(fn func()) float64 {
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				fn()
				runtime.ReadMemStats(&m1)
				return float64(m1.TotalAlloc-m0.TotalAlloc) / (1 << 20)
			}
			timed := func(name string, fn func()) {
				h.reports = newReportCache()
				start := time.Now()
				mb := allocated(fn)
				first := time.Since(start)
				var warm []time.Duration
				for range 3 {
					start := time.Now()
					fn()
					warm = append(warm, time.Since(start))
				}
				slices.Sort(warm)
				b.Logf("%s %d samples: first %v (%.0f MB allocated), then median of 3 %v", name, n, first.Round(time.Millisecond), mb, warm[1].Round(time.Millisecond))
				b.ReportMetric(float64(first.Microseconds())/1000, fmt.Sprintf("%s-%dk-first-ms", name, n/1000))
			}
			once := func(name string, fn func()) {
				h.reports = newReportCache()
				start := time.Now()
				mb := allocated(fn)
				took := time.Since(start)
				b.Logf("%s %d samples: %v (%.0f MB allocated)", name, n, took.Round(time.Millisecond), mb)
				b.ReportMetric(float64(took.Microseconds())/1000, fmt.Sprintf("%s-%dk-ms", name, n/1000))
			}
			// The stored path first: the plan it makes is the page's input.
			for _, o := range []string{orderDisagreement, orderUncertain, orderRandom} {
				timed("queue-"+o+"-stored", queue(o, false))
			}
			timed("align-start-stored", start1(false))
			if heldOut && n > pairLiveSamples {
				// The held-out comparison of a large pair is computed in the
				// background: the first view starts it and answers without
				// it, a view after it ends reads it from the cache.
				h.reports = newReportCache()
				start := time.Now()
				v := alignView(false, true)
				first := time.Since(start)
				if len(v.Comparisons) != 0 || !strings.Contains(v.CompareNote, "being computed once") {
					b.Fatalf("first view of a large pair: %d comparisons, note %q; want it pending", len(v.Comparisons), v.CompareNote)
				}
				start = time.Now()
				h.reports.settling.Wait()
				background := time.Since(start)
				start = time.Now()
				alignView(false, false)
				second := time.Since(start)
				b.Logf("align-page-stored %d samples: first view %v (comparison pending), background comparison %v more, second view %v",
					n, first.Round(time.Millisecond), background.Round(time.Millisecond), second.Round(time.Millisecond))
				b.ReportMetric(float64(first.Microseconds())/1000, fmt.Sprintf("align-page-stored-%dk-first-ms", n/1000))
				b.ReportMetric(float64(background.Microseconds())/1000, fmt.Sprintf("align-page-stored-%dk-background-ms", n/1000))
				b.ReportMetric(float64(second.Microseconds())/1000, fmt.Sprintf("align-page-stored-%dk-second-ms", n/1000))
			} else {
				timed("align-page-stored", alignPage(false))
			}
			if os.Getenv("BATCHEVAL_BENCH_REVIEW_FULL") != "0" {
				once("queue-disagreement-full", queue(orderDisagreement, true))
				once("align-start-full", start1(true))
				once("align-page-full", alignPage(true))
			}
		}
	}
}
