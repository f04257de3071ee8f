package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// BenchmarkLiveFiguresShared: a running run's page and review queue, each
// view computing the run's figures (perView, the old path) against views
// sharing one computation (liveReport), one viewer at a time and many at
// once; the run's size from BATCHEVAL_BENCH_LIVEFIG (default 10000 rows,
// two criteria, two rounds), viewers from BATCHEVAL_BENCH_VIEWERS
// (default 20).
//
//	BATCHEVAL_BENCH_LIVEFIG=100000 go test ./handlers -run '^$' -bench LiveFiguresShared -benchtime=1x -v
func BenchmarkLiveFiguresShared(b *testing.B) {
	n, viewers, dialects := liveFigBenchSetup(b, 10000, 20)
	for b.Loop() {
		for _, d := range dialects {
			liveFiguresShared(b, d, n, viewers)
		}
	}
}

func liveFiguresShared(b *testing.B, d models.Dialect, n, viewers int) {
	ctx := context.Background()
	e, h, p := benchServer(b, d)
	ds, ids := synthDataset(b, h.DB, p, n)
	id := synthRunOn(b, h.DB, p, ds, ids, 0)
	// Views wait for the computation (since live43 a view past
	// liveFiguresWait is told "computing"): the benchmark times it.
	h.live.wait = time.Hour
	mustB(b, h.DB.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, id).Error)
	run, err := h.DB.GetRun(ctx, id)
	mustB(b, err)
	pctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: h.DefaultWorkspace, Role: models.RoleOwner})
	runPage := func() {
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d?sort=diff&dir=desc", id), nil).WithContext(pctx)
		c := e.NewContext(req, httptest.NewRecorder())
		v := web.RunView{Run: run, Columns: ds.Columns}
		mustB(b, h.runResults(c, run, &v, false))
		if len(v.Table.Rows) != samplesPerPage || v.Live == nil {
			b.Fatalf("run page: %d samples shown, provisional note %v", len(v.Table.Rows), v.Live)
		}
	}
	queue := func() {
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/datasets/%d/review?run=%d&i=5", ds.ID, id), nil).WithContext(pctx)
		rec := httptest.NewRecorder()
		c := e.NewContext(req, rec)
		c.SetParamNames("id")
		c.SetParamValues(strconv.FormatInt(ds.ID, 10))
		mustB(b, h.reviewQueue(c, false))
		if !strings.Contains(rec.Body.String(), `data-testid="review-sample"`) {
			b.Fatalf("review queue: no sample: %.300s", rec.Body)
		}
	}
	for _, pg := range []struct {
		name string
		view func()
	}{{"run page", runPage}, {"review queue", queue}} {
		h.live.perView = false
		pg.view() // the shared figures computed once
		var old, cur []time.Duration
		for range 3 {
			for _, perView := range []bool{true, false} {
				h.live.perView = perView
				start := time.Now()
				pg.view()
				if perView {
					old = append(old, time.Since(start))
				} else {
					cur = append(cur, time.Since(start))
				}
			}
		}
		slices.Sort(old)
		slices.Sort(cur)
		b.Logf("%s, %d rows, %s, one viewer: computed per view %v, shared %v (medians of 3), ratio %.0fx", d, n, pg.name,
			old[1].Round(100*time.Microsecond), cur[1].Round(100*time.Microsecond), float64(old[1])/float64(cur[1]))
		b.ReportMetric(float64(old[1])/float64(cur[1]), fmt.Sprintf("%s-%s-%dk-ratio", d, strings.ReplaceAll(pg.name, " ", "-"), n/1000))
	}
	// Many viewers at once of a run that has just moved on: per view,
	// each computes; shared, the first computes and the rest wait for it.
	concurrent := func(perView bool) (time.Duration, int64, uint64) {
		h.live.perView = perView
		mustB(b, h.DB.Gorm.Exec(`UPDATE runs SET batches_done = batches_done - 1 WHERE id = ?`, id).Error)
		h.live.mu.Lock()
		for _, e := range h.live.entries {
			e.started = e.started.Add(-time.Hour)
		}
		h.live.mu.Unlock()
		r, err := h.DB.GetRun(ctx, id)
		mustB(b, err)
		run = r
		before := h.live.builds.Load()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		alloc := ms.TotalAlloc
		start := time.Now()
		var wg sync.WaitGroup
		for i := range viewers {
			wg.Go(func() {
				if i%2 == 0 {
					runPage()
				} else {
					queue()
				}
			})
		}
		wg.Wait()
		took := time.Since(start)
		runtime.ReadMemStats(&ms)
		return took, h.live.builds.Load() - before, ms.TotalAlloc - alloc
	}
	oldT, oldN, oldA := concurrent(true)
	newT, newN, newA := concurrent(false)
	b.Logf("%s, %d rows, %d viewers at once (half the run page, half the queue): computed per view %v (%d computations, %d MiB allocated), shared %v (%d, %d MiB), ratio %.1fx time, %.1fx allocated",
		d, n, viewers, oldT.Round(time.Millisecond), oldN, oldA>>20, newT.Round(time.Millisecond), newN, newA>>20, float64(oldT)/float64(newT), float64(oldA)/float64(max(newA, 1)))
	b.ReportMetric(float64(oldT)/float64(newT), fmt.Sprintf("%s-%d-viewers-%dk-ratio", d, viewers, n/1000))
}

// liveFigBenchSetup is the live-figures benchmarks' run size
// (BATCHEVAL_BENCH_LIVEFIG), viewer count (BATCHEVAL_BENCH_VIEWERS) and
// databases (SQLite, and PostgreSQL when TEST_DATABASE_URL is set), each
// benchmark giving its own defaults.
func liveFigBenchSetup(b *testing.B, size, viewers int) (int, int, []models.Dialect) {
	b.Helper()
	if v := os.Getenv("BATCHEVAL_BENCH_LIVEFIG"); v != "" {
		var err error
		if size, err = strconv.Atoi(v); err != nil || size <= 0 {
			b.Fatalf("BATCHEVAL_BENCH_LIVEFIG=%q is not a size", v)
		}
	}
	if v := os.Getenv("BATCHEVAL_BENCH_VIEWERS"); v != "" {
		var err error
		if viewers, err = strconv.Atoi(v); err != nil || viewers <= 0 {
			b.Fatalf("BATCHEVAL_BENCH_VIEWERS=%q is not a count", v)
		}
	}
	dialects := []models.Dialect{models.SQLite}
	if os.Getenv("TEST_DATABASE_URL") != "" {
		dialects = append(dialects, models.Postgres)
	}
	return size, viewers, dialects
}
