package handlers

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkReviewQueueRatedInSQL times, on SQLite in one process, how a
// finished run's queue counts the reviewer's rated samples and finds the
// first unrated one: the old way (oldStoredQueueMarks: the rated ids read
// into Go, sent back as IN lists of 500 for their ranks, filtered in Go)
// and the new (storedQueueMarks: one statement, or the rated ranks
// streamed for the random order), on BATCHEVAL_BENCH_QUEUE_BIG samples
// (100,000 by default) of which a tenth are rated by the reviewer, in
// every order, checking both give the same. It reports the median of
// five of each, their ratio old over new and the bytes each allocates.
// Run with -benchtime=1x.
func BenchmarkReviewQueueRatedInSQL(b *testing.B) {
	n := benchSizeAbove(b, "BATCHEVAL_BENCH_QUEUE_BIG", 100000, 1000)
	ctx := context.Background()
	for b.Loop() {
		_, h, p := benchServer(b, models.SQLite)
		ds, ids := synthDataset(b, h.DB, p, n)
		src := synthRunOn(b, h.DB, p, ds, ids, 0)
		mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, src))
		run, err := h.DB.FindRun(ctx, p.WorkspaceID, src)
		mustB(b, err)
		crit := run.RubricSnapshot.Criteria[0]
		// A tenth of the samples rated by Ann (every tenth from the
		// second, some rated twice), and as many by Bob.
		now := time.Now().UTC()
		var rs []models.ReviewRating
		for i := 1; i < n; i += 10 {
			for _, who := range []string{"Ann", "Bob"} {
				v := 3.0
				rs = append(rs, models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, RowID: ids[i], Criterion: crit.Name, HumanColumn: crit.HumanColumn,
					Reviewer: who, RunID: &src, Lo: crit.Lo, Hi: crit.Hi, Score: &v, Tags: []string{}, CreatedAt: now})
				if i%3 == 0 {
					rs = append(rs, rs[len(rs)-1]) // rated again
				}
			}
		}
		for i := range rs {
			rs[i].ID = 0
		}
		mustB(b, h.DB.Gorm.CreateInBatches(&rs, 500).Error)
		who := models.ReviewerRatings{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, Criterion: crit.Name, Reviewer: "Ann", Lo: crit.Lo, Hi: crit.Hi}
		type took struct {
			d     time.Duration
			bytes uint64
		}
		measure := func(fn func() (int, int)) (took, int, int) {
			var ts []took
			var rated, first int
			for range 5 {
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				start := time.Now()
				rated, first = fn()
				d := time.Since(start)
				runtime.ReadMemStats(&m1)
				ts = append(ts, took{d, m1.TotalAlloc - m0.TotalAlloc})
			}
			slices.SortFunc(ts, func(a, b took) int { return int(a.d - b.d) })
			return ts[2], rated, first
		}
		for _, o := range queueOrderSorts {
			var perm []int
			if o.order == orderRandom {
				perm = randomOrder(n, 7)
			}
			old, oldRated, oldFirst := measure(func() (int, int) {
				r, f, err := oldStoredQueueMarks(ctx, h, src, 0, o.sort, o.dir, n, perm, &who)
				mustB(b, err)
				return r, f
			})
			cur, rated, first := measure(func() (int, int) {
				r, f, err := h.storedQueueMarks(ctx, src, 0, o.sort, o.dir, n, perm, who)
				mustB(b, err)
				return r, f
			})
			if rated != oldRated || first != oldFirst || rated != (n+8)/10 {
				b.Fatalf("%s: %d rated, first unrated %d; the old way gave %d, %d", o.order, rated, first, oldRated, oldFirst)
			}
			b.Logf("%s, %d samples, %d rated: old %v (%d KB allocated), new %v (%d KB): %.1fx faster, %.1fx less allocated", o.order, n, rated,
				old.d.Round(time.Microsecond), old.bytes/1024, cur.d.Round(time.Microsecond), cur.bytes/1024,
				float64(old.d)/float64(cur.d), float64(old.bytes)/float64(max(cur.bytes, 1)))
			b.ReportMetric(float64(old.d)/float64(cur.d), o.order+"-old/new-time")
			b.ReportMetric(float64(old.bytes)/float64(max(cur.bytes, 1)), o.order+"-old/new-bytes")
		}
	}
}
