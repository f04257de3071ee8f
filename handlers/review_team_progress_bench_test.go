package handlers

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
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
// seven: since reviewperf51 served from memory while the dataset's review
// version stands, so BenchmarkTeamRatedServed compares it with the old
// count), and reports the count's share of the page and the page over the
// page without it (page / (page − count)). Run with -benchtime=1x.
func BenchmarkReviewQueueTeamProgress(b *testing.B) {
	ctx, e, h, ds, crit, n, rs, runID := teamProgressBenchSetup(b, "BATCHEVAL_BENCH_TEAM_SAMPLES", 20000)
	lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: ds.WorkspaceID}, Role: models.RoleOwner})
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

// teamProgressBenchSetup builds BenchmarkReviewQueueTeamProgress's run
// and reviews.
func teamProgressBenchSetup(b *testing.B, sizeVar string, size int) (context.Context, *echo.Echo, *Handlers, models.Dataset, evaluator.Criterion, int, []models.ReviewRating, int64) {
	b.Helper()
	n := benchSizeAbove(b, sizeVar, size, 100)
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
	return ctx, e, h, ds, crit, n, rs, runID
}

// BenchmarkTeamRatedServed measures, on SQLite, the team count
// (models.TeamRatedSamples) served while the dataset's review version
// stands against the count read from the reviews at each view, as every
// view did before reviewperf51 (models.CountTeamRatedSamples), on
// BenchmarkReviewQueueTeamProgress's reviews (20,000 samples by default):
// medians of 15 in the same process, and their ratio; and the first view
// after a review is added (one count from the reviews, with the version
// read in the same statement) over the old count. Run with -benchtime=1x.
func BenchmarkTeamRatedServed(b *testing.B) {
	ctx, _, h, ds, crit, n, rs, _ := teamProgressBenchSetup(b, "BATCHEVAL_BENCH_TEAM_SAMPLES", 20000)
	median := func(f func()) time.Duration {
		var took []time.Duration
		for range 15 {
			start := time.Now()
			f()
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		return took[7]
	}
	old := func() {
		_, err := h.DB.CountTeamRatedSamples(ctx, ds.WorkspaceID, ds.ID, crit.Name, crit.Lo, crit.Hi, models.TeamRatedBound)
		mustB(b, err)
	}
	served := func() int {
		got, err := h.DB.TeamRatedSamples(ctx, ds.WorkspaceID, ds.ID, crit.Name, crit.Lo, crit.Hi, models.TeamRatedBound)
		mustB(b, err)
		return got
	}
	r := rs[0]
	for b.Loop() {
		want, err := h.DB.CountTeamRatedSamples(ctx, ds.WorkspaceID, ds.ID, crit.Name, crit.Lo, crit.Hi, models.TeamRatedBound)
		mustB(b, err)
		if got := served(); got != want {
			b.Fatalf("served %d, counted %d", got, want)
		}
		tOld := median(old)
		tNew := median(func() { served() })
		afterChange := median(func() {
			r.ID = 0
			_, err := h.DB.AddReviewRating(ctx, r)
			mustB(b, err)
			served()
		})
		tAdd := median(func() {
			r.ID = 0
			_, err := h.DB.AddReviewRating(ctx, r)
			mustB(b, err)
		})
		b.Logf("%d samples, %d reviews: old count %v a view, served %v (old/served %.0fx); a review added then a view %v, a review added alone %v (first view after a change ≈ %v, %.2fx the old count)",
			n, len(rs), tOld.Round(time.Microsecond), tNew.Round(time.Microsecond), float64(tOld)/float64(tNew),
			afterChange.Round(time.Microsecond), tAdd.Round(time.Microsecond), (afterChange - tAdd).Round(time.Microsecond), float64(afterChange-tAdd)/float64(tOld))
		b.ReportMetric(float64(tOld)/float64(tNew), "old/served")
		b.ReportMetric(float64(afterChange-tAdd)/float64(tOld), "firstview/old")
	}
}

// BenchmarkReviewerAgreementsServed measures, on SQLite, the alignment
// page's per-reviewer agreement table (reviewerAgreements) with each
// reviewer's figures served from the cache against computed at every view
// as before reviewperf51 (the cache emptied before each), on a finished
// synthetic run of BATCHEVAL_BENCH_AGREE_SAMPLES samples (8,000 by
// default: three reviewers rate 4,000 each, below stats.AnalyticAbove, so
// their Spearman and Kendall intervals are 1,000 bootstrap resamples, the
// costly case): medians of five in the same process, and their ratio. The
// table's other reads (the current ratings, the judge's scores) are in
// both. Run with -benchtime=1x.
func BenchmarkReviewerAgreementsServed(b *testing.B) {
	ctx, _, h, ds, _, n, rs, runID := teamProgressBenchSetup(b, "BATCHEVAL_BENCH_AGREE_SAMPLES", 8000)
	lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: ds.WorkspaceID}, Role: models.RoleOwner})
	run, err := h.DB.FindRun(lctx, ds.WorkspaceID, runID)
	mustB(b, err)
	median := func(f func()) time.Duration {
		var took []time.Duration
		for range 5 {
			start := time.Now()
			f()
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		return took[2]
	}
	table := func() string {
		ts, err := h.reviewerAgreements(lctx, ds.WorkspaceID, run)
		mustB(b, err)
		return agreementFigures(ts)
	}
	forget := func() {
		h.reports.mu.Lock()
		clear(h.reports.agreements)
		h.reports.mu.Unlock()
	}
	for b.Loop() {
		forget()
		fresh := table()
		if served := table(); served != fresh || !strings.Contains(fresh, "Resamples:1000") {
			b.Fatalf("served\n%s\nfresh\n%s", served, fresh)
		}
		old := median(func() { forget(); table() })
		table()
		cached := median(func() { table() })
		b.Logf("%d samples, %d reviews: the table computed at every view %v, served %v (%.1fx)", n, len(rs),
			old.Round(time.Microsecond), cached.Round(time.Microsecond), float64(old)/float64(cached))
		b.ReportMetric(float64(old)/float64(cached), "old/served")
	}
}
