package stats

import (
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"testing"
	"time"
)

// peakHeap samples the heap (live objects and garbage not yet collected)
// every 2 ms until stopped and returns its largest size above the start.
func peakHeap() (stop func() uint64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > base {
				peak = max(peak, v-base)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() uint64 { close(done); wg.Wait(); return peak }
}

// BenchmarkCorrelationIntervalsMillion measures one criterion's three
// correlations with their intervals on 1,000,000 pairs (STATS_BENCH_PAIRS
// to change it): judge scores as means of two rounds on 1–10, human
// scores as means of three 1–5 ratings (noise ties), 2% missing. In the
// same process, alternated: the old path (oldCorrelationInterval three
// times, as report did) and CorrelationIntervals. Reported: peak heap
// above the start (MiB), bytes allocated and time of each, and new/old.
func BenchmarkCorrelationIntervalsMillion(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("STATS_BENCH_PAIRS")); err == nil && v > AnalyticAbove {
		n = v
	}
	rng := rand.New(rand.NewPCG(1, 44))
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		q := rng.Float64()
		x[i] = float64(2+rng.IntN(10)+rng.IntN(10)) / 2
		y[i] = (float64(1+rng.IntN(5)) + float64(1+rng.IntN(5)) + float64(1+int(q*4.99))) / 3
		if rng.Float64() < 0.02 {
			y[i] = math.NaN()
		}
	}
	measure := func(f func() [3]Correlation) (res [3]Correlation, peak, alloc uint64, d time.Duration) {
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		stop := peakHeap()
		start := time.Now()
		res = f()
		d = time.Since(start)
		peak = stop()
		runtime.ReadMemStats(&ms1)
		return res, peak, ms1.TotalAlloc - ms0.TotalAlloc, d
	}
	var oldPeak, newPeak, oldAlloc, newAlloc uint64
	var oldTime, newTime time.Duration
	for b.Loop() {
		want, p, a, d := measure(func() (out [3]Correlation) {
			for k, m := range Methods() {
				out[k], _ = oldCorrelationInterval(m, x, y, DefaultResamples, 1)
			}
			return out
		})
		oldPeak, oldAlloc, oldTime = oldPeak+p, oldAlloc+a, oldTime+d
		got, p, a, d := measure(func() [3]Correlation {
			c := CorrelationIntervals(x, y, DefaultResamples, 1)
			return [3]Correlation{c.Pearson, c.Spearman, c.Kendall}
		})
		newPeak, newAlloc, newTime = newPeak+p, newAlloc+a, newTime+d
		for k := range got {
			if !sameBits(got[k], want[k]) {
				b.Fatalf("%s differs: %+v, old %+v", Methods()[k], got[k], want[k])
			}
		}
	}
	const mib = 1 << 20
	runs := float64(b.N)
	b.ReportMetric(float64(oldPeak)/mib/runs, "old-peak-MiB")
	b.ReportMetric(float64(newPeak)/mib/runs, "new-peak-MiB")
	b.ReportMetric(float64(newPeak)/float64(oldPeak), "peak-new/old")
	b.ReportMetric(float64(oldAlloc)/mib/runs, "old-alloc-MiB")
	b.ReportMetric(float64(newAlloc)/mib/runs, "new-alloc-MiB")
	b.ReportMetric(oldTime.Seconds()/runs, "old-s")
	b.ReportMetric(newTime.Seconds()/runs, "new-s")
	b.ReportMetric(newTime.Seconds()/oldTime.Seconds(), "time-new/old")
}
