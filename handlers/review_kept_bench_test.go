package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// BenchmarkRatinglessReviewGrowth times saving a review without a rating
// (a comment, which keeps the reviewer's current rating) through the review
// form, on a dataset of 500 samples with 2,000, then 20,000 reviews of the
// criterion, on SQLite (or the database BATCHEVAL_BENCH_LARGE_DB names):
// the median of five saves after a first, and its ratio to the 2,000's.
// Run with -benchtime=1x.
func BenchmarkRatinglessReviewGrowth(b *testing.B) {
	d := models.SQLite
	if v := os.Getenv("BATCHEVAL_BENCH_LARGE_DB"); v != "" {
		d = models.Dialect(v)
	}
	for b.Loop() {
		var base time.Duration
		for _, n := range []int{2000, 20000} {
			e, h, p := benchServer(b, d)
			ds, ids := synthDataset(b, h.DB, p, 500)
			run := synthRunOn(b, h.DB, p, ds, ids, 0)
			now := time.Now().UTC()
			reviews := make([]models.ReviewRating, 0, n)
			for i := range n {
				v := float64(1 + i%5)
				reviews = append(reviews, models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: ds.ID, RowID: ids[i%len(ids)], Criterion: "Coherence",
					HumanColumn: "coherence", Reviewer: fmt.Sprintf("Reviewer %d", i%7), RunID: &run, Score: &v, Lo: 1, Hi: 5,
					Comment: "a note on the sample", Tags: []string{"bench"}, CreatedAt: now})
			}
			mustB(b, h.DB.Gorm.CreateInBatches(&reviews, 500).Error)
			analyzeBench(b, h.DB)
			form := url.Values{"run": {fmt.Sprint(run)}, "row": {fmt.Sprint(ids[3])}, "criterion": {"Coherence"}, "score": {""},
				"comment": {"a comment, later"}, "reviewer": {"Reviewer 3"}, "back": {fmt.Sprintf("/datasets/%d/review", ds.ID)}}
			save := func() time.Duration {
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/datasets/%d/review", ds.ID), strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				rec := httptest.NewRecorder()
				start := time.Now()
				e.ServeHTTP(rec, req)
				took := time.Since(start)
				if rec.Code != http.StatusSeeOther {
					b.Fatalf("save: %d %.300s", rec.Code, rec.Body.String())
				}
				return took
			}
			save()
			var took []time.Duration
			for range 5 {
				took = append(took, save())
			}
			slices.Sort(took)
			med := took[2]
			if base == 0 {
				base = med
			}
			b.Logf("a comment without a rating, %d reviews of the criterion: median %v (x%.2f the 2,000's)", n, med.Round(10*time.Microsecond), med.Seconds()/base.Seconds())
			b.ReportMetric(float64(med.Microseconds())/1000, fmt.Sprintf("save-%d-ms", n))
		}
	}
}
