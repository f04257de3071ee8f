package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
)

// benchDB opens a migrated SQLite database in dir, outside dbtest so that
// a benchmark can keep one per size.
func benchDB(b *testing.B, dir string) *models.DB {
	b.Helper()
	ctx := context.Background()
	db, err := models.Open(ctx, filepath.Join(dir, "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.MigrateSchema(ctx, nil); err != nil {
		b.Fatal(err)
	}
	return db
}

// firstByte records when the first byte was written and counts bytes.
type firstByte struct {
	start time.Time
	at    time.Duration
	n     int64
}

func (w *firstByte) Write(p []byte) (int, error) {
	if w.n == 0 && len(p) > 0 {
		w.at = time.Since(w.start)
	}
	w.n += int64(len(p))
	return len(p), nil
}

// peakHeap samples the live heap every few milliseconds until stopped and
// returns the largest value seen above the heap at its start.
func peakHeap() (stop func() uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base && m.HeapAlloc-base > peak.Load() {
				peak.Store(m.HeapAlloc - base)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// largeRunFigures are one size's measurements.
type largeRunFigures struct {
	page, firstCSVByte, csvTotal time.Duration
	csvBytes                     int64
	peak                         uint64
}

// measureLargeRun times, on a finished synthesized run of n samples whose
// statistics are already stored: what a results page reads (its stored
// summary and one page of samples, runPageRead; cold: no in-memory cache)
// and a CSV export's first byte, total time and peak heap above the
// starting heap (the export still builds the full report: exports11
// streams it).
func measureLargeRun(b *testing.B, n int) largeRunFigures {
	db := benchDB(b, b.TempDir())
	wsID, runID := synthRun(b, db, n)
	ctx := context.Background()
	if err := StoreStats(ctx, db, wsID, runID); err != nil {
		b.Fatal(err)
	}
	var f largeRunFigures
	recomputed := 0
	opt := Options{Recomputed: func(int) { recomputed++ }}
	started := time.Now()
	if err := runPageRead(ctx, db, wsID, runID, "position", "asc", 1); err != nil {
		b.Fatal(err)
	}
	f.page = time.Since(started)
	stop := peakHeap()
	w := &firstByte{start: time.Now()}
	rep, err := BuildWith(ctx, db, wsID, runID, opt)
	if err == nil {
		err = rep.WriteCSV(w)
	}
	f.csvTotal = time.Since(w.start)
	f.peak = stop()
	if err != nil {
		b.Fatal(err)
	}
	if recomputed != 0 {
		b.Fatalf("stored statistics were recomputed %d times", recomputed)
	}
	f.firstCSVByte, f.csvBytes = w.at, w.n
	return f
}

// BenchmarkLargeRun compares a 100,000-sample finished run (1,000,000 with
// REPORT_BENCH_MILLION=1) with a 1,000-sample one: report time as a results
// page builds it, CSV export time to first byte and total, peak heap; the
// ratios are reported as metrics. SQLite, synthesized straight into the
// database (two criteria, two rounds, B = 10).
func BenchmarkLargeRun(b *testing.B) {
	big := 100_000
	if os.Getenv("REPORT_BENCH_MILLION") == "1" {
		big = 1_000_000
	}
	for b.Loop() {
		small := measureLargeRun(b, 1_000)
		large := measureLargeRun(b, big)
		for _, x := range []struct {
			name string
			f    largeRunFigures
			n    int
		}{{"small", small, 1_000}, {"large", large, big}} {
			b.Logf("%d samples: run page reads %s, CSV first byte %s, CSV total %s (%d bytes), peak heap %.1f MiB",
				x.n, x.f.page, x.f.firstCSVByte, x.f.csvTotal, x.f.csvBytes, float64(x.f.peak)/(1<<20))
		}
		b.ReportMetric(large.page.Seconds()*1000, "large-page-read-ms")
		b.ReportMetric(large.firstCSVByte.Seconds()*1000, "large-csv-first-byte-ms")
		b.ReportMetric(float64(large.peak)/(1<<20), "large-peak-heap-MiB")
		b.ReportMetric(large.page.Seconds()/small.page.Seconds(), "page-read-ratio")
		b.ReportMetric(large.firstCSVByte.Seconds()/small.firstCSVByte.Seconds(), "csv-first-byte-ratio")
		b.ReportMetric(float64(large.peak)/float64(max(1, small.peak)), "peak-heap-ratio")
	}
}

// BenchmarkStoreStats times report.StoreStats (what the runner does when a
// run finishes: every statistic of both criteria computed from nothing
// stored, then stored) on synthesized runs of 1,000, 10,000 and 100,000
// samples (and 1,000,000 with REPORT_BENCH_MILLION=1), and a results page's
// report built from the stored figures, each reported as a ratio to the
// 1,000-sample run. Synthesizing the runs is not timed.
func BenchmarkStoreStats(b *testing.B) {
	sizes := []int{1_000, 10_000, 100_000}
	if os.Getenv("REPORT_BENCH_MILLION") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	ctx := context.Background()
	for b.Loop() {
		store := make([]time.Duration, len(sizes))
		page := make([]time.Duration, len(sizes))
		for i, n := range sizes {
			b.StopTimer()
			db := benchDB(b, b.TempDir())
			wsID, runID := synthRun(b, db, n)
			b.StartTimer()
			started := time.Now()
			if err := StoreStats(ctx, db, wsID, runID); err != nil {
				b.Fatal(err)
			}
			store[i] = time.Since(started)
			recomputed := 0
			started = time.Now()
			if _, err := BuildWith(ctx, db, wsID, runID, Options{Recomputed: func(int) { recomputed++ }}); err != nil {
				b.Fatal(err)
			}
			page[i] = time.Since(started)
			if recomputed != 0 {
				b.Fatalf("%d samples: stored statistics were recomputed %d times", n, recomputed)
			}
			b.Logf("%d samples: StoreStats %s, report from stored figures %s", n, store[i], page[i])
		}
		for i, n := range sizes[1:] {
			b.ReportMetric(store[i+1].Seconds()/store[0].Seconds(), fmt.Sprintf("store-%dk/1k", n/1000))
			b.ReportMetric(page[i+1].Seconds()/page[0].Seconds(), fmt.Sprintf("page-%dk/1k", n/1000))
		}
		b.ReportMetric(store[len(sizes)-1].Seconds()*1000, "largest-store-ms")
		b.ReportMetric(page[len(sizes)-1].Seconds()*1000, "largest-page-ms")
	}
}

// runPageRead is what a finished run's results page reads from the
// database for its results: the stored summary (LoadSummary) and one page
// of the samples table in the given order.
func runPageRead(ctx context.Context, db *models.DB, wsID, runID int64, sort, dir string, page int) error {
	sum, err := LoadSummary(ctx, db, wsID, runID, Options{})
	if err != nil {
		return err
	}
	rows, _, err := LoadSamplePage(ctx, db, sum, SamplePage{Criterion: 0, Sort: sort, Dir: dir, Page: page, PerPage: 50})
	if err == nil && len(rows) != 50 {
		err = fmt.Errorf("page %d by %s %s: %d rows, want 50", page, sort, dir, len(rows))
	}
	return err
}

// BenchmarkRunPageRead times what a finished run's results page reads
// (runPageRead: summary plus one page of samples; the first page by
// position, and the last page by score descending) on synthesized runs of
// 1,000, 10,000 and 100,000 samples (and 1,000,000 with
// REPORT_BENCH_MILLION=1), each the median of 5 reads after the stored form
// is written, reported as ratios to the 1,000-sample run; and, for
// comparison, the full build the page made before (BuildWith from stored
// statistics), once per size. Synthesizing and storing are not timed in
// the ratios (storing is logged).
func BenchmarkRunPageRead(b *testing.B) {
	sizes := []int{1_000, 10_000, 100_000}
	if os.Getenv("REPORT_BENCH_MILLION") == "1" {
		sizes = append(sizes, 1_000_000)
	}
	ctx := context.Background()
	median := func(f func() error) time.Duration {
		var ts []time.Duration
		for range 5 {
			started := time.Now()
			if err := f(); err != nil {
				b.Fatal(err)
			}
			ts = append(ts, time.Since(started))
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		return ts[len(ts)/2]
	}
	for b.Loop() {
		first := make([]time.Duration, len(sizes))
		last := make([]time.Duration, len(sizes))
		full := make([]time.Duration, len(sizes))
		for i, n := range sizes {
			b.StopTimer()
			db := benchDB(b, b.TempDir())
			wsID, runID := synthRun(b, db, n)
			started := time.Now()
			if err := StoreStats(ctx, db, wsID, runID); err != nil {
				b.Fatal(err)
			}
			store := time.Since(started)
			b.StartTimer()
			lastPage := (n + 49) / 50
			first[i] = median(func() error { return runPageRead(ctx, db, wsID, runID, "position", "asc", 1) })
			last[i] = median(func() error { return runPageRead(ctx, db, wsID, runID, "score", "desc", lastPage) })
			if n <= 100_000 {
				started = time.Now()
				if _, err := BuildWith(ctx, db, wsID, runID, Options{}); err != nil {
					b.Fatal(err)
				}
				full[i] = time.Since(started)
			}
			b.Logf("%d samples: StoreStats (figures, summary, sample rows) %s; page read: first page %s, last page by score %s; full build %s",
				n, store, first[i], last[i], full[i])
		}
		for i, n := range sizes[1:] {
			b.ReportMetric(first[i+1].Seconds()/first[0].Seconds(), fmt.Sprintf("first-page-%dk/1k", n/1000))
			b.ReportMetric(last[i+1].Seconds()/last[0].Seconds(), fmt.Sprintf("last-page-%dk/1k", n/1000))
		}
		b.ReportMetric(first[len(sizes)-1].Seconds()*1000, "largest-first-page-ms")
		b.ReportMetric(last[len(sizes)-1].Seconds()*1000, "largest-last-page-ms")
	}
}

// BenchmarkReadersDuringWrites runs 50 readers, each making the reads of a
// run page again and again (pageReads: its frame and its results as the
// page now reads them), while 4 writers store batch results as runs do;
// it reports the readers' p50 and p99, with the separate read pool and
// with every read sent through the writers' pool (as before it existed).
func BenchmarkReadersDuringWrites(b *testing.B) {
	for _, mode := range []string{"read-pool", "shared-pool"} {
		b.Run(mode, func(b *testing.B) {
			db := benchDB(b, b.TempDir())
			wsID, runID := synthRun(b, db, 1_000)
			_, writeRun := synthRun(b, db, 100)
			ctx := context.Background()
			if err := StoreStats(ctx, db, wsID, runID); err != nil {
				b.Fatal(err)
			}
			if mode == "shared-pool" {
				db.Read = db.Gorm
			}
			for b.Loop() {
				p50, p99 := readersDuringWrites(b, db, wsID, runID, writeRun)
				b.ReportMetric(p50.Seconds()*1000, "p50-ms")
				b.ReportMetric(p99.Seconds()*1000, "p99-ms")
			}
		})
	}
}

// readersDuringWrites is one round of BenchmarkReadersDuringWrites: 50
// readers, 20 reads each, against 4 writers.
func readersDuringWrites(b *testing.B, db *models.DB, wsID, readRun, writeRun int64) (p50, p99 time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	var writers sync.WaitGroup
	var batch models.RunBatch
	if err := db.Gorm.Where("run_id = ?", writeRun).First(&batch).Error; err != nil {
		b.Fatal(err)
	}
	answer := strings.Repeat("Analysis: fine. Score: 3\n", 40)
	for w := range 4 {
		writers.Go(func() {
			for k := 0; ctx.Err() == nil; k++ {
				// One batch result as models.SaveBatchResult writes it: the
				// answer, ten scores and the run's counters, in one
				// transaction (scores in a round past the run's last, so
				// the run's figures stay the same).
				_ = db.Gorm.Transaction(func(tx *gorm.DB) error {
					if err := tx.Model(&models.RunBatch{}).Where("id = ?", batch.ID).Update("response", answer).Error; err != nil {
						return err
					}
					scores := make([]models.RunScore, 10)
					for i := range scores {
						v := 3.0
						scores[i] = models.RunScore{RunID: writeRun, BatchID: batch.ID, Round: 100 + w, RowID: batch.RowIDs[i%len(batch.RowIDs)], Label: k, Score: &v}
					}
					if err := tx.Create(&scores).Error; err != nil {
						return err
					}
					return tx.Model(&models.Run{}).Where("id = ?", writeRun).Update("calls", gorm.Expr("calls + 1")).Error
				})
			}
		})
	}
	var mu sync.Mutex
	var times []time.Duration
	var readers sync.WaitGroup
	for range 50 {
		readers.Go(func() {
			for range 20 {
				started := time.Now()
				if err := pageReads(ctx, db, wsID, readRun); err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				times = append(times, time.Since(started))
				mu.Unlock()
			}
		})
	}
	readers.Wait()
	cancel()
	writers.Wait()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return times[len(times)/2], times[len(times)*99/100]
}

// pageReads are the database reads of a finished run's page: the run, its
// project's runs, its dataset, and its results as the page reads them
// (runPageRead: the stored summary and one page of samples). They are
// small, so their time is mostly waiting (for a connection or a lock),
// which is what the benchmark measures.
func pageReads(ctx context.Context, db *models.DB, wsID, runID int64) error {
	run, err := db.FindRun(ctx, wsID, runID)
	if err != nil {
		return err
	}
	if _, err := db.ListRuns(ctx, wsID, run.ProjectID); err != nil {
		return err
	}
	if _, err := db.FindDataset(ctx, wsID, run.DatasetID); err != nil {
		return err
	}
	return runPageRead(ctx, db, wsID, runID, "score", "desc", 2)
}
