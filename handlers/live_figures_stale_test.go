package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// heldLiveBuilds makes the live figures' computations of h wait until let
// is called (each computation is report.BuildFigures once let): a
// computation longer than a view's bound, at will.
type heldLiveBuilds struct {
	mu   sync.Mutex
	gate chan struct{}
}

func (hb *heldLiveBuilds) hold() {
	hb.mu.Lock()
	hb.gate = make(chan struct{})
	hb.mu.Unlock()
}

func (hb *heldLiveBuilds) let() {
	hb.mu.Lock()
	if hb.gate != nil {
		close(hb.gate)
		hb.gate = nil
	}
	hb.mu.Unlock()
}

func (hb *heldLiveBuilds) build(ctx context.Context, db *models.DB, wsID, runID int64, opt report.Options) (*report.Report, error) {
	hb.mu.Lock()
	gate := hb.gate
	hb.mu.Unlock()
	if gate != nil {
		<-gate
	}
	return report.BuildFigures(ctx, db, wsID, runID, opt)
}

// settleLive waits until every computation of h's live figures has ended.
func settleLive(t *testing.T, h *Handlers) {
	t.Helper()
	h.live.mu.Lock()
	var ready []chan struct{}
	for _, e := range h.live.entries {
		ready = append(ready, e.ready)
	}
	h.live.mu.Unlock()
	for _, r := range ready {
		select {
		case <-r:
		case <-time.After(time.Minute):
			t.Fatal("a computation of the live figures did not end within a minute")
		}
	}
}

// scoredCounts is, per criterion, how many samples of rep have a final
// score: what the provisional note says the figures are over.
func scoredCounts(rep *report.Report) []int {
	out := make([]int, len(rep.Criteria))
	for i, c := range rep.Criteria {
		for _, s := range c.Samples {
			if s.Final != nil {
				out[i]++
			}
		}
	}
	return out
}

// TestLiveFiguresNeverWaitForAComputation: the first view of a running
// run after it moved waited for a whole computation of its figures (963 ms
// a view at 100,000 samples; a million-row run's reads every score). Now
// a view waits at most liveFigures.wait: a run with no figures computed
// yet says "computing provisional figures" (the run page and the review
// queue, which reload), and a run whose figures are being computed again
// shows the last ones, labelled with when and over how many samples, and
// that newer ones are on their way. The figures shown always equal a
// recomputation over the samples they say they cover; one computation
// runs per step, however many view meanwhile; once it ends, views read
// it.
func TestLiveFiguresNeverWaitForAComputation(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		id := env.launch(d.launchForm("2", "5"))
		env.waitRun(id, 60*time.Second)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, batches_done = batches_done - 1 WHERE id = ?`, models.RunRunning, id).Error)
		// The second round of a third of the rows comes back later (kept
		// aside), and some rows never.
		must(t, env.db.Gorm.Exec(`CREATE TABLE live43_later AS SELECT * FROM run_scores WHERE run_id = ? AND round = 1 AND row_id % 3 = 0`, id).Error)
		must(t, env.db.Gorm.Exec(`DELETE FROM run_scores WHERE run_id = ? AND (round = 1 AND row_id % 3 = 0 OR row_id % 15 = 0)`, id).Error)

		var hb heldLiveBuilds
		env.h.live.build = hb.build
		env.h.live.wait = 20 * time.Millisecond
		// Were a view to wait for the computation (the old code), it
		// would be let go after this and show figures, not the card.
		safety := time.AfterFunc(20*time.Second, hb.let)
		defer safety.Stop()

		runPage := fmt.Sprintf("/runs/%d", id)
		queue := fmt.Sprintf("/datasets/%d/review?run=%d", d.dataset.ID, id)
		builds := env.h.live.builds.Load()

		// Nothing computed yet, the computation held: both pages say the
		// figures are being computed and reload; neither shows figures.
		hb.hold()
		for _, p := range []string{runPage, queue, runPage} {
			rec := env.get(p)
			body := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="live-computing"`) || !strings.Contains(body, `http-equiv="refresh"`) {
				t.Fatalf("%s while the first computation runs: %d, want the page saying the provisional figures are computed, reloading: %.400s", p, rec.Code, body)
			}
			if strings.Contains(body, `data-testid="provisional"`) || strings.Contains(body, `data-testid="criterion-card"`) {
				t.Fatalf("%s shows figures while none are computed", p)
			}
		}
		if n := env.h.live.builds.Load() - builds; n != 1 {
			t.Fatalf("three views while the figures are computed started %d computations, want 1", n)
		}
		hb.let()
		settleLive(t, env.h)

		run, err := env.db.GetRun(ctx, id)
		must(t, err)
		before, err := report.BuildFigures(env.localCtx(), env.db, env.ws.ID, id, report.Options{})
		must(t, err)
		lv, stale, err := env.h.liveFiguresFor(env.localCtx(), run, report.Options{})
		must(t, err)
		if stale || !equalNaN(reflect.ValueOf(before.Criteria), reflect.ValueOf(lv.rep.Criteria)) {
			t.Fatalf("the figures once computed (stale %v) differ from a recomputation over the same samples", stale)
		}
		wantBefore := scoredCounts(before)
		rec := env.get(runPage)
		if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="provisional"`) || strings.Contains(body, `data-testid="provisional-refreshing"`) {
			t.Fatalf("%s once computed: %d, want the figures labelled provisional and not refreshing", runPage, rec.Code)
		}

		// The run moves on (the later answers come back), past the
		// interval: the computation again held, views show the last
		// figures, as they were, labelled as over the samples scored then.
		must(t, env.db.Gorm.Exec(`INSERT INTO run_scores SELECT * FROM live43_later`).Error)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET batches_done = batches_done + 1 WHERE id = ?`, id).Error)
		env.h.live.mu.Lock()
		for _, e := range env.h.live.entries {
			e.started = e.started.Add(-time.Minute)
		}
		env.h.live.mu.Unlock()
		after, err := report.BuildFigures(env.localCtx(), env.db, env.ws.ID, id, report.Options{})
		must(t, err)
		wantAfter := scoredCounts(after)
		if reflect.DeepEqual(wantBefore, wantAfter) {
			t.Fatalf("the run's later answers changed no criterion's samples scored (%v): nothing to tell apart", wantAfter)
		}
		run, err = env.db.GetRun(ctx, id)
		must(t, err)
		builds = env.h.live.builds.Load()
		hb.hold()
		var staleVersion string
		for _, p := range []string{runPage, queue, runPage + "?sort=score&dir=desc"} {
			rec := env.get(p)
			body := rec.Body.String()
			if rec.Code != http.StatusOK {
				t.Fatalf("%s while newer figures are computed: %d %.300s", p, rec.Code, body)
			}
			if strings.Contains(body, `data-testid="live-computing"`) {
				t.Fatalf("%s says the figures are computed though the last ones are there", p)
			}
			if p == queue {
				staleVersion = queueVersionIn(t, body)
				continue
			}
			if !strings.Contains(body, `data-testid="provisional-refreshing"`) {
				t.Errorf("%s does not say newer figures are being computed", p)
			}
			for i, c := range before.Criteria {
				want := fmt.Sprintf("%s: %d of %d samples scored", c.Criterion.Name, wantBefore[i], len(c.Samples))
				if !strings.Contains(body, want) {
					at := max(0, strings.Index(body, "Provisional"))
					t.Errorf("%s: want the last figures' label %q: %.500s", p, want, body[at:])
				}
			}
		}
		lv, stale, err = env.h.liveFiguresFor(env.localCtx(), run, report.Options{})
		must(t, err)
		if !stale {
			t.Fatal("a view while newer figures are computed was not told its figures are the last ones")
		}
		if !equalNaN(reflect.ValueOf(before.Criteria), reflect.ValueOf(lv.rep.Criteria)) {
			t.Error("the last figures shown differ from a recomputation over the samples they say they cover")
		}
		if got := scoredCounts(lv.rep); !reflect.DeepEqual(got, wantBefore) || lv.note().Done != run.BatchesDone-1 {
			t.Errorf("the last figures' note: scored %v at %d batches, want %v at %d", got, lv.note().Done, wantBefore, run.BatchesDone-1)
		}
		if n := env.h.live.builds.Load() - builds; n != 1 {
			t.Fatalf("four views while newer figures are computed started %d computations, want 1", n)
		}

		// The computation ends: views read it, as of the run now.
		hb.let()
		settleLive(t, env.h)
		lv, stale, err = env.h.liveFiguresFor(env.localCtx(), run, report.Options{})
		must(t, err)
		if stale || !equalNaN(reflect.ValueOf(after.Criteria), reflect.ValueOf(lv.rep.Criteria)) {
			t.Errorf("once computed again (stale %v), the figures differ from a recomputation of the run now", stale)
		}
		rec = env.get(runPage)
		body := rec.Body.String()
		if strings.Contains(body, `data-testid="provisional-refreshing"`) {
			t.Error("the run page still says newer figures are being computed once they are")
		}
		for i, c := range after.Criteria {
			if want := fmt.Sprintf("%s: %d of %d samples scored", c.Criterion.Name, wantAfter[i], len(c.Samples)); !strings.Contains(body, want) {
				t.Errorf("the run page once computed again: want %q", want)
			}
		}
		if n := env.h.live.builds.Load() - builds; n != 1 {
			t.Fatalf("the step computed %d times, want once", n)
		}
		// The queue's links said the version of the run as of now while
		// its order was the last figures': the new order, once computed,
		// kept their version, so a link did not see its queue change.
		if v := queueVersionIn(t, env.get(queue).Body.String()); v == staleVersion {
			t.Errorf("the review queue's version %s is the same ordered by the last figures and by the new ones", v)
		}
	})
}

// queueVersionIn is the queue version (qv) the review queue's links carry.
func queueVersionIn(t *testing.T, body string) string {
	t.Helper()
	m := regexp.MustCompile(`qv=([0-9]+-[0-9a-f]+)`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the review queue's links carry no version: %.300s", body)
	}
	return m[1]
}

// TestLiveFiguresJanitor: the figures of a run nobody views were dropped
// only at the next view of some running run, so with no view they stayed
// in memory for as long as the server ran. The janitor drops them
// without a view once idle, keeps those viewed since, and stops with the
// server.
func TestLiveFiguresJanitor(t *testing.T) {
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
	view := func(id int64) {
		t.Helper()
		if _, err := h.liveReport(context.Background(), models.Run{ID: id, Status: models.RunRunning, BatchesDone: 1}, report.Options{}); err != nil {
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
	for _, tc := range []struct {
		name string
		idle time.Duration // 0: liveFiguresIdle
	}{
		{"default idle time", 0},
		{"configured idle time", 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h.live.idle = tc.idle
			idle := h.live.idleFor()
			view(1)
			move(idle / 2)
			view(2)
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.RunLiveFiguresJanitor(ctx, time.Millisecond)
			}()
			// No view from here: run 1 idle past the time, run 2 not.
			move(idle/2 + time.Second)
			deadline := time.Now().Add(10 * time.Second)
			for kept()[1] {
				if time.Now().After(deadline) {
					t.Fatalf("run 1's figures unviewed for %s still kept after 10 s of the janitor", idle+time.Second)
				}
				time.Sleep(time.Millisecond)
			}
			if !kept()[2] {
				t.Fatalf("run 2's figures, viewed %s ago, were dropped", idle/2+time.Second)
			}
			stop()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the janitor did not stop with its context")
			}
			// Stopped, it drops nothing more.
			move(idle)
			time.Sleep(5 * time.Millisecond)
			if !kept()[2] {
				t.Fatal("a stopped janitor dropped figures")
			}
			h.live.forget(2)
		})
	}
}

// TestLiveFiguresNameRenamedReviewer: the running run's figures name an
// account that rated in the browser by its display name; renamed while
// the run is paused (its progress, hence the shared figures' key, did
// not move), the run page showed the old name until the run moved. The
// key now holds the reviewers' names: the page names the account as it
// is called now, and only that way.
func TestLiveFiguresNameRenamedReviewer(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		a := env.waitRun(env.launch(d.launchForm("1", "10")), 60*time.Second)
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 0)
		must(t, err)
		crit := d.rubric.Criteria[1] // Coherent, human column "coherent", 1..3
		edith, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleEditor, models.NewUser{Email: "edith@a.test", Name: "Edith Tor", Password: testPassword})
		must(t, err)
		owner := env.sessionCookie(env.createUser(env.ws.ID, "ow@a.test", models.RoleOwner))
		for i := range 6 {
			v := float64(1 + i%3)
			_, err := env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[i].ID,
				Criterion: crit.Name, HumanColumn: crit.HumanColumn, Reviewer: edith.Email, UserID: &edith.ID, RunID: &a.ID, Score: &v, Lo: 1, Hi: 3})
			must(t, err)
		}
		if rec := env.send(http.MethodPost, fmt.Sprintf("/runs/%d/humans", a.ID), url.Values{"source": {"both"}}, "", owner); rec.Code != http.StatusSeeOther {
			t.Fatalf("recompute: %d %s", rec.Code, rec.Body.String())
		}
		// Paused part-way: its page shows the shared figures, which do
		// not move.
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, batches_done = batches_done - 1 WHERE id = ?`, models.RunPaused, a.ID).Error)
		page := fmt.Sprintf("/runs/%d", a.ID)
		for _, tc := range []struct {
			rename, want, gone string
		}{
			{"", "Edith Tor", ""},
			{"Edith Renamed", "Edith Renamed", "Edith Tor"},
			{"Edie", "Edie", "Edith Renamed"},
		} {
			if tc.rename != "" {
				must(t, env.db.Gorm.Exec(`UPDATE users SET name = ? WHERE id = ?`, tc.rename, edith.ID).Error)
			}
			rec := env.getAs(page, owner)
			body := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="provisional"`) {
				t.Fatalf("%s: %d, want the paused run's provisional figures", page, rec.Code)
			}
			if key := htmlText(crit.HumanColumn + "@browser:" + tc.want); !strings.Contains(body, key) {
				i := strings.Index(body, "@browser:")
				t.Errorf("named %q: the page lacks %q: …%s", tc.want, key, body[max(i-100, 0):min(max(i, 0)+100, len(body))])
			}
			if tc.gone != "" && strings.Contains(body, tc.gone) {
				t.Errorf("renamed %q: the page still names %q", tc.want, tc.gone)
			}
		}
	})
}

// TestLiveFiguresSlowRunNotWaitedFor: a view of a run whose last
// computation took longer than a view may wait does not wait at all for
// the next: it shows the last figures at once (even with a bound of an
// hour here), and the next computation's figures once ready.
func TestLiveFiguresSlowRunNotWaitedFor(t *testing.T) {
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
	h.live.wait = time.Hour
	h.live.idle = 100 * time.Hour // kept throughout
	var hb heldLiveBuilds
	h.live.build = func(_ context.Context, _ *models.DB, _, runID int64, _ report.Options) (*report.Report, error) {
		hb.mu.Lock()
		gate := hb.gate
		hb.mu.Unlock()
		if gate != nil {
			<-gate
		}
		move(2 * time.Hour) // each computation takes two hours of the clock
		return &report.Report{Run: models.Run{ID: runID, Status: models.RunRunning, BatchesDone: 1}}, nil
	}
	safety := time.AfterFunc(10*time.Second, hb.let)
	defer safety.Stop()
	first, stale, err := h.liveFiguresFor(context.Background(), models.Run{ID: 1, Status: models.RunRunning, BatchesDone: 1}, report.Options{})
	must(t, err)
	if stale || first.took < 2*time.Hour {
		t.Fatalf("first view: stale %v, took %v; want the figures computed, two hours", stale, first.took)
	}
	hb.hold()
	// The run moves on, past the interval after a slow computation.
	move(liveFiguresSlowFactor*first.took + time.Second)
	moved := models.Run{ID: 1, Status: models.RunRunning, BatchesDone: 2}
	for range 3 {
		e, stale, err := h.liveFiguresFor(context.Background(), moved, report.Options{})
		must(t, err)
		if !stale || e != first {
			t.Fatalf("a view while a two-hour computation runs: stale %v, the last figures %v; want them at once", stale, e == first)
		}
	}
	if n := h.live.builds.Load(); n != 2 {
		t.Fatalf("%d computations, want 2", n)
	}
	hb.let()
	settleLive(t, h)
	e, stale, err := h.liveFiguresFor(context.Background(), moved, report.Options{})
	must(t, err)
	if stale || e == first {
		t.Fatal("once computed, a view still shows the last figures")
	}
}
