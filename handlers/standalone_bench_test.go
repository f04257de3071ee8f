package handlers

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkStandaloneReport serves a finished run's standalone HTML report
// through the real Echo app on SQLite for a synthesized run of 10,000
// samples (two criteria, two rounds, a 300-character analysis on every
// score, its statistics stored as when a run finishes), and measures the
// path before streaming (the report built whole, every score read, the
// page rendered in memory, then sent) in the same process: time to the
// first and second write, in all, and the peak live heap above the heap at
// the start. BATCHEVAL_BENCH_STANDALONE_100K=1 adds a run of 100,000
// samples. Run with -benchtime=1x.
func BenchmarkStandaloneReport(b *testing.B) {
	sizes := []int{10_000}
	if os.Getenv("BATCHEVAL_BENCH_STANDALONE_100K") == "1" {
		sizes = append(sizes, 100_000)
	}
	for b.Loop() {
		for _, n := range sizes {
			benchStandalone(b, n)
		}
	}
}

func benchStandalone(b *testing.B, n int) {
	{
		e, h, p := benchServer(b, models.SQLite)
		runID := synthExportRun(b, h.DB, p, n)
		analysis := strings.Repeat("The answer stays on topic and reads well. ", 8)[:300]
		mustB(b, h.DB.Gorm.Exec("UPDATE run_scores SET analysis = ? WHERE run_id = ?", analysis, runID).Error)
		ctx := context.WithValue(context.Background(), principalKey{}, Principal{Kind: LocalUser,
			Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})
		mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, runID))
		run, err := h.DB.GetRun(ctx, runID)
		mustB(b, err)

		streamed := serveExport(b, e, fmt.Sprintf("/runs/%d/report.html", runID))

		peak := startHeapPeak()
		w := &timedResponse{header: nil, start: time.Now()}
		page := oldStandalone(b, h, ctx, run, time.Now())
		_, _ = w.Write(page)
		old := exportFigures{first: w.first, total: time.Since(w.start), bytes: w.n}
		old.peak = peak.Stop()
		page = nil

		for _, f := range []struct {
			k string
			f exportFigures
		}{{"streamed", streamed}, {"built-whole", old}} {
			b.Logf("%s %d samples: first byte %v, second write %v, total %v (%d bytes), peak heap %.1f MiB",
				f.k, n, f.f.first.Round(time.Millisecond), f.f.second.Round(time.Millisecond), f.f.total.Round(time.Millisecond),
				f.f.bytes, float64(f.f.peak)/(1<<20))
			b.ReportMetric(float64(f.f.first.Microseconds())/1000, fmt.Sprintf("%s-%dk-first-byte-ms", f.k, n/1000))
			b.ReportMetric(float64(f.f.peak)/(1<<20), fmt.Sprintf("%s-%dk-peak-heap-MiB", f.k, n/1000))
		}
		b.Logf("ratios built-whole/streamed: first byte x%.1f, peak heap x%.1f",
			old.first.Seconds()/streamed.first.Seconds(), float64(old.peak)/float64(max(1, streamed.peak)))
	}
}
