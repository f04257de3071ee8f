package models_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/batcheval/batcheval/internal/proccpu"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// BenchmarkExcludedRatingsRead measures what leaving out the ratings of
// excluded reviewers adds to reading a run's browser ratings (as
// report.readBrowserReviews does): the ratings read alone, against the
// same read plus the workspace's excluded raters and the filter, with the
// first account that rated excluded. Medians of five reads each, in one
// process (BENCHMARKS.md, "Excluded reviewers' ratings").
func BenchmarkExcludedRatingsRead(b *testing.B) {
	n := 100000
	dialects := []models.Dialect{models.SQLite}
	if os.Getenv("TEST_DATABASE_URL") != "" {
		dialects = append(dialects, models.Postgres)
	}
	for _, d := range dialects {
		db := dbtest.Open(b, d)
		ctx := context.Background()
		ws, ds := seedRatings(b, db, n/2, n)
		criteria := []string{"coh", "flu"}
		all, err := db.ListCriteriaRatings(ctx, ws.ID, ds.ID, criteria, 0)
		if err != nil {
			b.Fatal(err)
		}
		var excluded int64
		for _, r := range all["coh"] {
			if r.UserID != nil {
				excluded = *r.UserID
				break
			}
		}
		if excluded == 0 {
			b.Fatal("no account rated")
		}
		if err := db.SetRatingsExcluded(ctx, ws.ID, excluded, true, "bench"); err != nil {
			b.Fatal(err)
		}
		median := func(fn func() int) (wall, cpu time.Duration, kept int) {
			var walls, cpus []time.Duration
			for range 5 {
				start, used := time.Now(), proccpu.Now(b)
				kept = fn()
				walls, cpus = append(walls, time.Since(start)), append(cpus, proccpu.Now(b).Sub(used).CPU)
			}
			slices.Sort(walls)
			slices.Sort(cpus)
			return walls[2], cpus[2], kept
		}
		read := func(filter bool) int {
			m, err := db.ListCriteriaRatings(ctx, ws.ID, ds.ID, criteria, 0)
			if err != nil {
				b.Fatal(err)
			}
			if filter {
				ex, err := db.ExcludedRaters(ctx, ws.ID)
				if err != nil {
					b.Fatal(err)
				}
				for name, rs := range m {
					m[name], _ = models.WithoutExcluded(rs, ex)
				}
			}
			k := 0
			for _, rs := range m {
				k += len(rs)
			}
			return k
		}
		b.Run(fmt.Sprintf("%s/reviews=%d", d, n), func(b *testing.B) {
			for b.Loop() {
				before, beforeCPU, all := median(func() int { return read(false) })
				after, afterCPU, kept := median(func() int { return read(true) })
				if kept >= all {
					b.Fatalf("%d ratings kept of %d: nothing left out", kept, all)
				}
				b.Logf("%s, %d ratings read: alone %v (CPU %v), with the exclusion (%d kept) %v (CPU %v), ratio %.2fx (CPU %.2fx)",
					d, all, before.Round(time.Millisecond), beforeCPU.Round(time.Millisecond), kept, after.Round(time.Millisecond), afterCPU.Round(time.Millisecond),
					float64(after)/float64(before), float64(afterCPU)/float64(beforeCPU))
				b.ReportMetric(float64(after)/float64(before), "after/before")
			}
		})
	}
}
