package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkReviewQueueTeamProgress measures, on SQLite, what the queue's
// team progress line costs its page: a finished synthetic run of
// BATCHEVAL_BENCH_TEAM_SAMPLES samples (20,000 by default) whose second
// criterion three reviewers rated, each half of the samples, with one
// rating in ten given twice (the later one counts), Ann's cookie opening
// the queue. In the same process it times the page with the line (median
// of seven) and the count alone (models.TeamRatedSamples, median of
// seven), and reports the count's share of the page and the page over the
// page without it (page / (page − count)). Run with -benchtime=1x.
func BenchmarkReviewQueueTeamProgress(b *testing.B) {
	n := benchSizeAbove(b, "BATCHEVAL_BENCH_TEAM_SAMPLES", 20000, 100)
	ctx := context.Background()
	e, h, p := benchServer(b, models.SQLite)
	ds, ids := synthDataset(b, h.DB, p, n)
	runID := synthRunOn(b, h.DB, p, ds, ids, 0)
	mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, runID))
	run, err := h.DB.FindRun(ctx, p.WorkspaceID, runID)
	mustB(b, err)
	crit := run.RubricSnapshot.Criteria[1]
	var rs []models.ReviewRating
	for k, id := range ids {
		for w, who := range []string{"Ann", "Bob", "Cid"} {
			if (k+w)%2 != 0 {
				continue
			}
			v := crit.Lo + float64((k+w)%int(crit.Hi-crit.Lo+1))
			r := models.ReviewRating{WorkspaceID: ds.WorkspaceID, DatasetID: ds.ID, RowID: id, Criterion: crit.Name, HumanColumn: crit.HumanColumn,
				Reviewer: who, RunID: &runID, Lo: crit.Lo, Hi: crit.Hi, Score: &v, Tags: []string{}, CreatedAt: time.Now().UTC()}
			rs = append(rs, r)
			if k%10 == 0 {
				rs = append(rs, r)
			}
		}
	}
	mustB(b, h.DB.Gorm.CreateInBatches(&rs, 500).Error)
	lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})
	path := fmt.Sprintf("/datasets/%d/review?run=%d&criterion=1&blind=off", ds.ID, runID)
	median := func(f func()) time.Duration {
		var took []time.Duration
		for range 7 {
			start := time.Now()
			f()
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		return took[3]
	}
	for b.Loop() {
		rec := openQueueAsAnn(b, e, h, lctx, ds.ID, path)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="review-team-progress"`) {
			b.Fatalf("queue: %d, no team line", rec.Code)
		}
		page := median(func() { openQueueAsAnn(b, e, h, lctx, ds.ID, path) })
		count := median(func() {
			_, err := h.DB.TeamRatedSamples(lctx, ds.WorkspaceID, ds.ID, crit.Name, crit.Lo, crit.Hi, models.TeamRatedBound)
			mustB(b, err)
		})
		got, err := h.DB.TeamRatedSamples(lctx, ds.WorkspaceID, ds.ID, crit.Name, crit.Lo, crit.Hi, models.TeamRatedBound)
		mustB(b, err)
		b.Logf("%d samples, %d reviews, %d rated by the team: page %v, count alone %v (%.1f%% of the page; page/(page−count) %.2fx)",
			n, len(rs), got, page.Round(time.Microsecond), count.Round(time.Microsecond), 100*float64(count)/float64(page), float64(page)/float64(page-count))
		b.ReportMetric(float64(count)/float64(page), "count/page")
		b.ReportMetric(float64(page)/float64(page-count), "page/without")
	}
}
