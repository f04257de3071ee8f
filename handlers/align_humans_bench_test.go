package handlers

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/align"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkHeldOutHumans times, on SQLite, what launching an alignment's
// held-out runs now reads besides the held-out rows when the source run
// reads browser ratings: the run's human rating of each held-out sample
// from its stored results (heldOutHumans), against the read of the
// held-out rows the launch did before (FindDatasetRows), in the same
// process, medians of three. The source is a finished synthesized run of
// BATCHEVAL_BENCH_HELDOUT samples (comma-separated sizes; 10,000 by
// default) with one browser rating of each sample on its first criterion,
// chosen for its report, its figures stored; half held out. Run with
// -benchtime=1x.
func BenchmarkHeldOutHumans(b *testing.B) {
	sizes := []int{10000}
	if v := os.Getenv("BATCHEVAL_BENCH_HELDOUT"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("BATCHEVAL_BENCH_HELDOUT=%q: %q is not a size", v, f)
			}
			sizes = append(sizes, n)
		}
	}
	ctx := context.Background()
	median := func(fn func()) time.Duration {
		var took []time.Duration
		for range 3 {
			start := time.Now()
			fn()
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		return took[1]
	}
	for b.Loop() {
		for _, n := range sizes {
			_, h, p := benchServer(b, models.SQLite)
			ds, ids := synthDataset(b, h.DB, p, n)
			src := synthRunOn(b, h.DB, p, ds, ids, 0)
			run, err := h.DB.FindRun(ctx, p.WorkspaceID, src)
			mustB(b, err)
			crit := run.RubricSnapshot.Criteria[0]
			reviews := make([]models.ReviewRating, len(ids))
			for k, id := range ids {
				v := crit.Lo + float64(k%int(crit.Hi-crit.Lo+1))
				reviews[k] = models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, RowID: id, Criterion: crit.Name, HumanColumn: crit.HumanColumn,
					Reviewer: "bench", RunID: &src, Lo: crit.Lo, Hi: crit.Hi, Score: &v, Tags: []string{}, CreatedAt: time.Now().UTC()}
			}
			mustB(b, h.DB.Gorm.CreateInBatches(reviews, 500).Error)
			_, err = h.DB.SetRunHumanSource(ctx, p.WorkspaceID, src, models.HumansBrowser, "bench")
			mustB(b, err)
			mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, src))
			run, err = h.DB.FindRun(ctx, p.WorkspaceID, src)
			mustB(b, err)
			_, held := align.Split(ids, 1, align.DefaultHeldOutShare)
			a := models.Alignment{WorkspaceID: p.WorkspaceID, SourceRunID: src, HeldOutRowIDs: held}
			lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})

			rowsTook := median(func() {
				rows, err := h.DB.FindDatasetRows(lctx, ds.ID, held)
				mustB(b, err)
				if len(rows) != len(held) {
					b.Fatalf("%d rows, want %d", len(rows), len(held))
				}
			})
			humansTook := median(func() {
				hs, err := h.heldOutHumans(lctx, a, run)
				mustB(b, err)
				if hs == nil || len(hs.ByRow) != len(held) {
					b.Fatalf("held-out humans: %+v", hs)
				}
			})
			ratio := float64(humansTook) / float64(rowsTook)
			b.Logf("%d samples, %d held out: the held-out rows read in %v, the source run's ratings of them in %v (%.2fx the rows' read; medians of 3)",
				n, len(held), rowsTook.Round(time.Microsecond), humansTook.Round(time.Microsecond), ratio)
			b.ReportMetric(ratio, fmt.Sprintf("%dk-humans/rows", n/1000))
		}
	}
}
