package runner

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// liveHeap is the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// heapPeak samples the heap every 2 ms until stopped and returns the
// largest heap seen above the heap at its start (live data and garbage not
// yet collected: what the process's memory follows) and the largest live
// heap (as of each collection) above the start's.
func heapPeak() (stop func() (heap, live uint64)) {
	runtime.GC()
	names := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(names)
	baseLive, baseHeap := names[0].Value.Uint64(), names[1].Value.Uint64()
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

// wholeRunRows is how a run's start read its rows before loadRunRows: every
// row with all its columns and ratings in one query, the samples built from
// them, then the rows let go. The baseline of BenchmarkRunStartPeakHeap.
func wholeRunRows(ctx context.Context, db *models.DB, datasetID int64, fields []evaluator.Field) ([]int64, map[int64]int, []evaluator.Sample, error) {
	rows, err := db.ListDatasetRows(ctx, datasetID, 0, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	ids := make([]int64, len(rows))
	index := make(map[int64]int, len(rows))
	samples := make([]evaluator.Sample, len(rows))
	for i, row := range rows {
		ids[i] = row.ID
		index[row.ID] = i
		samples[i] = row.Sample(fields)
	}
	return ids, index, samples, nil
}

// BenchmarkRunStartPeakHeap measures the memory of a run's start, reading
// what the run holds of its dataset's rows from SQLite: 100,000 rows shaped
// like BenchmarkMillionSampleRun's CSV (an id, a response of about 70
// characters, a rating; 1,000,000 with RUNNER_BENCH_MILLION=1), read whole
// and turned into samples as the start did (wholeRunRows), against
// loadRunRows (the ids and the field's column, 5,000 rows a query), in one
// process on one database. Reported for each, above the heap before: the
// peak heap (live and garbage), the peak live heap and what is held after
// (live, after a collection), in MiB, and the ratios after/before.
func BenchmarkRunStartPeakHeap(b *testing.B) {
	n := 100_000
	if os.Getenv("RUNNER_BENCH_MILLION") == "1" {
		n = 1_000_000
	}
	ctx := context.Background()
	db := dbtest.Open(b, models.SQLite)
	ws, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		b.Fatal(err)
	}
	p := models.Project{WorkspaceID: ws.ID, Name: "p"}
	if err := db.CreateProject(ctx, &p); err != nil {
		b.Fatal(err)
	}
	fields := []evaluator.Field{{Column: "response", Label: "Response"}}
	ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "rated", Columns: []string{"response"}, Fields: fields, RatingColumns: []string{"quality"}}
	err = db.ImportDataset(ctx, &ds, func(put func(models.DatasetRow) error) error {
		for i := range n {
			q := float64((i+i/7)%5 + 1)
			id := fmt.Sprintf("s%07d", i)
			data := map[string]string{"id": id, "response": fmt.Sprintf("Response %d: a reply of quality %d to the request, judged for the benchmark", i, i%5+1)}
			if err := put(models.DatasetRow{Position: i, ExternalID: id, Data: data, Ratings: map[string]*float64{"quality": &q}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	type load func(context.Context, *models.DB, int64, []evaluator.Field) ([]int64, map[int64]int, []evaluator.Sample, error)
	measure := func(f load) (heap, live, held uint64) {
		base := liveHeap()
		stop := heapPeak()
		ids, index, samples, err := f(ctx, db, ds.ID, fields)
		heap, live = stop()
		if err != nil {
			b.Fatal(err)
		}
		if len(ids) != n || len(index) != n || len(samples) != n || samples[n-1].Fields[0].Value == "" {
			b.Fatalf("%d ids, %d places, %d samples, want %d", len(ids), len(index), len(samples), n)
		}
		held = liveHeap() - base
		runtime.KeepAlive(ids)
		runtime.KeepAlive(index)
		runtime.KeepAlive(samples)
		return heap, live, held
	}
	chunked := func(ctx context.Context, db *models.DB, id int64, fields []evaluator.Field) ([]int64, map[int64]int, []evaluator.Sample, error) {
		return loadRunRows(ctx, db, id, fields, models.RowTextsChunk)
	}
	for b.Loop() {
		b.StopTimer()
		wHeap, wLive, wHeld := measure(wholeRunRows)
		b.StartTimer()
		cHeap, cLive, cHeld := measure(chunked)
		b.StopTimer()
		const mib = 1 << 20
		b.Logf("%d rows: whole rows peak heap %.1f MiB (live %.1f, held %.1f); by chunks %.1f MiB (live %.1f, held %.1f)",
			n, float64(wHeap)/mib, float64(wLive)/mib, float64(wHeld)/mib, float64(cHeap)/mib, float64(cLive)/mib, float64(cHeld)/mib)
		b.ReportMetric(float64(wHeap)/mib, "whole-peak-heap-MiB")
		b.ReportMetric(float64(cHeap)/mib, "chunks-peak-heap-MiB")
		b.ReportMetric(float64(cHeap)/float64(wHeap), "chunks/whole-heap")
		b.ReportMetric(float64(cLive)/float64(wLive), "chunks/whole-live")
		b.ReportMetric(float64(cHeld)/mib, "chunks-held-MiB")
		b.ReportMetric(float64(cHeld)/float64(wHeld), "chunks/whole-held")
		b.StartTimer()
	}
}
