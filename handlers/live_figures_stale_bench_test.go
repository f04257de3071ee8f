package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// BenchmarkLiveFiguresStale: the view of a running run's page that finds
// the run moved on, waiting for the one shared computation of its figures
// (before: liveFigures.wait unbounded) against the bounded wait that shows
// the last figures (liveFiguresWait), and many such views at once; the
// computation's own time beside. The run's size from
// BATCHEVAL_BENCH_LIVEFIG (default 100000 rows, two criteria, two rounds),
// viewers from BATCHEVAL_BENCH_VIEWERS (default 8).
//
//	go test ./handlers -run '^$' -bench LiveFiguresStale -benchtime=1x -v
func BenchmarkLiveFiguresStale(b *testing.B) {
	n, viewers, dialects := liveFigBenchSetup(b, 100000, 8)
	for b.Loop() {
		for _, d := range dialects {
			liveFiguresStale(b, d, n, viewers)
		}
	}
}

func liveFiguresStale(b *testing.B, d models.Dialect, n, viewers int) {
	ctx := context.Background()
	e, h, p := benchServer(b, d)
	ds, ids := synthDataset(b, h.DB, p, n)
	id := synthRunOn(b, h.DB, p, ds, ids, 0)
	mustB(b, h.DB.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, id).Error)
	pctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: h.DefaultWorkspace, Role: models.RoleOwner})
	var mu sync.Mutex
	stale := 0
	view := func(run models.Run) {
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d?sort=diff&dir=desc", id), nil).WithContext(pctx)
		c := e.NewContext(req, httptest.NewRecorder())
		v := web.RunView{Run: run, Columns: ds.Columns}
		mustB(b, h.runResults(c, run, &v, false))
		if len(v.Table.Rows) != samplesPerPage || v.Live == nil {
			b.Fatalf("run page: %d samples shown, provisional note %v", len(v.Table.Rows), v.Live)
		}
		if v.Live.Refreshing {
			mu.Lock()
			stale++
			mu.Unlock()
		}
	}
	// moved puts the run one batch on and the figures past the interval:
	// the next view starts their computation.
	moved := func() models.Run {
		mustB(b, h.DB.Gorm.Exec(`UPDATE runs SET batches_done = batches_done - 1 WHERE id = ?`, id).Error)
		h.live.mu.Lock()
		for _, e := range h.live.entries {
			e.started = e.started.Add(-time.Hour)
		}
		h.live.mu.Unlock()
		run, err := h.DB.GetRun(ctx, id)
		mustB(b, err)
		return run
	}
	settle := func() time.Duration {
		h.live.mu.Lock()
		var es []*liveFiguresEntry
		for _, e := range h.live.entries {
			es = append(es, e)
		}
		h.live.mu.Unlock()
		var took time.Duration
		for _, e := range es {
			<-e.ready
			took = max(took, e.took)
		}
		return took
	}
	run, err := h.DB.GetRun(ctx, id)
	mustB(b, err)
	h.live.wait = time.Hour
	view(run) // the first figures, computed once
	settle()
	var old, cur, comp []time.Duration
	for range 3 {
		for _, bounded := range []bool{false, true} {
			h.live.wait = time.Hour // before: a view waits for the computation
			if bounded {
				h.live.wait = 0 // liveFiguresWait
			}
			run := moved()
			start := time.Now()
			view(run)
			t := time.Since(start)
			comp = append(comp, settle())
			if bounded {
				cur = append(cur, t)
			} else {
				old = append(old, t)
			}
		}
	}
	slices.Sort(old)
	slices.Sort(cur)
	slices.Sort(comp)
	b.Logf("%s, %d rows, run page, the view after the run moved: waiting for the computation %v, bounded %v (medians of 3), ratio %.1fx; one computation %v; %d of 3 bounded views showed the last figures",
		d, n, old[1].Round(time.Millisecond), cur[1].Round(time.Millisecond), float64(old[1])/float64(cur[1]), comp[len(comp)/2].Round(time.Millisecond), stale)
	b.ReportMetric(float64(old[1])/float64(cur[1]), fmt.Sprintf("%s-moved-view-%dk-ratio", d, n/1000))

	concurrent := func(bounded bool) (slowest time.Duration, builds int64) {
		h.live.wait = time.Hour
		if bounded {
			h.live.wait = 0
		}
		run := moved()
		before := h.live.builds.Load()
		var wg sync.WaitGroup
		times := make([]time.Duration, viewers)
		for i := range viewers {
			wg.Go(func() {
				start := time.Now()
				view(run)
				times[i] = time.Since(start)
			})
		}
		wg.Wait()
		settle()
		return slices.Max(times), h.live.builds.Load() - before
	}
	stale = 0
	oldT, oldN := concurrent(false)
	newT, newN := concurrent(true)
	b.Logf("%s, %d rows, %d views at once after the run moved, slowest view: waiting %v (%d computations), bounded %v (%d, %d views showed the last figures), ratio %.1fx",
		d, n, viewers, oldT.Round(time.Millisecond), oldN, newT.Round(time.Millisecond), newN, stale, float64(oldT)/float64(newT))
	b.ReportMetric(float64(oldT)/float64(newT), fmt.Sprintf("%s-%d-viewers-%dk-ratio", d, viewers, n/1000))
}
