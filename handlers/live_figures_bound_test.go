package handlers

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
)

// TestLiveFiguresKeptWhileViewed: a running run's shared figures were
// dropped only when another run's figures were computed, and only once
// five minutes old, so a large run's report stayed in memory for as long
// as no other running run was computed, however many were kept. Now any
// view drops the figures nobody viewed for liveFiguresIdle, at most
// liveFiguresMax are kept (the least recently viewed go), and a view of a
// run that ended drops its figures.
func TestLiveFiguresKeptWhileViewed(t *testing.T) {
	var mu sync.Mutex
	at := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	move := func(d time.Duration) {
		mu.Lock()
		at = at.Add(d)
		mu.Unlock()
	}
	h := &Handlers{}
	h.live.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return at
	}
	h.live.build = func(_ context.Context, _ *models.DB, _, runID int64, _ report.Options) (*report.Report, error) {
		return &report.Report{Run: models.Run{ID: runID, Status: models.RunRunning, BatchesDone: 1}}, nil
	}
	running := func(id int64) models.Run {
		return models.Run{ID: id, Status: models.RunRunning, BatchesDone: 1}
	}
	view := func(id int64) {
		t.Helper()
		if _, err := h.liveReport(context.Background(), running(id), report.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	kept := func() map[int64]bool {
		h.live.mu.Lock()
		defer h.live.mu.Unlock()
		runs := map[int64]bool{}
		for k := range h.live.entries {
			runs[k.run] = true
		}
		return runs
	}

	// Run 1 viewed once, run 2 viewed on and on: its views compute
	// nothing (it has not moved) yet drop run 1's figures once idle.
	view(1)
	view(2)
	builds := h.live.builds.Load()
	for range 3 {
		move(liveFiguresIdle / 2)
		view(2)
	}
	if n := h.live.builds.Load(); n != builds {
		t.Fatalf("views of a run that has not moved computed %d times", n-builds)
	}
	if got := kept(); got[1] || !got[2] {
		t.Fatalf("after %s without a view of run 1 and views of run 2, kept %v; want run 2 only", 3*liveFiguresIdle/2, got)
	}

	// Many runs viewed at once: at most liveFiguresMax kept, the last
	// viewed among them.
	for id := int64(100); id < 100+3*liveFiguresMax; id++ {
		move(time.Second)
		view(id)
	}
	got := kept()
	if len(got) > liveFiguresMax {
		t.Fatalf("%d runs' figures kept, want at most %d", len(got), liveFiguresMax)
	}
	if last := int64(100 + 3*liveFiguresMax - 1); !got[last] {
		t.Fatalf("the run viewed last (%d) was dropped: kept %v", last, got)
	}
}

// TestLiveFiguresDroppedWhenTheRunEnds: a view of a run that ended reads
// its stored figures, and drops those shared while it ran.
func TestLiveFiguresDroppedWhenTheRunEnds(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	d := env.demo()
	id := env.launch(d.launchForm("2", "5"))
	env.waitRun(id, 60*time.Second)
	must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, id).Error)
	runPage := fmt.Sprintf("/runs/%d", id)
	if rec := env.get(runPage); rec.Code != http.StatusOK {
		t.Fatalf("%s: %d", runPage, rec.Code)
	}
	count := func() int {
		env.h.live.mu.Lock()
		defer env.h.live.mu.Unlock()
		return len(env.h.live.entries)
	}
	if n := count(); n != 1 {
		t.Fatalf("the running run's figures: %d kept, want 1", n)
	}
	must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = ? WHERE id = ?`, models.RunSucceeded, time.Now().UTC(), id).Error)
	if rec := env.get(runPage); rec.Code != http.StatusOK {
		t.Fatalf("%s: %d", runPage, rec.Code)
	}
	if n := count(); n != 0 {
		t.Fatalf("the run ended and was viewed: %d of its running figures kept, want none", n)
	}
}

// TestLiveSampleTableOrdersKept: the running run page's samples table
// filtered and sorted every sample at each view; the shared figures now
// keep each order, and a view pages it. Every order, filter and page is
// the table sorted afresh, and a second view sorts nothing.
func TestLiveSampleTableOrdersKept(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	d := env.demo()
	id := env.launch(d.launchForm("2", "5"))
	env.waitRun(id, 60*time.Second)
	must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, id).Error)
	must(t, env.db.Gorm.Exec(`DELETE FROM run_scores WHERE run_id = ? AND (round = 1 AND row_id % 3 = 0 OR row_id % 7 = 0)`, id).Error)
	run, err := env.db.GetRun(context.Background(), id)
	must(t, err)
	lv, err := env.h.liveReport(env.localCtx(), run, report.Options{})
	must(t, err)
	orders := func() int {
		lv.memoMu.Lock()
		defer lv.memoMu.Unlock()
		n := 0
		for k := range lv.memos {
			if _, ok := k.(sampleOrderKey); ok {
				n++
			}
		}
		return n
	}
	for ci := range lv.rep.Criteria {
		for _, sortKey := range []string{"position", "score", "human", "diff", "missing", "bogus"} {
			for _, dir := range []string{"asc", "desc"} {
				for _, only := range []string{"", "missing"} {
					for _, page := range []string{"1", "2", "99"} {
						q := url.Values{"criterion": {strconv.Itoa(ci)}, "sort": {sortKey}, "dir": {dir}, "only": {only}, "page": {page}}
						want := sampleTable(lv.rep, q)
						got := sampleTableOf(lv, lv.rep, q, nil)
						if !reflect.DeepEqual(want, got) && !(len(want.Rows) == 0 && len(got.Rows) == 0) {
							t.Fatalf("%v: the kept order's page differs from the table sorted afresh:\n got %+v\nwant %+v", q, got, want)
						}
						if len(want.Rows) == 0 && want.Matching > 0 {
							t.Fatalf("%v: an empty page of %d matching", q, want.Matching)
						}
					}
				}
			}
		}
	}
	n := orders()
	if n == 0 {
		t.Fatal("no order kept with the shared figures")
	}
	sampleTableOf(lv, lv.rep, url.Values{"sort": {"score"}, "dir": {"desc"}, "page": {"2"}}, nil)
	if orders() != n {
		t.Fatalf("a second view sorted again: %d orders kept, want %d", orders(), n)
	}
}

// TestLiveFiguresKeptBySamples: up to liveFiguresMax variants were kept
// whatever their size, so sixteen views of large running runs held
// sixteen reports of every sample. Now the figures kept hold at most
// liveFigures.keptSamples samples (the last ones shown while newer are
// computed counted too, liveFiguresEntry.held): past it the least
// recently viewed go, and the figures just viewed stay, however large.
func TestLiveFiguresKeptBySamples(t *testing.T) {
	sizes := map[int64]int{1: 10, 2: 10, 3: 10, 4: 40}
	h := &Handlers{}
	h.live.keptSamples = 25
	var mu sync.Mutex
	done := map[int64]int{}
	h.live.build = func(_ context.Context, _ *models.DB, _, runID int64, _ report.Options) (*report.Report, error) {
		mu.Lock()
		done[runID]++
		step := done[runID]
		mu.Unlock()
		rep := &report.Report{Run: models.Run{ID: runID, Status: models.RunRunning, BatchesDone: step}}
		rep.Criteria = []report.CriterionReport{{Samples: make([]report.SampleResult, sizes[runID])}}
		return rep, nil
	}
	view := func(id int64, step int) {
		t.Helper()
		if _, err := h.liveReport(context.Background(), models.Run{ID: id, Status: models.RunRunning, BatchesDone: step}, report.Options{}); err != nil {
			t.Fatal(err)
		}
		settleLive(t, h)
	}
	kept := func() map[int64]bool {
		h.live.mu.Lock()
		defer h.live.mu.Unlock()
		runs := map[int64]bool{}
		for k := range h.live.entries {
			runs[k.run] = true
		}
		return runs
	}
	for _, tt := range []struct {
		view int64
		want []int64
	}{
		{1, []int64{1}},
		{2, []int64{1, 2}},
		{3, []int64{2, 3}}, // 30 samples: run 1, viewed least recently, goes
		{2, []int64{2, 3}},
		{4, []int64{4}}, // 40 samples alone: kept, being viewed
		{1, []int64{1}},
	} {
		view(tt.view, 1)
		want := map[int64]bool{}
		for _, id := range tt.want {
			want[id] = true
		}
		if got := kept(); !reflect.DeepEqual(got, want) {
			t.Fatalf("after a view of run %d, kept %v; want %v", tt.view, got, want)
		}
	}
}

// TestLiveFiguresComputingBounded: every running run, group and system
// column had a computation of its own at once, so two million-sample runs
// viewed together held twice one computation's peak (about 850 MiB each).
// Now the computations under way hold at most liveFigures.computingSamples
// samples between them (estimated by the last computation's size): one
// that would pass it waits for the others, and small ones still go side by
// side.
func TestLiveFiguresComputingBounded(t *testing.T) {
	for _, tt := range []struct {
		name     string
		size     int // samples of each run's figures
		together bool
	}{
		{"two large wait for each other", 20, false},
		{"two small go side by side", 10, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := &Handlers{}
			h.live.computingSamples = 30
			h.live.wait = time.Millisecond
			h.live.idle = 1000 * time.Hour
			// The second views come an hour after the first: figures of a
			// run that moved are then too old to share.
			var clockMu sync.Mutex
			clock := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
			h.live.now = func() time.Time {
				clockMu.Lock()
				defer clockMu.Unlock()
				return clock
			}
			gate := make(chan struct{})
			var mu sync.Mutex
			in := map[int64]bool{}
			builds := map[int64]int{}
			h.live.build = func(_ context.Context, _ *models.DB, _, runID int64, _ report.Options) (*report.Report, error) {
				mu.Lock()
				in[runID] = true
				builds[runID]++
				step := builds[runID]
				mu.Unlock()
				rep := &report.Report{Run: models.Run{ID: runID, Status: models.RunRunning, BatchesDone: step}}
				rep.Criteria = []report.CriterionReport{{Samples: make([]report.SampleResult, tt.size)}}
				select {
				case <-gate:
				case <-time.After(time.Minute):
				}
				mu.Lock()
				delete(in, runID)
				mu.Unlock()
				return rep, nil
			}
			view := func(id int64, step int) {
				t.Helper()
				_, _ = h.liveReport(context.Background(), models.Run{ID: id, Status: models.RunRunning, BatchesDone: step}, report.Options{})
			}
			inBuild := func() map[int64]bool {
				mu.Lock()
				defer mu.Unlock()
				return maps.Clone(in)
			}
			// First computations: sizes not known yet, so each weighs 1.
			view(1, 1)
			view(2, 1)
			close(gate)
			settleLive(t, h)
			gate = make(chan struct{})
			clockMu.Lock()
			clock = clock.Add(time.Hour)
			clockMu.Unlock()
			// The runs moved: each computation now weighs its last size.
			view(1, 2)
			for deadline := time.Now().Add(time.Minute); !inBuild()[1]; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("run 1's computation never started")
				}
			}
			view(2, 2)
			// Side by side: run 2's computation starts, at once on an idle
			// machine, so wait up to a minute for it (300 ms was too short
			// under load). Kept apart: it must not start within 300 ms,
			// a window a loaded machine only makes easier to pass.
			window := 300 * time.Millisecond
			if tt.together {
				window = time.Minute
			}
			both := false
			for deadline := time.Now().Add(window); time.Now().Before(deadline) && !both; time.Sleep(time.Millisecond) {
				both = inBuild()[2]
			}
			if both != tt.together {
				t.Fatalf("computations of %d samples each under a bound of 30: side by side %v, want %v", tt.size, both, tt.together)
			}
			close(gate)
			settleLive(t, h)
			h.live.mu.Lock()
			defer h.live.mu.Unlock()
			for k, e := range h.live.entries {
				if e.rep == nil || e.rep.Run.BatchesDone != 2 {
					t.Fatalf("run %d's figures after both computations: %+v", k.run, e.rep)
				}
			}
		})
	}
}
