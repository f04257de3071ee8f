package handlers

import (
	"math/rand/v2"
	"net/url"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkLiveSampleTable compares one view's samples table of a running
// run's shared figures (BATCHEVAL_BENCH_LIVETABLE samples, 100,000 by
// default): filtered and sorted at each view (sampleTable, as before)
// against the order kept with the figures (sampleTableOf, after the first
// view), alternated in one process; medians of 5 of each, per query.
func BenchmarkLiveSampleTable(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("BATCHEVAL_BENCH_LIVETABLE")); err == nil && v > 0 {
		n = v
	}
	r := rand.New(rand.NewPCG(1, 2))
	ss := make([]report.SampleResult, n)
	for i := range ss {
		s := &ss[i]
		s.RowID, s.Position, s.ExternalID = int64(i+1), int32(i), "row-"+strconv.Itoa(i)
		if r.IntN(10) > 0 {
			f, h := float64(1+r.IntN(5)), float64(1+r.IntN(5))
			d := f - h
			if d < 0 {
				d = -d
			}
			s.Final, s.Human, s.AbsDiff = &f, &h, &d
		} else {
			s.Missing = int32(1 + r.IntN(2))
		}
	}
	rep := &report.Report{Run: models.Run{ID: 1}, Criteria: []report.CriterionReport{{Samples: ss}}}
	lv := &liveFiguresEntry{ready: make(chan struct{}), rep: rep}
	close(lv.ready)
	queries := []url.Values{
		{},
		{"sort": {"score"}, "dir": {"desc"}, "page": {"3"}},
		{"sort": {"diff"}, "dir": {"desc"}, "only": {"missing"}},
	}
	median := func(ds []time.Duration) time.Duration {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[len(ds)/2]
	}
	for b.Loop() {
		for _, q := range queries {
			sampleTableOf(lv, rep, q, nil) // the first view sorts
			var old, kept []time.Duration
			for range 5 {
				start := time.Now()
				sampleTable(rep, q)
				old = append(old, time.Since(start))
				start = time.Now()
				sampleTableOf(lv, rep, q, nil)
				kept = append(kept, time.Since(start))
			}
			o, k := median(old), median(kept)
			b.Logf("%d samples, ?%s: sorted per view %v, kept order %v (%.0f×)", n, q.Encode(), o, k, float64(o)/float64(max(k, time.Nanosecond)))
		}
	}
}
