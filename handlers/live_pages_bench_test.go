package handlers

import (
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
	"github.com/batcheval/batcheval/web"
)

// BenchmarkLivePages times the pages of a run under way that build its
// report on every view: the run page's results (runResults) and the review
// queue on the run (reviewQueue), the old way (full: every dataset row
// read whole) and the new (the figures' columns, the shown rows' texts by
// key), alternated in one process, five views each after a first of each
// (and the run's scores read through GORM's Find, as before, and by
// ListScoreValues);
// medians and their ratio. The run is synthesized as BenchmarkRunPageServed
// does (two criteria, two rounds), then put back to running. Sizes from
// BATCHEVAL_BENCH_LIVE (comma-separated rows; 10,000 by default, the most
// the run page shows live at two criteria); PostgreSQL too with
// TEST_DATABASE_URL. Run with -benchtime=1x:
//
//	./scripts/with-postgres.sh go test ./handlers -run '^$' -bench LivePages -benchtime=1x -v
func BenchmarkLivePages(b *testing.B) {
	sizes := []int{10000}
	if v := os.Getenv("BATCHEVAL_BENCH_LIVE"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("BATCHEVAL_BENCH_LIVE=%q: %q is not a size", v, f)
			}
			sizes = append(sizes, n)
		}
	}
	dialects := []models.Dialect{models.SQLite}
	if os.Getenv("TEST_DATABASE_URL") != "" {
		dialects = append(dialects, models.Postgres)
	}
	for b.Loop() {
		for _, d := range dialects {
			for _, n := range sizes {
				livePages(b, d, n)
			}
		}
	}
}

func livePages(b *testing.B, d models.Dialect, n int) {
	ctx := context.Background()
	e, h, p := benchServer(b, d)
	ds, ids := synthDataset(b, h.DB, p, n)
	id := synthRunOn(b, h.DB, p, ds, ids, 0)
	mustB(b, h.DB.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, id).Error)
	run, err := h.DB.GetRun(ctx, id)
	mustB(b, err)
	pctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: h.DefaultWorkspace, Role: models.RoleOwner})
	runPage := func(full bool) {
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d?sort=diff&dir=desc", id), nil).WithContext(pctx)
		c := e.NewContext(req, httptest.NewRecorder())
		v := web.RunView{Run: run, Columns: ds.Columns}
		mustB(b, h.runResults(c, run, &v, full))
		if len(v.Table.Rows) != samplesPerPage || len(v.Table.Rows[0].Fields) == 0 {
			b.Fatalf("run page: %d samples shown", len(v.Table.Rows))
		}
	}
	queue := func(full bool) {
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/datasets/%d/review?run=%d&i=5", ds.ID, id), nil).WithContext(pctx)
		rec := httptest.NewRecorder()
		c := e.NewContext(req, rec)
		c.SetParamNames("id")
		c.SetParamValues(strconv.FormatInt(ds.ID, 10))
		mustB(b, h.reviewQueue(c, full))
		if !strings.Contains(rec.Body.String(), `data-testid="review-sample"`) {
			b.Fatalf("review queue: no sample: %.300s", rec.Body)
		}
	}
	// The scores' read, which every view makes: through GORM's Find (as
	// before) and scanned by hand (ListScoreValues).
	scores := func(full bool) {
		var ss []models.RunScore
		var err error
		if full {
			err = h.DB.Reader(ctx).Select([]string{"id", "run_id", "batch_id", "criterion_index", "round", "row_id", "label", "score"}).
				Where("run_id = ?", id).Order("criterion_index, round, row_id").Find(&ss).Error
		} else {
			ss, err = h.DB.ListScoreValues(ctx, id)
		}
		mustB(b, err)
		if len(ss) != 4*n {
			b.Fatalf("%d scores, want %d", len(ss), 4*n)
		}
	}
	for _, pg := range []struct {
		name string
		view func(full bool)
	}{{"run page", runPage}, {"review queue", queue}, {"scores read", scores}} {
		pg.view(true)
		pg.view(false)
		var old, cur []time.Duration
		for range 5 {
			for _, full := range []bool{true, false} {
				start := time.Now()
				pg.view(full)
				if full {
					old = append(old, time.Since(start))
				} else {
					cur = append(cur, time.Since(start))
				}
			}
		}
		slices.Sort(old)
		slices.Sort(cur)
		b.Logf("%s, %d rows, %s: whole rows %v, shown rows by key %v (medians of 5), ratio %.1fx", d, n, pg.name,
			old[2].Round(100*time.Microsecond), cur[2].Round(100*time.Microsecond), float64(old[2])/float64(cur[2]))
		b.ReportMetric(float64(old[2])/float64(cur[2]), fmt.Sprintf("%s-%s-%dk-ratio", d, strings.ReplaceAll(pg.name, " ", "-"), n/1000))
	}
}
