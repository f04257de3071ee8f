package report

import (
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// heapPeaks samples the heap every few milliseconds until stopped and
// returns, above the heap at its start, the largest heap seen (live data
// and garbage not yet collected: what the process's memory follows) and
// the largest live heap (as of each collection).
func heapPeaks() (stop func() (heap, live uint64)) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	baseLive, baseHeap := s[0].Value.Uint64(), s[1].Value.Uint64()
	var peakLive, peakHeap uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > baseLive {
				peakLive = max(peakLive, v-baseLive)
			}
			if v := s[1].Value.Uint64(); v > baseHeap {
				peakHeap = max(peakHeap, v-baseHeap)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() (uint64, uint64) { close(done); wg.Wait(); return peakHeap, peakLive }
}

// BenchmarkStoreStatsPeakHeap measures the memory report.StoreStats takes
// (what the runner does after a run ends: every figure computed from
// nothing stored, then the summary and the per-sample results stored) on a
// synthesized run of 100,000 samples (1,000,000 with
// REPORT_BENCH_MILLION=1; two criteria, two rounds, a system column), beside a full
// report of an identical run (BuildWith with the samples' texts, which is
// what StoreStats built before it read the rows without their texts), each
// on its own run so that both compute every figure. Reported: the peak heap
// (live and garbage) and the peak live heap above the start, in MiB, and
// StoreStats's over the full build's.
func BenchmarkStoreStatsPeakHeap(b *testing.B) {
	n := 100_000
	if os.Getenv("REPORT_BENCH_MILLION") == "1" {
		n = 1_000_000
	}
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		db := benchDB(b, b.TempDir())
		wsFull, runFull := synthRun(b, db, n)
		wsStore, runStore := synthRun(b, db, n)
		b.StartTimer()
		stop := heapPeaks()
		rep, err := BuildWith(ctx, db, wsFull, runFull, Options{})
		if err != nil {
			b.Fatal(err)
		}
		fullHeap, fullLive := stop()
		if len(rep.Criteria) != 2 || len(rep.Criteria[0].Samples) != n || len(rep.Criteria[0].Samples[0].Fields) == 0 {
			b.Fatalf("the full build has no texts or not %d samples", n)
		}
		rep = nil
		stop = heapPeaks()
		if err := StoreStats(ctx, db, wsStore, runStore); err != nil {
			b.Fatal(err)
		}
		storeHeap, storeLive := stop()
		const mib = 1 << 20
		b.Logf("%d samples: full build peak heap %.1f MiB (live %.1f); StoreStats peak heap %.1f MiB (live %.1f)",
			n, float64(fullHeap)/mib, float64(fullLive)/mib, float64(storeHeap)/mib, float64(storeLive)/mib)
		b.ReportMetric(float64(storeHeap)/mib, "store-peak-heap-MiB")
		b.ReportMetric(float64(storeLive)/mib, "store-peak-live-MiB")
		b.ReportMetric(float64(fullHeap)/mib, "full-peak-heap-MiB")
		b.ReportMetric(float64(storeHeap)/float64(fullHeap), "store/full-heap")
		b.ReportMetric(float64(storeLive)/float64(fullLive), "store/full-live")
	}
}
