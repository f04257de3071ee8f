package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// BenchmarkSharesPageGrowth times the share links page (/shares) of a
// workspace with 200, then 2,000 experiments and as many share links (half
// to experiments, half to ten runs), on SQLite (or the database
// BATCHEVAL_BENCH_LARGE_DB names): the median of five views after a first,
// its ratio to the 200's, and the page's size. Run with -benchtime=1x.
func BenchmarkSharesPageGrowth(b *testing.B) {
	for b.Loop() {
		var base time.Duration
		var baseBytes int
		for _, n := range []int{200, 2000} {
			e := sharesBenchServer(b, n)
			servePage(b, e, "/shares")
			var took []time.Duration
			for range 5 {
				took = append(took, servePage(b, e, "/shares"))
			}
			slices.Sort(took)
			med := took[2]
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/shares", nil))
			size := rec.Body.Len()
			if base == 0 {
				base, baseBytes = med, size
			}
			b.Logf("shares, %d experiments and links: median %v (x%.2f the 200's), %d KB (x%.2f)", n, med.Round(10*time.Microsecond),
				med.Seconds()/base.Seconds(), size/1024, float64(size)/float64(baseBytes))
			b.ReportMetric(float64(med.Microseconds())/1000, fmt.Sprintf("shares-%d-ms", n))
		}
	}
}

// sharesBenchServer is a server whose workspace has n experiments and n
// share links, half to the experiments, half to ten runs, on SQLite (or
// the database BATCHEVAL_BENCH_LARGE_DB names).
func sharesBenchServer(b *testing.B, n int) *echo.Echo {
	ctx := context.Background()
	d := models.SQLite
	if v := os.Getenv("BATCHEVAL_BENCH_LARGE_DB"); v != "" {
		d = models.Dialect(v)
	}
	e, h, p := benchServer(b, d)
	small, ids := synthDataset(b, h.DB, p, 10)
	var runs []int64
	for range 10 {
		runs = append(runs, synthRunOn(b, h.DB, p, small, ids, 0))
	}
	for i := range n {
		x := models.Experiment{WorkspaceID: p.WorkspaceID, ProjectID: p.ID, DatasetID: small.ID, Name: fmt.Sprintf("Experiment %d", i)}
		mustB(b, h.DB.CreateExperiment(ctx, &x))
		l := models.NewShareLink{WorkspaceID: p.WorkspaceID, Kind: models.ShareExperiment, ExperimentID: x.ID, Label: "bench"}
		if i%2 == 1 {
			l = models.NewShareLink{WorkspaceID: p.WorkspaceID, Kind: models.ShareRun, RunID: runs[i%len(runs)], Label: "bench"}
		}
		if _, _, err := h.DB.CreateShareLink(ctx, l); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

// BenchmarkAPISharesGrowth times GET /api/v1/shares?limit=10 in a
// workspace with 200, then 2,000 share links (sharesBenchServer): the
// median of five calls after a first, and its ratio to the 200's. Run
// with -benchtime=1x.
func BenchmarkAPISharesGrowth(b *testing.B) {
	for b.Loop() {
		var base time.Duration
		for _, n := range []int{200, 2000} {
			e := sharesBenchServer(b, n)
			const path = "/api/v1/shares?limit=10"
			servePage(b, e, path)
			var took []time.Duration
			for range 5 {
				took = append(took, servePage(b, e, path))
			}
			slices.Sort(took)
			med := took[2]
			if base == 0 {
				base = med
			}
			b.Logf("api shares?limit=10, %d links: median %v (x%.2f the 200's)", n, med.Round(10*time.Microsecond), med.Seconds()/base.Seconds())
			b.ReportMetric(float64(med.Microseconds())/1000, fmt.Sprintf("api-shares-%d-ms", n))
		}
	}
}
