package report

import (
	"context"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// BenchmarkReportReadsCurrentRatings times, on SQLite in one process, how
// a report that reads its browser ratings itself gets them
// (reviewsOfChoice without a request's reviews): the old read of every
// review of the run's criteria up to the cut-off (readBrowserReviews) and
// the new read of each reviewer's current review only
// (readCurrentReviews), on BATCHEVAL_BENCH_REVIEW_ROWS samples (20,000 by
// default) rated on both criteria by five reviewers, one, two or three
// reviews each (the last current: a third of the ratings overwritten
// once, a third twice) and one review in ten on another scale: 1.6 reviews
// stored for each current one. Both must give the same ratings (counts
// and keys). It reports the median of five of each, the ratio old over
// new, and the bytes each allocates.
// Run with -benchtime=1x.
func BenchmarkReportReadsCurrentRatings(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		db, wsID, run, choice, n := benchRatingsHistory(b, 0)
		type took struct {
			d     time.Duration
			bytes uint64
		}
		measure := func(read func() *BrowserReviews) (took, HumanUse, [][]models.ReviewRating, int) {
			var ts []took
			var use HumanUse
			var reviews [][]models.ReviewRating
			held := 0
			for range 5 {
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				start := time.Now()
				pre := read()
				u, r, err := reviewsOfChoice(ctx, db, wsID, run, choice, pre)
				must(b, err)
				d := time.Since(start)
				runtime.ReadMemStats(&m1)
				ts = append(ts, took{d, m1.TotalAlloc - m0.TotalAlloc})
				use, reviews, held = u, r, 0
				for _, rs := range pre.ByName {
					held += len(rs)
				}
			}
			slices.SortFunc(ts, func(a, b took) int { return int(a.d - b.d) })
			return ts[2], use, reviews, held
		}
		old, useOld, revOld, heldOld := measure(func() *BrowserReviews {
			pre, err := readBrowserReviews(ctx, db, run, choice.UptoRatingID, choice.UptoRatingID)
			must(b, err)
			return pre
		})
		cur, useNew, revNew, heldNew := measure(func() *BrowserReviews {
			pre, err := readCurrentReviews(ctx, db, run, choice.UptoRatingID, false)
			must(b, err)
			return pre
		})
		if useOld.BrowserRatings != useNew.BrowserRatings || len(revOld) != len(revNew) || useNew.BrowserRatings == 0 {
			b.Fatalf("the new read uses %d ratings, the old %d", useNew.BrowserRatings, useOld.BrowserRatings)
		}
		for i := range revOld {
			if len(revOld[i]) != len(revNew[i]) || (len(revOld[i]) > 0 && useOld.Criteria[i].Key != useNew.Criteria[i].Key) {
				b.Fatalf("criterion %d: the new read's ratings differ from the old", i)
			}
		}
		b.Logf("%d samples, %d reviews held in memory before, %d now, %d ratings used: old %v (%d MB allocated), new %v (%d MB): %.2fx faster, %.1fx less allocated",
			n, heldOld, heldNew, useNew.BrowserRatings, old.d.Round(time.Millisecond), old.bytes>>20, cur.d.Round(time.Millisecond), cur.bytes>>20,
			float64(old.d)/float64(cur.d), float64(old.bytes)/float64(max(cur.bytes, 1)))
		b.ReportMetric(float64(old.d)/float64(cur.d), "old/new-time")
		b.ReportMetric(float64(old.bytes)/float64(max(cur.bytes, 1)), "old/new-bytes")
	}
}

// benchRatingsHistory is BenchmarkReportReadsCurrentRatings' database: a
// run of BATCHEVAL_BENCH_REVIEW_ROWS samples (20,000 by default) rated on
// both criteria by five reviewers, one, two or three reviews each, one in
// ten on another scale, and the run's browser ratings chosen after them;
// then every after-th sample (none when after is 0) rated once more by
// Ann, after the cut-off.
func benchRatingsHistory(b *testing.B, after int) (db *models.DB, wsID int64, run models.Run, choice models.RunHumanSource, n int) {
	n = 20000
	if v := os.Getenv("BATCHEVAL_BENCH_REVIEW_ROWS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 100 {
			b.Fatalf("BATCHEVAL_BENCH_REVIEW_ROWS=%q: want a whole number of at least 100", v)
		}
	}
	ctx := context.Background()
	{
		db = benchDB(b, b.TempDir())
		var runID int64
		wsID, runID = synthRun(b, db, n)
		var err error
		run, err = db.FindRun(ctx, wsID, runID)
		must(b, err)
		rows, err := db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
		must(b, err)
		now := time.Now().UTC()
		var rs []models.ReviewRating
		k := 0
		for _, crit := range run.RubricSnapshot.Criteria {
			for _, r := range rows {
				for _, who := range []string{"Ann", "Bob", "Cy", "Di", "Ed"} {
					for range 1 + k%3 { // 1, 2 or 3 reviews: the last one current
						k++
						v := crit.Lo + float64(k%4)
						lo, hi := crit.Lo, crit.Hi
						if k%10 == 0 {
							lo, hi = 0, 10
						}
						rs = append(rs, models.ReviewRating{WorkspaceID: wsID, DatasetID: run.DatasetID, RowID: r.ID, Criterion: crit.Name,
							HumanColumn: crit.HumanColumn, Reviewer: who, Lo: lo, Hi: hi, Score: &v, Tags: []string{}, CreatedAt: now})
					}
				}
				if len(rs) >= 5000 {
					must(b, db.Gorm.CreateInBatches(&rs, 500).Error)
					rs = rs[:0]
				}
			}
		}
		if len(rs) > 0 {
			must(b, db.Gorm.CreateInBatches(&rs, 500).Error)
		}
		choice, err = db.SetRunHumanSource(ctx, wsID, runID, models.HumansBrowser, "bench")
		must(b, err)
		if after > 0 {
			rs = rs[:0]
			crit := run.RubricSnapshot.Criteria[0]
			for i := 0; i < len(rows); i += after {
				v := crit.Lo
				rs = append(rs, models.ReviewRating{WorkspaceID: wsID, DatasetID: run.DatasetID, RowID: rows[i].ID, Criterion: crit.Name,
					HumanColumn: crit.HumanColumn, Reviewer: "Ann", Lo: crit.Lo, Hi: crit.Hi, Score: &v, Tags: []string{}, CreatedAt: time.Now().UTC()})
			}
			must(b, db.Gorm.CreateInBatches(&rs, 500).Error)
		}
		return db, wsID, run, choice, n
	}
}
