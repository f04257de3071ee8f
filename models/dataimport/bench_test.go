package dataimport

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkScanCSV1M streams a generated 1,000,000-row CSV (written to a
// temporary directory at benchmark time, never committed) through Scan, as
// the upload step does, and reports throughput and the peak heap growth as
// a ratio to the file size. BenchmarkParseCSV1M holds the whole table, as
// uploads did before, for comparison.
func BenchmarkScanCSV1M(b *testing.B)  { benchmarkCSV(b, false) }
func BenchmarkParseCSV1M(b *testing.B) { benchmarkCSV(b, true) }

func benchmarkCSV(b *testing.B, whole bool) {
	const rows = 1000000
	path := filepath.Join(b.TempDir(), "bench.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,response,quality")
	for i := range rows {
		fmt.Fprintf(w, "s%07d,\"The response number %d, judged for the benchmark\",%d\n", i, i, i%5+1)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	size := st.Size()
	opt := Options{MaxBytes: 1 << 30, MaxRows: 2 * rows}
	var peak uint64
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		in, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		stop := samplePeak()
		n := 0
		if whole {
			t, err := Parse(in, CSV, opt)
			if err != nil {
				b.Fatal(err)
			}
			n = len(t.Records)
		} else {
			_, err = Scan(in, CSV, opt, func(Record) error { n++; return nil })
			if err != nil {
				b.Fatal(err)
			}
		}
		peak = max(peak, stop())
		in.Close()
		if n != rows {
			b.Fatalf("read %d rows, want %d", n, rows)
		}
	}
	b.ReportMetric(float64(peak)/float64(size), "peak-heap/file")
	b.ReportMetric(float64(size)/1e6, "file-MB")
}

// samplePeak samples the live heap every few milliseconds; the returned
// function stops it and gives the peak above the heap at start.
func samplePeak() func() uint64 {
	read := func() uint64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			if h := read(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		if p := peak.Load(); p > base {
			return p - base
		}
		return 0
	}
}
