package handlers

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkLiveFigureMemory: one computation of a running run's
// provisional figures (what liveFiguresFor runs in the background), its
// time, peak heap (live and garbage, sampled every 5 ms: startHeapPeak) and peak RSS
// (VmHWM) above the start and bytes allocated: report.BuildFigures
// (livemem45: scores as spans of 24-byte values, batch layouts scanned by
// hand into one array of row ids, a criterion's temporaries at their
// size) against the code before it (report.BuildFiguresBefore: livebig44's
// ScoreFigure and RunBatch reads, temporaries grown by appending),
// alternated in one process; the two figures must be equal. Rows from
// BATCHEVAL_BENCH_LIVEFIG (default 50,000: 100,000 samples of two
// criteria, two rounds each); PostgreSQL too when TEST_DATABASE_URL is set.
//
//	go test ./handlers -run '^$' -bench LiveFigureMemory -benchtime=1x -v
//	BATCHEVAL_BENCH_LIVEFIG=500000 go test ./handlers -run '^$' -bench LiveFigureMemory -benchtime=1x -timeout 60m -v
func BenchmarkLiveFigureMemory(b *testing.B) {
	n, _, dialects := liveFigBenchSetup(b, 50_000, 1)
	for b.Loop() {
		for _, d := range dialects {
			liveFigureMemory(b, d, n)
		}
	}
}

// liveComputation is one computation's measurements.
type liveComputation struct {
	took             time.Duration
	peakHeap, peakRS uint64
	// held is the heap the figures keep once computed (after a
	// collection, above the start).
	held uint64
	// alloc is the bytes allocated while computing (TotalAlloc).
	alloc uint64
	rep   *report.Report
}

func liveFigureMemory(b *testing.B, d models.Dialect, n int) {
	_, h, p := benchServer(b, d)
	ds, ids := synthDataset(b, h.DB, p, n)
	id := synthRunOn(b, h.DB, p, ds, ids, 0)
	ids = nil
	mustB(b, h.DB.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, batches_done = batches_done - 1 WHERE id = ?`, models.RunRunning, id).Error)
	pctx := context.WithValue(context.Background(), principalKey{}, Principal{Kind: LocalUser, Workspace: h.DefaultWorkspace, Role: models.RoleOwner})
	one := func(build func(ctx context.Context, db *models.DB, wsID, runID int64, opt report.Options) (*report.Report, error)) liveComputation {
		runtime.GC()
		debug.FreeOSMemory()
		rssStart, _ := resetRSSPeak()
		base := heapNow()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		allocStart := ms.TotalAlloc
		hp := startHeapPeak()
		start := time.Now()
		rep, err := build(pctx, h.DB, h.DefaultWorkspace.ID, id, report.Options{})
		took := time.Since(start)
		heap := hp.Stop()
		runtime.ReadMemStats(&ms)
		alloc := ms.TotalAlloc - allocStart
		mustB(b, err)
		rss := rssPeakSince(rssStart)
		runtime.GC()
		var held uint64
		if now := heapNow(); now > base {
			held = now - base
		}
		return liveComputation{took: took, peakHeap: heap, peakRS: rss, held: held, alloc: alloc, rep: rep}
	}
	// Two at a million, in both orders: the first computation reads a
	// cold database (its pages not yet cached), which costs it time.
	reps := 3
	if n > 100_000 {
		reps = 2
	}
	var after, before []liveComputation
	for i := range reps {
		var a, w liveComputation
		if i%2 == 0 {
			a = one(report.BuildFigures)
			w = one(report.BuildFiguresBefore)
		} else {
			w = one(report.BuildFiguresBefore)
			a = one(report.BuildFigures)
		}
		if !equalNaN(reflect.ValueOf(a.rep.Criteria), reflect.ValueOf(w.rep.Criteria)) {
			b.Fatal("the figures differ from those of the code before")
		}
		a.rep, w.rep = nil, nil
		after, before = append(after, a), append(before, w)
	}
	med := func(cs []liveComputation, f func(liveComputation) float64) float64 {
		v := make([]float64, len(cs))
		for i, c := range cs {
			v[i] = f(c)
		}
		slices.Sort(v)
		if len(v)%2 == 0 {
			return (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		return v[len(v)/2]
	}
	const mib = 1 << 20
	heapOf := func(c liveComputation) float64 { return float64(c.peakHeap) / mib }
	rssOf := func(c liveComputation) float64 { return float64(c.peakRS) / mib }
	secs := func(c liveComputation) float64 { return c.took.Seconds() }
	heldOf := func(c liveComputation) float64 { return float64(c.held) / mib }
	allocOf := func(c liveComputation) float64 { return float64(c.alloc) / mib }
	samples := 2 * n
	b.Logf("%s, %d rows (%d samples), one live computation, medians of %d (of two: means): before %.2f s, peak heap %.0f MiB, peak RSS %.0f MiB, allocated %.0f MiB, held %.0f MiB; now %.2f s, peak heap %.0f MiB, peak RSS %.0f MiB, allocated %.0f MiB, held %.0f MiB; now/before heap %.2f, RSS %.2f, allocated %.2f, time %.2f",
		d, n, samples, reps, med(before, secs), med(before, heapOf), med(before, rssOf), med(before, allocOf), med(before, heldOf),
		med(after, secs), med(after, heapOf), med(after, rssOf), med(after, allocOf), med(after, heldOf),
		med(after, heapOf)/med(before, heapOf), med(after, rssOf)/med(before, rssOf), med(after, allocOf)/med(before, allocOf), med(after, secs)/med(before, secs))
	b.ReportMetric(med(after, heapOf)/med(before, heapOf), fmt.Sprintf("%s-%dk-heap-ratio", d, samples/1000))
	b.ReportMetric(med(after, rssOf)/med(before, rssOf), fmt.Sprintf("%s-%dk-rss-ratio", d, samples/1000))
	b.ReportMetric(med(after, allocOf)/med(before, allocOf), fmt.Sprintf("%s-%dk-alloc-ratio", d, samples/1000))
	b.ReportMetric(med(after, secs)/med(before, secs), fmt.Sprintf("%s-%dk-time-ratio", d, samples/1000))
}
