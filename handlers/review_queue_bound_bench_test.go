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
	"github.com/batcheval/batcheval/web"
	"github.com/labstack/echo/v4"
)

// BenchmarkReviewQueuePageBound checks, on SQLite, that the review queue's
// page is bounded whatever the run's size: a finished run of 1,000 and of
// BATCHEVAL_BENCH_QUEUE_BIG samples (100,000 by default), synthesized as
// BenchmarkReviewQueueFromRanks does, each queue opened in every order,
// then followed three samples on by its "next" link (which keeps run,
// criterion, order, seed and blind mode), in the same process. It reports
// the page's server time (median of five) and its size in bytes at each
// size, and their ratio big over small: a page that listed the samples
// would grow with them. Run with -benchtime=1x.
func BenchmarkReviewQueuePageBound(b *testing.B) {
	big := benchSizeAbove(b, "BATCHEVAL_BENCH_QUEUE_BIG", 100000, 1000)
	ctx := context.Background()
	type measure struct {
		took  time.Duration
		bytes int
	}
	for b.Loop() {
		got := map[int]map[string]measure{}
		for _, n := range []int{1000, big} {
			e, h, p := benchServer(b, models.SQLite)
			ds, ids := synthDataset(b, h.DB, p, n)
			src := synthRunOn(b, h.DB, p, ds, ids, 0)
			mustB(b, report.StoreStats(ctx, h.DB, p.WorkspaceID, src))
			lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})
			open := func(path string) string {
				rec := openQueueAsAnn(b, e, h, lctx, ds.ID, path)
				body := rec.Body.String()
				if rec.Code != http.StatusOK || strings.Count(body, `data-testid="review-sample"`) != 1 {
					b.Fatalf("%s: %d, want one sample shown", path, rec.Code)
				}
				return body
			}
			got[n] = map[string]measure{}
			for _, order := range []string{orderDisagreement, orderUncertain, orderRandom} {
				first := fmt.Sprintf("/datasets/%d/review?%s", ds.ID, url.Values{"run": {strconv.FormatInt(src, 10)}, "criterion": {"1"}, "order": {order}, "blind": {"off"}}.Encode())
				path := first
				for step := range 3 {
					body := open(path)
					if want := fmt.Sprintf("Sample <strong data-testid=\"review-position\">%d</strong> of %s", step+1, web.Count(n)); !strings.Contains(body, want) {
						b.Fatalf("%s step %d: the page does not say %q", order, step, want)
					}
					next := nextHref(body)
					if next == "" {
						b.Fatalf("%s step %d: no next link", order, step)
					}
					for _, keep := range []string{"criterion=1", "order=" + order, "blind=off", "run=" + strconv.FormatInt(src, 10)} {
						if !strings.Contains(next, keep) {
							b.Fatalf("%s step %d: the next link %q drops %s", order, step, next, keep)
						}
					}
					path = next
				}
				var took []time.Duration
				size := 0
				for range 5 {
					start := time.Now()
					size = len(open(first))
					took = append(took, time.Since(start))
				}
				slices.Sort(took)
				got[n][order] = measure{took[2], size}
			}
		}
		for _, order := range []string{orderDisagreement, orderUncertain, orderRandom} {
			s, l := got[1000][order], got[big][order]
			b.Logf("%s: 1,000 samples %v, %d bytes; %d samples %v, %d bytes (time %.2fx, size %.3fx)", order, s.took.Round(time.Microsecond), s.bytes,
				big, l.took.Round(time.Microsecond), l.bytes, float64(l.took)/float64(s.took), float64(l.bytes)/float64(s.bytes))
			b.ReportMetric(float64(l.took)/float64(s.took), order+"-big/small-time")
			b.ReportMetric(float64(l.bytes)/float64(s.bytes), order+"-big/small-bytes")
		}
	}
}

// benchSizeAbove is the size a benchmark's environment variable name sets,
// def when unset; a value that is not a whole number above min stops the
// benchmark with what to write.
func benchSizeAbove(b *testing.B, name string, def, min int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= min {
		b.Fatalf("%s=%q: want a whole number above %d", name, v, min)
	}
	return n
}

// openQueueAsAnn serves the review queue page at path of dataset dsID to
// the reviewer Ann (her cookie), in ctx's principal, straight through the
// handler.
func openQueueAsAnn(b *testing.B, e *echo.Echo, h *Handlers, ctx context.Context, dsID int64, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil).WithContext(ctx)
	req.AddCookie(&http.Cookie{Name: reviewerCookie, Value: "Ann"})
	rec := httptest.NewRecorder()
	c := e.NewContext(req, rec)
	c.SetParamNames("id")
	c.SetParamValues(strconv.FormatInt(dsID, 10))
	mustB(b, h.reviewQueue(c, false))
	return rec
}

// nextHref is the address of the queue page's "next" link, unescaped;
// "" when it has none.
func nextHref(body string) string {
	i := strings.Index(body, `data-testid="review-next"`)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(body[:i], "<a ")
	tag := body[start:i]
	_, href, ok := strings.Cut(tag, `href="`)
	if !ok {
		return ""
	}
	href, _, _ = strings.Cut(href, `"`)
	return strings.ReplaceAll(href, "&amp;", "&")
}
