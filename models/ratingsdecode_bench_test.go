package models

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkRowRatingsDecode: the stored ratings texts of 100,000 rows
// decoded as ListDatasetRowFigures decodes them, before livemem47
// (ratingMaps.of: encoding/json for each distinct text) and now
// (ratingsReader.of: flat texts by hand), in turn in one process: bytes
// allocated and time for the 100,000 rows, medians of 5, as ratios. Two
// shapes: continuous ratings of two criteria as the synthesized runs
// store them (every row its own text) and whole 1-5 ratings (shared).
//
//	go test ./models -run '^$' -bench RowRatingsDecode -benchtime=1x -v
func BenchmarkRowRatingsDecode(b *testing.B) {
	const rows = 100_000
	rng := rand.New(rand.NewPCG(47, 2))
	shapes := []struct {
		name  string
		texts [][]byte
	}{{name: "continuous"}, {name: "whole-1-5"}}
	for i := range rows {
		c, f := 1+4*rng.Float64(), 1+4*rng.Float64()
		cont, _ := json.Marshal(map[string]*float64{"coherence": &c, "fluency": &f})
		shapes[0].texts = append(shapes[0].texts, cont)
		shapes[1].texts = append(shapes[1].texts, fmt.Appendf(nil, `{"coherence":%d,"fluency":%d}`, 1+i%5, 1+i/5%5))
	}
	before := func(texts [][]byte) {
		m := ratingMaps{}
		for _, t := range texts {
			if _, err := m.of(t); err != nil {
				b.Fatal(err)
			}
		}
	}
	now := func(texts [][]byte) {
		var rr ratingsReader
		for _, t := range texts {
			if _, err := rr.of(t); err != nil {
				b.Fatal(err)
			}
		}
	}
	measure := func(f func([][]byte), texts [][]byte) (time.Duration, uint64) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		a := ms.TotalAlloc
		start := time.Now()
		f(texts)
		took := time.Since(start)
		runtime.ReadMemStats(&ms)
		return took, ms.TotalAlloc - a
	}
	for b.Loop() {
		for _, sh := range shapes {
			var bt, nt []time.Duration
			var ba, na uint64
			for range 5 {
				t, a := measure(before, sh.texts)
				bt, ba = append(bt, t), a
				t, a = measure(now, sh.texts)
				nt, na = append(nt, t), a
			}
			med := func(d []time.Duration) time.Duration {
				slices.Sort(d)
				return d[len(d)/2]
			}
			tb, tn := med(bt), med(nt)
			b.Logf("%s, %d rows: before %v, %.1f MiB allocated; now %v, %.1f MiB; now/before time %.2f, allocated %.2f",
				sh.name, rows, tb.Round(time.Millisecond), float64(ba)/(1<<20), tn.Round(time.Millisecond), float64(na)/(1<<20),
				float64(tn)/float64(tb), float64(na)/float64(ba))
			b.ReportMetric(float64(na)/float64(ba), sh.name+"-alloc-now/before")
			b.ReportMetric(float64(tn)/float64(tb), sh.name+"-time-now/before")
		}
	}
}
