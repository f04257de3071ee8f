package handlers

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestLiveFiguresOneComputationForManyViewers: every view and live
// refresh of a running run's page and of the review queue on it computed
// the run's figures again from every score and every row's ratings, so N
// viewers of one run cost N computations. They now share one computation
// per progress step (liveReport), at most every liveFiguresEvery: twelve
// concurrent views of both pages read the run's scores once; the figures
// they show equal a recomputation over the same rows; the page says they
// are provisional and over how many samples; the next computation waits
// for both the run to move and the interval to pass.
func TestLiveFiguresOneComputationForManyViewers(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		id := env.launch(d.launchForm("2", "5"))
		env.waitRun(id, 60*time.Second)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, id).Error)
		// Part of the second round not answered, and some samples not at
		// all.
		must(t, env.db.Gorm.Exec(`DELETE FROM run_scores WHERE run_id = ? AND (round = 1 AND row_id % 3 = 0 OR row_id % 15 = 0)`, id).Error)
		ds := d.dataset

		// Each computation reads the run's scores once, one criterion at a
		// time (models.ListCriterionScoreValues, livemem45): a read of the
		// first criterion's, in this order, is a computation; nothing else
		// of these pages reads them so.
		var mu sync.Mutex
		reads := 0
		const hook = "test:live_figures_reads"
		count := func(tx *gorm.DB) {
			sql, vars := tx.Statement.SQL.String(), tx.Statement.Vars
			whole := strings.Contains(sql, "criterion_index, round, row_id")
			first := strings.Contains(sql, "ORDER BY round, row_id") && len(vars) == 2 && vars[1] == any(0)
			if strings.Contains(sql, "run_scores") && (whole || first) {
				mu.Lock()
				reads++
				mu.Unlock()
			}
		}
		must(t, env.db.Gorm.Callback().Query().After("gorm:query").Register(hook, count))
		must(t, env.db.Gorm.Callback().Row().After("gorm:row").Register(hook, count))
		t.Cleanup(func() {
			_ = env.db.Gorm.Callback().Query().Remove(hook)
			_ = env.db.Gorm.Callback().Row().Remove(hook)
		})
		readsNow := func() int {
			mu.Lock()
			defer mu.Unlock()
			return reads
		}

		runPage := fmt.Sprintf("/runs/%d", id)
		queue := fmt.Sprintf("/datasets/%d/review?run=%d", ds.ID, id)
		pages := []string{runPage, queue, runPage + "?sort=score&dir=desc", queue + "&order=random&i=3",
			runPage + "?criterion=1", queue + "&order=uncertain&criterion=1"}
		var wg sync.WaitGroup
		bodies := make([]string, 2*len(pages))
		codes := make([]int, len(bodies))
		for i := range bodies {
			wg.Go(func() {
				rec := env.get(pages[i%len(pages)])
				codes[i], bodies[i] = rec.Code, rec.Body.String()
			})
		}
		wg.Wait()
		for i, code := range codes {
			if code != http.StatusOK {
				t.Fatalf("%s: %d %.300s", pages[i%len(pages)], code, bodies[i])
			}
		}
		if n := readsNow(); n != 1 {
			t.Fatalf("%d views of the running run read its scores %d times, want once", len(bodies), n)
		}

		// The figures shown are a recomputation's over the same rows.
		run, err := env.db.GetRun(ctx, id)
		must(t, err)
		live, err := env.h.liveReport(env.localCtx(), run, report.Options{})
		must(t, err)
		fresh, err := report.BuildFigures(env.localCtx(), env.db, env.ws.ID, id, report.Options{})
		must(t, err)
		if !equalNaN(reflect.ValueOf(fresh.Criteria), reflect.ValueOf(live.rep.Criteria)) {
			t.Errorf("the shared figures differ from a recomputation over the same rows")
		}
		mu.Lock()
		reads = 1 // the recomputation's read aside
		mu.Unlock()
		// Labelled provisional, with the samples they are over.
		for _, c := range fresh.Criteria {
			scored := 0
			for _, s := range c.Samples {
				if s.Final != nil {
					scored++
				}
			}
			if scored == len(c.Samples) {
				t.Fatalf("criterion %s: every sample scored, nothing provisional to show", c.Criterion.Name)
			}
			want := fmt.Sprintf("%s: %d of %d samples scored;", c.Criterion.Name, scored, len(c.Samples))
			for i := 0; i < len(bodies); i += 2 {
				if !strings.Contains(bodies[i], `data-testid="provisional"`) || !strings.Contains(bodies[i], want) {
					at := max(0, strings.Index(bodies[i], "Provisional"))
					t.Errorf("%s does not say %q provisionally: %.600s", pages[i%len(pages)], want, bodies[i][at:])
				}
			}
		}

		// The run moves on: within liveFiguresEvery its viewers still
		// share the figures computed; past it, they are computed again.
		must(t, env.db.Gorm.Exec(`UPDATE runs SET batches_done = batches_done - 1 WHERE id = ?`, id).Error)
		if rec := env.get(runPage); rec.Code != http.StatusOK || readsNow() != 1 {
			t.Fatalf("a view within %s of the last computation: %d, %d reads of the scores, want 1", liveFiguresEvery, rec.Code, readsNow())
		}
		env.h.live.mu.Lock()
		for _, e := range env.h.live.entries {
			e.started = e.started.Add(-time.Minute)
		}
		env.h.live.mu.Unlock()
		if rec := env.get(queue); rec.Code != http.StatusOK || readsNow() != 2 {
			t.Fatalf("a view past %s, the run moved on: %d, %d reads of the scores, want 2", liveFiguresEvery, rec.Code, readsNow())
		}
		// Not moved: shared however old.
		env.h.live.mu.Lock()
		for _, e := range env.h.live.entries {
			e.started = e.started.Add(-time.Minute)
		}
		env.h.live.mu.Unlock()
		if rec := env.get(runPage); rec.Code != http.StatusOK || readsNow() != 2 {
			t.Fatalf("a view of a run that has not moved: %d, %d reads of the scores, want 2", rec.Code, readsNow())
		}
	})
}
