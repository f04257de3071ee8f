package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkRunPageServed times, on SQLite, a finished run's page served
// through the Echo app (GET /runs/:id, the first page of samples) for runs
// of BATCHEVAL_BENCH_RUNPAGE samples (comma-separated; 10,000 by default)
// synthesized as BenchmarkReviewQueueFromRanks does, their figures stored:
// the first view (the summary read from its row) and the median of five
// views after it (the summary in the handlers' cache), which is what a
// reader clicking through a run costs; then the same for a page half-way
// down the second criterion's table sorted by difference (livemem46),
// each with the bytes a view allocates (a view that read the whole run
// would allocate in proportion to it). Run with -benchtime=1x; with
// -cpuprofile it shows what a view does.
func BenchmarkRunPageServed(b *testing.B) {
	sizes := []int{10000}
	if v := os.Getenv("BATCHEVAL_BENCH_RUNPAGE"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("BATCHEVAL_BENCH_RUNPAGE=%q: %q is not a size", v, f)
			}
			sizes = append(sizes, n)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		for _, n := range sizes {
			e, h, p := benchServer(b, models.SQLite)
			ds, ids := synthDataset(b, h.DB, p, n)
			src := synthRunOn(b, h.DB, p, ds, ids, 0)
			mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, src))
			// The first page, and (livemem46) a page deep in the table
			// sorted by the difference from the human rating, the
			// second criterion's: both must read one page, not the run.
			for _, q := range []string{"", fmt.Sprintf("?criterion=1&sort=diff&dir=desc&page=%d", max(1, n/100))} {
				path := fmt.Sprintf("/runs/%d%s", src, q)
				view := func() (time.Duration, uint64, int) {
					var ms runtime.MemStats
					runtime.ReadMemStats(&ms)
					alloc := ms.TotalAlloc
					start := time.Now()
					rec := httptest.NewRecorder()
					e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
					took := time.Since(start)
					runtime.ReadMemStats(&ms)
					if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="sample-row"`) {
						b.Fatalf("GET %s = %d, no samples table: %.500s", path, rec.Code, rec.Body)
					}
					return took, ms.TotalAlloc - alloc, rec.Body.Len()
				}
				first, _, size := view()
				var took []time.Duration
				var allocs []uint64
				for range 5 {
					t, a, _ := view()
					took, allocs = append(took, t), append(allocs, a)
				}
				slices.Sort(took)
				slices.Sort(allocs)
				b.Logf("%d samples, GET %s: first view %v, then %v (median of 5; %v-%v), %.1f MB allocated a view (median), %d bytes", n, path, first.Round(time.Microsecond),
					took[2].Round(time.Microsecond), took[0].Round(time.Microsecond), took[4].Round(time.Microsecond), float64(allocs[2])/1e6, size)
				what := "view"
				if q != "" {
					what = "deep-page"
				}
				b.ReportMetric(float64(took[2].Microseconds())/1000, fmt.Sprintf("%dk-%s-ms", n/1000, what))
				b.ReportMetric(float64(allocs[2])/1e6, fmt.Sprintf("%dk-%s-alloc-MB", n/1000, what))
			}
		}
	}
}
