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

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkRunPageServed times, on SQLite, a finished run's page served
// through the Echo app (GET /runs/:id, the first page of samples) for runs
// of BATCHEVAL_BENCH_RUNPAGE samples (comma-separated; 10,000 by default)
// synthesized as BenchmarkReviewQueueFromRanks does, their figures stored:
// the first view (the summary read from its row) and the median of five
// views after it (the summary in the handlers' cache), which is what a
// reader clicking through a run costs. Run with -benchtime=1x; with
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
			path := fmt.Sprintf("/runs/%d", src)
			view := func() (time.Duration, int) {
				start := time.Now()
				rec := httptest.NewRecorder()
				e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				took := time.Since(start)
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="sample-row"`) {
					b.Fatalf("GET %s = %d, no samples table: %.500s", path, rec.Code, rec.Body)
				}
				return took, rec.Body.Len()
			}
			first, size := view()
			var took []time.Duration
			for range 5 {
				t, _ := view()
				took = append(took, t)
			}
			slices.Sort(took)
			b.Logf("%d samples: first view %v, then %v (median of 5; %v-%v), %d bytes", n, first.Round(time.Microsecond),
				took[2].Round(time.Microsecond), took[0].Round(time.Microsecond), took[4].Round(time.Microsecond), size)
			b.ReportMetric(float64(took[2].Microseconds())/1000, fmt.Sprintf("%dk-view-ms", n/1000))
		}
	}
}
