package handlers

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// BenchmarkBatchesList times, on SQLite, the list of a finished run's
// calls (/runs/:id/batches: its first page, a page deep in the list, the
// failed calls and one cause of them) for a run of BATCHEVAL_BENCH_BATCHES
// samples (comma-separated; 10,000 by default; two criteria, two rounds,
// batches of 10: 0.4 batches a sample) synthesized as
// BenchmarkReviewAndAlignPages does, each call with a 4 KB prompt and a 1 KB
// answer, one in 1,000 failed. Each
// page is timed whole, and its reads of the calls both ways in the same
// process: the statements before 00039 without its indexes (dropped for
// the while) and now (ListBatchSummaries, FailureCauses, the indexes made
// again); medians of three. Run with
// -benchtime=1x.
func BenchmarkBatchesList(b *testing.B) {
	sizes := []int{10000}
	if v := os.Getenv("BATCHEVAL_BENCH_BATCHES"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("BATCHEVAL_BENCH_BATCHES=%q: %q is not a size", v, f)
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
			// A judge call's texts as a run stores them: the prompt holds its
			// batch's ten samples (about 4 KB here), the answer their scores.
			mustB(b, h.DB.Gorm.Exec(`UPDATE run_batches SET request = ?, response = ? WHERE run_id = ?`,
				strings.Repeat("Dialogue: lorem ipsum dolor sit amet. ", 110), strings.Repeat("Sample 1: Analysis ... Score: 3\n", 30), src).Error)
			mustB(b, h.DB.Gorm.Exec(`UPDATE run_batches SET status = ?, error = 'judge: HTTP 429', error_kind = 'rate_limit' WHERE run_id = ? AND id % 1000 = 7`,
				models.BatchFailed, src).Error)
			var batches, failed int64
			mustB(b, h.DB.Gorm.Raw(`SELECT COUNT(*) FROM run_batches WHERE run_id = ?`, src).Scan(&batches).Error)
			mustB(b, h.DB.Gorm.Raw(`SELECT COUNT(*) FROM run_batches WHERE run_id = ? AND status = ?`, src, models.BatchFailed).Scan(&failed).Error)
			mustB(b, h.DB.Gorm.Exec(`UPDATE runs SET batches_failed = ? WHERE id = ?`, failed, src).Error)
			b.Logf("%d samples, %d batches (%d failed): synthesized in %v", n, batches, failed, time.Since(start).Round(time.Millisecond))
			lctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: models.Workspace{ID: p.WorkspaceID}, Role: models.RoleOwner})
			deep := max(1, int(batches)/batchesPerPage/2)
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
			// before reads what the list read before 00039: the count, the
			// page and the causes.
			before := func(f models.BatchFilter) func() {
				return func() {
					q := h.DB.Gorm.Model(&models.RunBatch{}).Where("run_id = ?", src)
					if f.Failed {
						q = q.Where("status = ?", models.BatchFailed)
						if f.Kind != "" {
							q = q.Where("error_kind = ?", f.Kind)
						}
					}
					var total int64
					mustB(b, q.Count(&total).Error)
					var bs []models.RunBatch
					mustB(b, q.Select("id, run_id, criterion_index, round, batch_index, row_ids, status, attempts, calls, latency_ms, error, error_kind, done_at").
						Order("criterion_index, round, batch_index").Offset(f.Offset).Limit(f.Limit).Find(&bs).Error)
					var causes []struct {
						ErrorKind string
						N         int
						LastID    int64
					}
					mustB(b, h.DB.Gorm.Model(&models.RunBatch{}).Select("error_kind, COUNT(*) AS n, MAX(id) AS last_id").
						Where("run_id = ? AND status = ?", src, models.BatchFailed).Group("error_kind").Order("n DESC, error_kind").Scan(&causes).Error)
				}
			}
			after := func(f models.BatchFilter) func() {
				return func() {
					_, _, err := h.DB.ListBatchSummaries(ctx, src, f)
					mustB(b, err)
					_, err = h.DB.FailureCauses(ctx, src)
					mustB(b, err)
				}
			}
			queries := []string{"", fmt.Sprintf("page=%d", deep), "status=failed", "status=failed&cause=rate_limit"}
			filter := func(q string) models.BatchFilter {
				f := models.BatchFilter{Limit: batchesPerPage}
				switch q {
				case "":
				case "status=failed":
					f.Failed = true
				case "status=failed&cause=rate_limit":
					f.Failed, f.Kind = true, "rate_limit"
				default:
					f.Offset = (deep - 1) * batchesPerPage
				}
				return f
			}
			// Before: without the indexes of failed calls, as before 00039.
			mustB(b, h.DB.Gorm.Exec(`DROP INDEX run_batches_failed_order`).Error)
			mustB(b, h.DB.Gorm.Exec(`DROP INDEX run_batches_failed`).Error)
			old := map[string]time.Duration{}
			for _, q := range queries {
				old[q] = median(before(filter(q)))
			}
			mustB(b, h.DB.Gorm.Exec(`CREATE INDEX run_batches_failed ON run_batches (run_id, error_kind, criterion_index, round, batch_index) WHERE status = 'failed'`).Error)
			mustB(b, h.DB.Gorm.Exec(`CREATE INDEX run_batches_failed_order ON run_batches (run_id, criterion_index, round, batch_index) WHERE status = 'failed'`).Error)
			for _, q := range queries {
				now := median(after(filter(q)))
				page := median(func() {
					req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d/batches?%s", src, q), nil).WithContext(lctx)
					rec := httptest.NewRecorder()
					c := e.NewContext(req, rec)
					c.SetParamNames("id")
					c.SetParamValues(strconv.FormatInt(src, 10))
					mustB(b, h.listRunBatches(c))
					if rec.Code != http.StatusOK {
						b.Fatalf("?%s: %d", q, rec.Code)
					}
				})
				name := strings.NewReplacer("=", "-", "&", "-").Replace(cmp.Or(q, "first-page"))
				b.Logf("?%s %d batches: reads before %v, after %v (%.1fx); the page %v (medians of 3)", q, batches,
					old[q].Round(time.Microsecond), now.Round(time.Microsecond), float64(old[q])/float64(now), page.Round(time.Microsecond))
				b.ReportMetric(float64(old[q])/float64(now), fmt.Sprintf("%s-%dk-before/after", name, batches/1000))
				b.ReportMetric(float64(page.Microseconds())/1000, fmt.Sprintf("%s-%dk-page-ms", name, batches/1000))
			}
		}
	}
}
