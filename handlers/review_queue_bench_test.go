package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// BenchmarkReviewQueueFromRanks times, on SQLite, the review queue of a
// finished run of BATCHEVAL_BENCH_QUEUE samples (comma-separated sizes;
// 10,000 by default) synthesized as BenchmarkReviewAndAlignPages does, with
// a reviewer who rated 20 samples, in the same process both ways: the
// queue read from every stored outcome of the criterion and ordered in Go
// (outcomesQueueIndex, the path before, which results stored before 00038
// still take for the order by spread), and from the stored ranks
// (queueIndexOf: the rated rows' ranks and the one row shown), in each
// order. Each is the median of three of
// reading the queue's place of the first unrated sample and that sample;
// then the whole page is timed the new way. The ratio is before over
// after. Run with -benchtime=1x.
func BenchmarkReviewQueueFromRanks(b *testing.B) {
	sizes := []int{10000}
	if v := os.Getenv("BATCHEVAL_BENCH_QUEUE"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("BATCHEVAL_BENCH_QUEUE=%q: %q is not a size", v, f)
			}
			sizes = append(sizes, n)
		}
	}
	ctx := context.Background()
	for b.Loop() {
		for _, n := range sizes {
			e, h, p := benchServer(b, models.SQLite)
			start := time.Now()
			ds, ids := synthDataset(b, h.DB, p, n)
			src := synthRunOn(b, h.DB, p, ds, ids, 0)
			synthTook := time.Since(start)
			start = time.Now()
			mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, src))
			b.Logf("%d samples: synthesized in %v, summaries stored in %v", n, synthTook.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
			lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})
			run, err := h.DB.FindRun(ctx, p.WorkspaceID, src)
			mustB(b, err)
			crit := run.RubricSnapshot.Criteria[0]
			rated := ids[:min(len(ids), 20)]
			for _, id := range rated {
				v := 3.0
				_, err := h.DB.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, RowID: id, Criterion: crit.Name,
					HumanColumn: crit.HumanColumn, Reviewer: "Ann", RunID: &src, Lo: crit.Lo, Hi: crit.Hi, Score: &v})
				mustB(b, err)
			}
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
			for _, order := range []string{orderDisagreement, orderUncertain, orderRandom} {
				var shown [2]int64
				first := 0 // the first unrated sample's place
				who := &models.ReviewerRatings{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, Criterion: crit.Name, Reviewer: "Ann", Lo: crit.Lo, Hi: crit.Hi}
				read := func(k int, index func(context.Context, models.Run, int, string, int64, bool, *runReviews, *models.ReviewerRatings) (queueIndex, error)) func() {
					return func() {
						qi, err := index(lctx, run, 0, order, 1, false, h.newRunReviews(), who)
						mustB(b, err)
						s, err := qi.at(lctx, qi.firstUnrated)
						mustB(b, err)
						if qi.total != n || qi.ratedByMe != len(rated) {
							b.Fatalf("%s: %d samples, %d rated; want %d, %d", order, qi.total, qi.ratedByMe, n, len(rated))
						}
						shown[k], first = s.RowID, qi.firstUnrated
					}
				}
				before := median(read(0, h.outcomesQueueIndex))
				after := median(read(1, h.queueIndexOf))
				if shown[0] != shown[1] {
					b.Fatalf("%s: the queue opens on row %d from every outcome, row %d from the ranks", order, shown[0], shown[1])
				}
				openPage := func(extra url.Values) func() {
					return func() {
						q := url.Values{"run": {strconv.FormatInt(src, 10)}, "criterion": {"0"}, "order": {order}}
						for k, v := range extra {
							q[k] = v
						}
						req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/datasets/%d/review?%s", ds.ID, q.Encode()), nil).WithContext(lctx)
						req.AddCookie(&http.Cookie{Name: reviewerCookie, Value: "Ann"})
						rec := httptest.NewRecorder()
						c := e.NewContext(req, rec)
						c.SetParamNames("id")
						c.SetParamValues(strconv.FormatInt(ds.ID, 10))
						mustB(b, h.reviewQueue(c, false))
						if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), fmt.Sprintf("/samples/%d\"", shown[1])) {
							b.Fatalf("queue page %v: %d, not on row %d", extra, rec.Code, shown[1])
						}
					}
				}
				// The same place opened by index alone (a link made before
				// links named their sample) and by the sample it holds (the
				// form's way back: its place looked up by key).
				openPage(url.Values{"i": {strconv.Itoa(first)}})() // warm, so neither way pays for the first read
				byIndex := median(openPage(url.Values{"i": {strconv.Itoa(first)}}))
				bySample := median(openPage(url.Values{"i": {strconv.Itoa(first)}, "sample": {strconv.FormatInt(shown[1], 10)}}))
				b.Logf("%s %d samples: the page by index %v, by its sample %v (%.2fx)", order, n, byIndex.Round(time.Microsecond),
					bySample.Round(time.Microsecond), float64(bySample)/float64(byIndex))
				b.ReportMetric(float64(bySample)/float64(byIndex), fmt.Sprintf("%s-%dk-sample/index", order, n/1000))
				page := median(func() {
					q := url.Values{"run": {strconv.FormatInt(src, 10)}, "criterion": {"0"}, "order": {order}}
					req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/datasets/%d/review?%s", ds.ID, q.Encode()), nil).WithContext(lctx)
					req.AddCookie(&http.Cookie{Name: reviewerCookie, Value: "Ann"})
					rec := httptest.NewRecorder()
					c := e.NewContext(req, rec)
					c.SetParamNames("id")
					c.SetParamValues(strconv.FormatInt(ds.ID, 10))
					mustB(b, h.reviewQueue(c, false))
					if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), fmt.Sprintf("/samples/%d\"", shown[1])) {
						b.Fatalf("queue page: %d, not on row %d", rec.Code, shown[1])
					}
				})
				ratio := float64(before) / float64(after)
				b.Logf("%s %d samples: every outcome %v, ranks %v (%.0fx); the page %v (medians of 3)", order, n,
					before.Round(time.Microsecond), after.Round(time.Microsecond), ratio, page.Round(time.Microsecond))
				b.ReportMetric(ratio, fmt.Sprintf("%s-%dk-before/after", order, n/1000))
				b.ReportMetric(float64(page.Microseconds())/1000, fmt.Sprintf("%s-%dk-page-ms", order, n/1000))
			}
		}
	}
}
