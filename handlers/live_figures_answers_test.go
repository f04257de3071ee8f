package handlers

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestLiveFiguresShowNewAnswers (livemem47): a running run's viewers share
// one computation of its figures until new answers are stored; the views
// after answers arrive (the run's progress counters moved, past
// liveFiguresEvery) share one new computation, and what they show is what
// a fresh report.BuildFigures computes over the new answers, not the
// figures from before. Answers go in through models.SaveBatchResult, as
// the runner stores them, so the counters move with the scores.
func TestLiveFiguresShowNewAnswers(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		id := env.launch(d.launchForm("2", "5"))
		env.waitRun(id, 60*time.Second)
		// The run put back to running with the last two batches of its
		// first criterion not answered yet: their scores kept aside to be
		// stored later, as answers arriving.
		batches, err := env.db.ListBatches(ctx, id)
		must(t, err)
		var open []models.RunBatch
		for i := len(batches) - 1; i >= 0 && len(open) < 2; i-- {
			if batches[i].CriterionIndex == 0 && batches[i].Status == models.BatchDone {
				open = append(open, batches[i])
			}
		}
		if len(open) != 2 {
			t.Fatalf("%d answered batches of the first criterion, want 2", len(open))
		}
		scores, err := env.db.ListScores(ctx, id)
		must(t, err)
		answers := map[int64][]models.RunScore{}
		for _, s := range scores {
			if s.BatchID == open[0].ID || s.BatchID == open[1].ID {
				answers[s.BatchID] = append(answers[s.BatchID], s)
			}
		}
		for _, b := range open {
			if len(answers[b.ID]) == 0 {
				t.Fatalf("batch %d has no scores", b.ID)
			}
			must(t, env.db.Gorm.Exec(`DELETE FROM run_scores WHERE batch_id = ?`, b.ID).Error)
			must(t, env.db.Gorm.Exec(`UPDATE run_batches SET status = ?, done_at = NULL WHERE id = ?`, models.BatchPending, b.ID).Error)
		}
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL, batches_done = batches_done - 2 WHERE id = ?`, models.RunRunning, id).Error)

		// Views wait for the computation however loaded the machine.
		env.h.live.wait = time.Minute
		// view is one view's figures of the run as it now stands, after
		// the interval since the last computation has passed.
		view := func() *report.Report {
			t.Helper()
			env.h.live.mu.Lock()
			for _, e := range env.h.live.entries {
				e.started = e.started.Add(-time.Minute)
			}
			env.h.live.mu.Unlock()
			run, err := env.db.GetRun(ctx, id)
			must(t, err)
			lv, err := env.h.liveReport(env.localCtx(), run, report.Options{})
			must(t, err)
			return lv.rep
		}
		fresh := func() *report.Report {
			t.Helper()
			rep, err := report.BuildFigures(env.localCtx(), env.db, env.ws.ID, id, report.Options{})
			must(t, err)
			return rep
		}

		before := view()
		if !equalNaN(reflect.ValueOf(fresh().Criteria), reflect.ValueOf(before.Criteria)) {
			t.Fatalf("the figures shown differ from a fresh computation")
		}
		builds := env.h.live.builds.Load()
		if again := view(); again != before || env.h.live.builds.Load() != builds {
			t.Fatalf("no answer stored: the view computed again (%d computations, want %d)", env.h.live.builds.Load(), builds)
		}

		// The answers arrive, one batch at a time; after each, many
		// viewers at once share one computation, and it shows them.
		last := before
		for _, b := range open {
			b.Status = models.BatchDone
			must(t, env.db.SaveBatchResult(ctx, models.BatchResult{Batch: b, Scores: answers[b.ID]}))
			builds := env.h.live.builds.Load()
			// The interval passed for all at once; then they view together.
			env.h.live.mu.Lock()
			for _, e := range env.h.live.entries {
				e.started = e.started.Add(-time.Minute)
			}
			env.h.live.mu.Unlock()
			run, err := env.db.GetRun(ctx, id)
			must(t, err)
			const viewers = 6
			got := make([]*report.Report, viewers)
			var wg sync.WaitGroup
			for i := range viewers {
				wg.Go(func() {
					lv, err := env.h.liveReport(env.localCtx(), run, report.Options{})
					if err == nil {
						got[i] = lv.rep
					}
				})
			}
			wg.Wait()
			if n := env.h.live.builds.Load() - builds; n != 1 {
				t.Fatalf("%d viewers after an answer: %d computations, want 1", viewers, n)
			}
			want := fresh()
			for i, rep := range got {
				if rep == nil || rep != got[0] {
					t.Fatalf("viewer %d: not the shared figures", i)
				}
			}
			if !equalNaN(reflect.ValueOf(want.Criteria), reflect.ValueOf(got[0].Criteria)) {
				t.Fatalf("after batch %d's answers, the figures shown differ from a fresh computation", b.ID)
			}
			readable := 0
			for _, s := range answers[b.ID] {
				if s.Score != nil {
					readable++
				}
			}
			if g, l := got[0].Criteria[0].Scored, last.Criteria[0].Scored; readable == 0 || g != l+readable {
				t.Fatalf("after batch %d's %d readable answers: %d rounds scored, %d before", b.ID, readable, g, l)
			}
			if got[0].Run.BatchesDone != last.Run.BatchesDone+1 {
				t.Fatalf("after batch %d's answers the figures are over %d batches done, %d before", b.ID, got[0].Run.BatchesDone, last.Run.BatchesDone)
			}
			last = got[0]
		}
		// The page shows them too.
		if rec := env.get(fmt.Sprintf("/runs/%d", id)); rec.Code != http.StatusOK {
			t.Fatalf("run page: %d", rec.Code)
		}
	})
}
