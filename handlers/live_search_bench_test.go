package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// BenchmarkLiveSearch: one view of a running run's page with a search,
// building the whole report (full, the path every search took before)
// against the shared figures filtered by the rows whose text matches
// (report.MatchingRows), alternated in one process; medians of 3, and
// the bytes allocated a view. The run's size from BATCHEVAL_BENCH_LIVEFIG
// (default 10000 rows, two criteria, two rounds).
//
//	BATCHEVAL_BENCH_LIVEFIG=100000 go test ./handlers -run '^$' -bench LiveSearch -benchtime=1x -v
func BenchmarkLiveSearch(b *testing.B) {
	n, _, dialects := liveFigBenchSetup(b, 10000, 1)
	for b.Loop() {
		for _, d := range dialects {
			liveSearch(b, d, n)
		}
	}
}

func liveSearch(b *testing.B, d models.Dialect, n int) {
	ctx := context.Background()
	e, h, p := benchServer(b, d)
	ds, ids := synthDataset(b, h.DB, p, n)
	id := synthRunOn(b, h.DB, p, ds, ids, 0)
	h.live.wait = time.Hour
	mustB(b, h.DB.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, id).Error)
	run, err := h.DB.GetRun(ctx, id)
	mustB(b, err)
	pctx := context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: h.DefaultWorkspace, Role: models.RoleOwner})
	view := func(whole bool, search string) (int, uint64) {
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d?q=%s&sort=diff&dir=desc", id, search), nil).WithContext(pctx)
		c := e.NewContext(req, httptest.NewRecorder())
		v := web.RunView{Run: run, Columns: ds.Columns}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		mustB(b, h.runResults(c, run, &v, whole))
		runtime.ReadMemStats(&ms)
		return v.Table.Matching, ms.TotalAlloc - before
	}
	view(false, "") // the shared figures computed once
	var old, cur, plain []time.Duration
	var oldB, curB uint64
	for range 3 {
		for _, whole := range []bool{true, false} {
			start := time.Now()
			m, bytes := view(whole, "7")
			took := time.Since(start)
			if whole {
				old, oldB = append(old, took), bytes
			} else {
				cur, curB = append(cur, took), bytes
			}
			if m == 0 {
				b.Fatalf("the search matched nothing (whole report %v)", whole)
			}
		}
	}
	for range 3 {
		start := time.Now()
		view(false, "")
		plain = append(plain, time.Since(start))
	}
	slices.Sort(old)
	slices.Sort(cur)
	slices.Sort(plain)
	b.Logf("%s, %d rows, a search on the running run's page: whole report %v (%d MiB allocated), shared figures %v (%d MiB), ratio %.1fx time, %.1fx allocated; the same page without a search %v",
		d, n, old[1].Round(100*time.Microsecond), oldB>>20, cur[1].Round(100*time.Microsecond), curB>>20, float64(old[1])/float64(cur[1]), float64(oldB)/float64(max(curB, 1)), plain[1].Round(100*time.Microsecond))
	b.ReportMetric(float64(old[1])/float64(cur[1]), fmt.Sprintf("%s-search-%dk-ratio", d, n/1000))
}
