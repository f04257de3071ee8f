package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// BenchmarkAPIRateLimitCost times GET /api/v1/projects/{id} with a token,
// without a rate limit (the baseline) and with one (an upsert of the
// token's count per request), on SQLite (or PostgreSQL under
// with-postgres.sh, with -bench ...PG): the median of 200 calls each,
// alternating, and the ratio of the limited one's to the baseline's.
func BenchmarkAPIRateLimitCost(b *testing.B) {
	for _, d := range dbtest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			ctx := context.Background()
			e, h, p := benchServer(b, d)
			u, err := h.DB.CreateUser(ctx, p.WorkspaceID, models.RoleEditor, models.NewUser{Email: "bench@a.test", Name: "Bench", Password: "bench password 1"})
			mustB(b, err)
			_, token, err := h.DB.CreateAPIToken(ctx, p.WorkspaceID, u.ID, "bench")
			mustB(b, err)
			call := func() time.Duration {
				req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/v1/projects/%d", p.ID), nil)
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				start := time.Now()
				e.ServeHTTP(rec, req)
				took := time.Since(start)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %.300s", rec.Code, rec.Body)
				}
				return took
			}
			for b.Loop() {
				var off, on []time.Duration
				for range 200 {
					h.APIRateLimit = 0
					off = append(off, call())
					h.APIRateLimit = 1 << 30
					on = append(on, call())
				}
				slices.Sort(off)
				slices.Sort(on)
				b.Logf("%s: median %v without a limit, %v with one (x%.2f)", d, off[100].Round(time.Microsecond), on[100].Round(time.Microsecond), on[100].Seconds()/off[100].Seconds())
				b.ReportMetric(on[100].Seconds()/off[100].Seconds(), "ratio")
			}
		})
	}
}
