package handlers

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkReviewQueueReviewGrowth checks, on SQLite, that a view of the
// review queue costs the same whatever the team's reviews of the dataset:
// one process, a finished run of 5,000 samples (synthRunOn) whose dataset
// holds 1,000 and then BATCHEVAL_BENCH_REVIEWS (100,000 by default)
// reviews by 50 reviewers on both criteria, Ann's 100 ratings of Coherence
// among them in both. Ann opens the queue (blind, by disagreement, after a
// warm-up that stores the run's summary); it reports the view's server
// time and bytes allocated (medians of seven) at each size and their
// ratio, big over small. The queue read every review of the dataset on
// each view before queue45. Run with -benchtime=1x.
func BenchmarkReviewQueueReviewGrowth(b *testing.B) {
	big := benchSizeAbove(b, "BATCHEVAL_BENCH_REVIEWS", 100000, 1000)
	const samples, annRated = 5000, 100
	ctx := context.Background()
	type measure struct {
		took  time.Duration
		alloc uint64
	}
	for b.Loop() {
		got := map[int]measure{}
		for _, n := range []int{1000, big} {
			e, h, p := benchServer(b, models.SQLite)
			ds, ids := synthDataset(b, h.DB, p, samples)
			src := synthRunOn(b, h.DB, p, ds, ids, 0)
			mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, src))
			// Ann rates the samples at every 50th row of Coherence; the
			// others rate every sample and criterion in turn.
			var rs []models.ReviewRating
			now := time.Now().UTC()
			for i := range n {
				r := models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, Criterion: "Coherence", HumanColumn: "coherence",
					Lo: 1, Hi: 5, Comment: "seen", Tags: []string{}, CreatedAt: now, RunID: &src}
				if i < annRated {
					r.RowID, r.Reviewer = ids[i*50], "Ann"
				} else {
					k := i - annRated
					r.RowID, r.Reviewer = ids[k%samples], fmt.Sprintf("R%02d", (k/samples)%50)
					if (k/samples/50)%2 == 1 {
						r.Criterion, r.HumanColumn = "Fluency", "fluency"
					}
				}
				v := float64(1 + i%5)
				r.Score = &v
				rs = append(rs, r)
			}
			mustB(b, h.DB.Gorm.CreateInBatches(&rs, 500).Error)
			lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})
			path := fmt.Sprintf("/datasets/%d/review?run=%d&criterion=0&order=disagreement", ds.ID, src)
			open := func() string { return openQueueAsAnn(b, e, h, lctx, ds.ID, path).Body.String() }
			for range 2 {
				open() // stores the run's summary
			}
			if body := open(); !strings.Contains(body, fmt.Sprintf(`data-testid="review-rated">%d<`, annRated)) || strings.Count(body, `data-testid="review-sample"`) != 1 {
				b.Fatalf("%d reviews: the page does not show one sample and Ann's %d ratings", n, annRated)
			}
			var took []time.Duration
			var alloc []uint64
			var ms runtime.MemStats
			for range 7 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				before := ms.TotalAlloc
				start := time.Now()
				open()
				took = append(took, time.Since(start))
				runtime.ReadMemStats(&ms)
				alloc = append(alloc, ms.TotalAlloc-before)
			}
			slices.Sort(took)
			slices.Sort(alloc)
			got[n] = measure{took[3], alloc[3]}
		}
		s, l := got[1000], got[big]
		b.Logf("1,000 reviews: %v, %d bytes allocated; %d reviews: %v, %d bytes (time %.2fx, allocated %.2fx)",
			s.took.Round(time.Microsecond), s.alloc, big, l.took.Round(time.Microsecond), l.alloc, float64(l.took)/float64(s.took), float64(l.alloc)/float64(s.alloc))
		b.ReportMetric(float64(l.took)/float64(s.took), "big/small-time")
		b.ReportMetric(float64(l.alloc)/float64(s.alloc), "big/small-alloc")
	}
}
