package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkRunningRunPageRatings times, on SQLite in one process, views
// of the page of a RUNNING run of BATCHEVAL_BENCH_QUEUE_BIG samples
// (100,000 by default) whose report uses the browser ratings (Ann's and
// Bob's on a tenth of the samples, a third rated twice, one in a hundred
// withdrawn, and Cy's on a hundredth after the cut-off, as
// BenchmarkReviewPagesAtScale), while nothing changes: its shared figures
// are computed once per path beforehand, so a view is what each view
// costs. The old path (liveFigures.readEveryRating: every current rating
// read now and at the cut-off at each view, for the box and the figures'
// reviewers key) against the new (the box counted in SQL, the figures'
// key proved by the run's ratings proof), seven views each, interleaved;
// the medians of time and bytes allocated (runtime.MemStats.TotalAlloc).
// Then the two parts apart: the box, and the figures' key. Run with
// -benchtime=1x.
func BenchmarkRunningRunPageRatings(b *testing.B) {
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
		var rs []models.ReviewRating
		for i := 1; i < n; i += 10 {
			for _, who := range []string{"Ann", "Bob"} {
				v := 3.0
				r := models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, RowID: ids[i], Criterion: crit.Name, HumanColumn: crit.HumanColumn,
					Reviewer: who, RunID: &src, Lo: crit.Lo, Hi: crit.Hi, Score: &v, Tags: []string{}, CreatedAt: now}
				rs = append(rs, r)
				if i%3 == 0 {
					rs = append(rs, r) // rated again
				}
				if i%100 == 1 {
					r.Score = nil // withdrawn
					rs = append(rs, r)
				}
			}
		}
		mustB(b, h.DB.Gorm.CreateInBatches(&rs, 500).Error)
		_, err = h.DB.SetRunHumanSource(ctx, p.WorkspaceID, src, models.HumansBrowser, "bench")
		mustB(b, err)
		var later []models.ReviewRating
		for i := 5; i < n; i += 100 {
			v := 2.0
			later = append(later, models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, RowID: ids[i], Criterion: crit.Name, HumanColumn: crit.HumanColumn,
				Reviewer: "Cy", RunID: &src, Lo: crit.Lo, Hi: crit.Hi, Score: &v, Tags: []string{}, CreatedAt: now})
		}
		mustB(b, h.DB.Gorm.CreateInBatches(&later, 500).Error)
		// Running: its page shows the shared live figures.
		mustB(b, h.DB.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, src).Error)
		run, err = h.DB.GetRun(ctx, src)
		mustB(b, err)
		// A view waits for the figures' computation (seconds at this size)
		// instead of showing "computing": the warm-up views compute them.
		h.live.wait = 10 * time.Minute

		type took struct {
			d     time.Duration
			bytes uint64
		}
		measure := func(fn func()) took {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			start := time.Now()
			fn()
			d := time.Since(start)
			runtime.ReadMemStats(&m1)
			return took{d, m1.TotalAlloc - m0.TotalAlloc}
		}
		median := func(ts []took) took {
			ts = slices.Clone(ts)
			slices.SortFunc(ts, func(a, b took) int { return int(a.d - b.d) })
			return ts[len(ts)/2]
		}
		page := fmt.Sprintf("/runs/%d", src)
		view := func(old bool) func() {
			return func() {
				h.live.readEveryRating = old
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, page, nil))
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="provisional"`) {
					b.Fatalf("GET %s: %d, want a running run's figures\n%.500s", page, rec.Code, rec.Body.String())
				}
			}
		}
		// Compare the two ways and their ratio, seven times each,
		// interleaved (the load moves).
		compare := func(name string, oldFn, newFn func()) {
			var olds, news []took
			for range 7 {
				olds = append(olds, measure(oldFn))
				news = append(news, measure(newFn))
			}
			o, nw := median(olds), median(news)
			b.Logf("%s, running run of %d samples (liveratings49): old %v, %d KB; new %v, %d KB: %.2fx time, %.0fx bytes",
				name, n, o.d.Round(time.Microsecond), o.bytes/1024, nw.d.Round(time.Microsecond), nw.bytes/1024,
				float64(o.d)/float64(nw.d), float64(o.bytes)/float64(max(nw.bytes, 1)))
		}
		// Warm up: each path computes its figures once (their keys
		// differ), the new one stores the ratings proof.
		for _, old := range []bool{true, false, true, false} {
			view(old)()
		}
		builds := h.live.builds.Load()
		compare("run page view", view(true), view(false))
		if got := h.live.builds.Load(); got != builds {
			b.Fatalf("%d computations of the figures while measuring the views, want none", got-builds)
		}
		// The parts apart. The figures' report to count the box against.
		lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})
		h.live.readEveryRating = false
		onDemand, err := report.ChosenReviewsOnDemand(lctx, h.DB, run)
		mustB(b, err)
		lv, _, err := h.liveFiguresFor(lctx, run, report.Options{Reviews: onDemand})
		mustB(b, err)
		compare("box", func() {
			pre, err := report.ReadBrowserReviews(ctx, h.DB, run)
			mustB(b, err)
			_ = humanSourceView(run, lv.rep, pre, true)
		}, func() {
			_, err := h.countedHumanSourceView(ctx, run, lv.rep, true)
			mustB(b, err)
		})
		compare("figures' key", func() {
			pre, err := report.ReadBrowserReviews(ctx, h.DB, run)
			mustB(b, err)
			_ = reviewersKey(pre)
		}, func() {
			pre, err := report.ChosenReviewsOnDemand(ctx, h.DB, run)
			mustB(b, err)
			_, err = report.RatingsKey(ctx, h.DB, run, pre)
			mustB(b, err)
		})
	}
}
