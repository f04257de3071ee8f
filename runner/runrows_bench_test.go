package runner

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// liveHeap is the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkRunHeldRows measures what a run holds of its dataset's rows
// while it goes, on 100,000 rows shaped like the million-sample
// benchmark's CSV (an id, a response of about 70 characters, two ratings;
// 1,000,000 with RUNNER_BENCH_MILLION=1): the rows as read
// (models.ListDatasetRows) with the samples built from them, which a run
// held until this change, against what runRows keeps (ids, their places
// and the samples). Reported: both in MiB above the heap without them, and
// their ratio (held/rows-held).
func BenchmarkRunHeldRows(b *testing.B) {
	n := 100_000
	if os.Getenv("RUNNER_BENCH_MILLION") == "1" {
		n = 1_000_000
	}
	fields := []evaluator.Field{{Column: "response", Label: "Response"}}
	for b.Loop() {
		b.StopTimer()
		base := liveHeap()
		rows := make([]models.DatasetRow, n)
		for i := range rows {
			// As read from the database: every string and map its own.
			h, q := float64(i%5+1), float64((i+i/7)%5+1)
			rows[i] = models.DatasetRow{ID: int64(i + 1), DatasetID: 1, Position: i, ExternalID: fmt.Sprintf("s%07d", i),
				Data: map[string]string{"id": fmt.Sprintf("s%07d", i),
					"response": strings.Clone(fmt.Sprintf("Response %d: a reply of quality %d to the request, judged for the benchmark", i, i%5+1))},
				Ratings: map[string]*float64{"human": &h, "human2": &q}}
		}
		b.StartTimer()
		ids, index, samples := runRows(rows, fields)
		b.StopTimer()
		both := liveHeap() - base
		runtime.KeepAlive(rows)
		rows = nil
		kept := liveHeap() - base
		if len(ids) != n || len(index) != n || len(samples) != n || samples[n-1].Fields[0].Value == "" {
			b.Fatalf("runRows kept %d ids, %d places, %d samples", len(ids), len(index), len(samples))
		}
		runtime.KeepAlive(ids)
		runtime.KeepAlive(index)
		runtime.KeepAlive(samples)
		const mib = 1 << 20
		b.ReportMetric(float64(both)/mib, "rows-held-MiB")
		b.ReportMetric(float64(kept)/mib, "held-MiB")
		b.ReportMetric(float64(kept)/float64(both), "held/rows-held")
		b.StartTimer()
	}
}
