package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// BenchmarkAPIListsGrowth times the first page (?limit=10) of the API's
// lists of projects, judges, a dataset's reviews (all criteria, and one)
// and the caller's tokens in a workspace with 200, then 2,000 of each, on
// SQLite (or the database BATCHEVAL_BENCH_LARGE_DB names): the median of
// five calls after a first, and its ratio to the 200's. Run with
// -benchtime=1x.
func BenchmarkAPIListsGrowth(b *testing.B) {
	for b.Loop() {
		base := map[string]time.Duration{}
		for _, n := range []int{200, 2000} {
			e, _, token, paths := apiListsBenchServer(b, n)
			for _, l := range paths {
				call := func() time.Duration {
					req := httptest.NewRequest(http.MethodGet, l.path, nil)
					req.Header.Set("Authorization", "Bearer "+token)
					rec := httptest.NewRecorder()
					start := time.Now()
					e.ServeHTTP(rec, req)
					took := time.Since(start)
					if rec.Code != http.StatusOK {
						b.Fatalf("GET %s: %d %.300s", l.path, rec.Code, rec.Body.String())
					}
					return took
				}
				call()
				var took []time.Duration
				for range 5 {
					took = append(took, call())
				}
				slices.Sort(took)
				med := took[2]
				if base[l.name] == 0 {
					base[l.name] = med
				}
				b.Logf("api %s?limit=10, %d rows: median %v (x%.2f the 200's)", l.name, n, med.Round(10*time.Microsecond), med.Seconds()/base[l.name].Seconds())
				b.ReportMetric(float64(med.Microseconds())/1000, fmt.Sprintf("%s-%d-ms", l.name, n))
			}
		}
	}
}

type apiListPath struct{ name, path string }

// apiListsBenchServer is a server whose workspace has n projects, n
// judges, n API tokens of its owner and a dataset of n reviews (two
// criteria in turn) beside another of n reviews, with its handlers, the
// owner's token and the lists' paths.
func apiListsBenchServer(b *testing.B, n int) (*echo.Echo, *Handlers, string, []apiListPath) {
	ctx := context.Background()
	d := models.SQLite
	if v := os.Getenv("BATCHEVAL_BENCH_LARGE_DB"); v != "" {
		d = models.Dialect(v)
	}
	e, h, p := benchServer(b, d)
	owner, err := h.DB.CreateUser(ctx, p.WorkspaceID, models.RoleOwner, models.NewUser{Email: "owner@bench.test", Name: "Owner", Password: "bench password 1"})
	mustB(b, err)
	_, token, err := h.DB.CreateAPIToken(ctx, p.WorkspaceID, owner.ID, "bench")
	mustB(b, err)
	reviewed, rows := synthDataset(b, h.DB, p, 100)
	other, otherRows := synthDataset(b, h.DB, p, 100)
	var reviews []models.ReviewRating
	now := time.Now().UTC()
	for i := range n {
		mustB(b, h.DB.CreateProject(ctx, &models.Project{WorkspaceID: p.WorkspaceID, Name: fmt.Sprintf("Project %d", i)}))
		mustB(b, h.DB.SaveJudge(ctx, &models.Judge{WorkspaceID: p.WorkspaceID, Name: fmt.Sprintf("Judge %d", i), BaseURL: "http://127.0.0.1:9/v1",
			Model: "m", TimeoutSeconds: 5, MaxConcurrency: 1}))
		_, _, err := h.DB.CreateAPIToken(ctx, p.WorkspaceID, owner.ID, fmt.Sprintf("token %d", i))
		mustB(b, err)
		v := float64(1 + i%5)
		crit := []string{"coherence", "fluency"}[i%2]
		reviews = append(reviews,
			models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: reviewed.ID, RowID: rows[i%len(rows)], Criterion: crit, HumanColumn: crit,
				Reviewer: "Ann", Score: &v, Lo: 1, Hi: 5, Comment: "a note", Tags: []string{"bench"}, CreatedAt: now},
			models.ReviewRating{WorkspaceID: p.WorkspaceID, DatasetID: other.ID, RowID: otherRows[i%len(otherRows)], Criterion: crit, HumanColumn: crit,
				Reviewer: "Bob", Score: &v, Lo: 1, Hi: 5, Tags: []string{}, CreatedAt: now})
	}
	mustB(b, h.DB.Gorm.CreateInBatches(&reviews, 500).Error)
	analyzeBench(b, h.DB)
	rv := fmt.Sprintf("/api/v1/datasets/%d/reviews", reviewed.ID)
	return e, h, token, []apiListPath{
		{"projects", "/api/v1/projects?limit=10"},
		{"judges", "/api/v1/judges?limit=10"},
		{"reviews", rv + "?limit=10"},
		{"reviews-criterion", rv + "?criterion=fluency&limit=10"},
		{"tokens", "/api/v1/tokens?limit=10"},
	}
}

// analyzeBench gathers PostgreSQL's statistics of the tables just filled,
// as its autovacuum does within a minute or so: never analyzed, a table of
// thousands of rows is planned as a handful, and a page by cursor is read
// by sorting every row of the workspace. SQLite runs without statistics,
// as the product does.
func analyzeBench(b *testing.B, db *models.DB) {
	if db.Dialect == models.Postgres {
		if _, err := db.SQL.Exec("ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
}
