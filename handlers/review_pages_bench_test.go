package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkReviewPagesAtScale times, on SQLite in one process, the server
// side of the review queue (/datasets/:id/review), a sample page
// (/runs/:id/samples/:row) and the run page of a finished run of
// BATCHEVAL_BENCH_QUEUE_BIG samples (100,000 by default) whose report uses
// the browser ratings: 10,000 samples rated by Ann and as many by Bob on
// the first criterion, a third of them twice, one in ten withdrawn since,
// and ratings after the cut-off. Each page is viewed twice to warm up,
// then seven times: the median time and bytes allocated
// (runtime.MemStats.TotalAlloc). Beside them, in the same process, the
// read of the reviews each page passes to the report: every review of the
// run's criteria (as main read it) and the current ones (reviews47),
// each a median of five, so the page's cost on main is the page's minus
// the new read plus the old. With BATCHEVAL_BENCH_PROFILE=file, twenty
// more views of each page are CPU-profiled into file.<page>.
// Run with -benchtime=1x.
func BenchmarkReviewPagesAtScale(b *testing.B) {
	n := benchSizeAbove(b, "BATCHEVAL_BENCH_QUEUE_BIG", 100000, 1000)
	ctx := context.Background()
	for b.Loop() {
		e, h, p := benchServer(b, models.SQLite)
		ds, ids := synthDataset(b, h.DB, p, n)
		src := synthRunOn(b, h.DB, p, ds, ids, 0)
		run, err := h.DB.FindRun(ctx, p.WorkspaceID, src)
		mustB(b, err)
		crit := run.RubricSnapshot.Criteria[0]
		now := time.Now().UTC()
		rate := func(from int, withdraw bool) {
			var rs []models.ReviewRating
			for i := from; i < n; i += 10 {
				for _, who := range []string{"Ann", "Bob"} {
					v := 3.0
					r := models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, RowID: ids[i], Criterion: crit.Name, HumanColumn: crit.HumanColumn,
						Reviewer: who, RunID: &src, Lo: crit.Lo, Hi: crit.Hi, Score: &v, Tags: []string{}, CreatedAt: now}
					rs = append(rs, r)
					if i%3 == 0 {
						rs = append(rs, r) // rated again
					}
					if withdraw && i%100 == 1 {
						r.Score = nil
						rs = append(rs, r)
					}
				}
			}
			for i := range rs {
				rs[i].ID = 0
			}
			mustB(b, h.DB.Gorm.CreateInBatches(&rs, 500).Error)
		}
		rate(1, true)
		_, err = h.DB.SetRunHumanSource(ctx, p.WorkspaceID, src, models.HumansBrowser, "bench")
		mustB(b, err)
		mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, src))
		// After the cut-off: every hundredth sample rated again.
		var later []models.ReviewRating
		for i := 5; i < n; i += 100 {
			v := 2.0
			later = append(later, models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, RowID: ids[i], Criterion: crit.Name, HumanColumn: crit.HumanColumn,
				Reviewer: "Cy", RunID: &src, Lo: crit.Lo, Hi: crit.Hi, Score: &v, Tags: []string{}, CreatedAt: now})
		}
		mustB(b, h.DB.Gorm.CreateInBatches(&later, 500).Error)

		type took struct {
			d     time.Duration
			bytes uint64
		}
		var medianAfter func(times int, prep, fn func()) took
		median := func(times int, fn func()) took { return medianAfter(times, func() {}, fn) }
		medianAfter = func(times int, prep, fn func()) took {
			var ts []took
			for range times {
				prep() // untimed
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				start := time.Now()
				fn()
				d := time.Since(start)
				runtime.ReadMemStats(&m1)
				ts = append(ts, took{d, m1.TotalAlloc - m0.TotalAlloc})
			}
			slices.SortFunc(ts, func(a, b took) int { return int(a.d - b.d) })
			return ts[len(ts)/2]
		}
		view := func(e *echo.Echo, path string) func() {
			return func() {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.AddCookie(&http.Cookie{Name: reviewerCookie, Value: "Ann"})
				e.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d\n%s", path, rec.Code, rec.Body.String())
				}
			}
		}
		pages := []struct {
			name, path string
			cur        func() *report.BrowserReviews
		}{
			{"review queue", fmt.Sprintf("/datasets/%d/review?run=%d&criterion=0", ds.ID, src), func() *report.BrowserReviews {
				pre, err := report.ReadChosenReviews(ctx, h.DB, run)
				mustB(b, err)
				return pre
			}},
			{"sample page", fmt.Sprintf("/runs/%d/samples/%d", src, ids[n/2]), func() *report.BrowserReviews {
				pre, err := report.ReadChosenReviews(ctx, h.DB, run)
				mustB(b, err)
				return pre
			}},
			{"run page", fmt.Sprintf("/runs/%d", src), func() *report.BrowserReviews {
				pre, err := report.ReadBrowserReviews(ctx, h.DB, run)
				mustB(b, err)
				return pre
			}},
		}
		every := func() {
			// main's read: the run's choice and scales, every review of
			// the run's criteria and the excluded raters.
			_, err := h.DB.FindRunHumanSource(ctx, run.ID)
			mustB(b, err)
			_, _, err = h.DB.RunHumanScales(ctx, run)
			mustB(b, err)
			names := []string{}
			for _, c := range run.RubricSnapshot.Criteria {
				names = append(names, c.Name)
			}
			_, err = h.DB.ListCriteriaRatings(ctx, p.WorkspaceID, ds.ID, names, 0)
			mustB(b, err)
			_, err = h.DB.ExcludedRaters(ctx, p.WorkspaceID)
			mustB(b, err)
		}
		oldRead := median(5, every)
		for _, pg := range pages {
			v := view(e, pg.path)
			v()
			v()
			page := median(7, v)
			read := median(5, func() { pg.cur() })
			est := page.d - read.d + oldRead.d
			estBytes := page.bytes - read.bytes + oldRead.bytes
			// The view as before ratings48: with the run's ratings proof
			// dropped before each, it reads and hashes every current
			// rating to key the stored results, as main did (and stores
			// the proof again: a few small queries and one row).
			unproved := medianAfter(7, func() {
				mustB(b, h.DB.Gorm.Exec("DELETE FROM run_ratings_proofs WHERE run_id = ?", src).Error)
			}, v)
			v() // the proof stored again
			proved := median(7, v)
			b.Logf("%s, %d samples (ratings48): proved %v, %d KB a view; unproved (every current rating read and hashed) %v, %d KB: %.2fx time, %.2fx bytes",
				pg.name, n, proved.d.Round(time.Microsecond), proved.bytes/1024, unproved.d.Round(time.Microsecond), unproved.bytes/1024,
				float64(unproved.d)/float64(proved.d), float64(unproved.bytes)/float64(max(proved.bytes, 1)))
			b.Logf("%s, %d samples: %v, %d KB a view; its reviews' read %v, %d KB (every review, as main: %v, %d KB); the view on main ~%v, ~%d KB: %.2fx time, %.2fx bytes",
				pg.name, n, page.d.Round(time.Microsecond), page.bytes/1024, read.d.Round(time.Microsecond), read.bytes/1024,
				oldRead.d.Round(time.Microsecond), oldRead.bytes/1024, est.Round(time.Microsecond), estBytes/1024,
				float64(est)/float64(page.d), float64(estBytes)/float64(max(page.bytes, 1)))
		}
		// The run page's human-ratings box, as before ratings48 (every
		// current rating now and at the cut-off read, counted in Go) and
		// now (counted in SQL), in this process.
		sum, err := report.LoadSummary(ctx, h.DB, p.WorkspaceID, src, report.Options{})
		mustB(b, err)
		oldBox := median(5, func() {
			pre, err := report.ReadBrowserReviews(ctx, h.DB, run)
			mustB(b, err)
			_ = humanSourceView(run, sum, pre, true)
		})
		newBox := median(5, func() {
			_, err := h.countedHumanSourceView(ctx, run, sum, true)
			mustB(b, err)
		})
		b.Logf("run page's box, %d samples (ratings48): read and counted in Go %v, %d KB; counted in SQL %v, %d KB: %.2fx time, %.2fx bytes",
			n, oldBox.d.Round(time.Microsecond), oldBox.bytes/1024, newBox.d.Round(time.Microsecond), newBox.bytes/1024,
			float64(oldBox.d)/float64(newBox.d), float64(oldBox.bytes)/float64(max(newBox.bytes, 1)))
		if f := os.Getenv("BATCHEVAL_BENCH_PROFILE"); f != "" {
			for _, pg := range pages {
				out, err := os.Create(f + "." + strings.ReplaceAll(pg.name, " ", "-"))
				mustB(b, err)
				mustB(b, pprof.StartCPUProfile(out))
				v := view(e, pg.path)
				for range 20 {
					v()
				}
				pprof.StopCPUProfile()
				mustB(b, out.Close())
			}
		}
	}
}
