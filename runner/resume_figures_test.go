package runner

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/riverqueue/river/rivertype"
)

// TestResumedRunMatchesUninterruptedRun: a run killed in the middle of
// round 2 and resumed by another worker ends with the same batches, the
// same scores and the same figures as the same run (same seed, same
// judge) that nobody interrupted. Both runs have the answer cache off, so
// every answer of the resumed run comes from the judge and none from the
// uninterrupted run's answers; heterogeneous composition with a sort key
// of each kind, so round 2 and 3 are composed from the stored scores of
// the rounds before, across the crash.
func TestResumedRunMatchesUninterruptedRun(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, key := range []evaluator.SortKey{evaluator.SortByPrevious, evaluator.SortByMean} {
			t.Run(string(key), func(t *testing.T) {
				// The three batches of round 1 and one of round 2 are
				// answered before the judge starts holding calls.
				const answered = 4
				var holding atomic.Bool
				var admitted atomic.Int32
				var fj *fakeJudge
				fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					if holding.Load() && admitted.Add(1) > answered {
						fj.hang(r)
						return true
					}
					return false
				})
				t.Cleanup(fj.releaseHeld)
				newRun := func() models.Run {
					r := env.newRun(fj.URL(), 3, 2, 30)
					r.Settings.Seed = 11
					r.Settings.NoCache = true
					r.Settings.Composition = evaluator.Heterogeneous
					r.Settings.SortKey = key
					return r
				}

				a := env.startRunner(Config{LeaseTTL: leaseTTL})
				whole := env.waitFinished(env.launch(a, newRun()).ID, 90*time.Second)
				if whole.Status != models.RunSucceeded {
					t.Fatalf("uninterrupted run %s (%s)", whole.Status, whole.Error)
				}

				holding.Store(true)
				run := env.launch(a, newRun())
				env.waitRun(run.ID, 15*time.Second, "four batches stored, two calls held", func(r models.Run) bool {
					return r.BatchesDone == answered && fj.InFlight() == 2
				})
				kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := a.Kill(kctx); err != nil {
					t.Errorf("kill: %v", err)
				}
				if got := env.getRun(run.ID); got.Finished() {
					t.Fatalf("the run finished before the kill (%s): nothing was resumed", got.Status)
				}
				holding.Store(false)
				b := env.startRunner(Config{LeaseTTL: leaseTTL})
				resumed := env.waitFinished(run.ID, 90*time.Second, func() { b.Sweep(context.Background()) })
				if resumed.Status != models.RunSucceeded {
					t.Fatalf("resumed run %s (%s)", resumed.Status, resumed.Error)
				}

				sameFiguresAsUninterrupted(t, env, whole.ID, resumed.ID, "after the resume")
			})
		}
	})
}

// sameFiguresAsUninterrupted checks that run gotID has the batches, the
// scores and the figures of run wantID, judged by the same judge with the
// same seed without interruption (nine batches of ten samples); when
// says what happened to got ("after the resume").
func sameFiguresAsUninterrupted(t *testing.T, env *testEnv, wantID, gotID int64, when string) {
	t.Helper()
	type place struct{ round, batch int }
	rowsOf := func(id int64) map[place][]int64 {
		out := map[place][]int64{}
		for _, bt := range env.batches(id) {
			out[place{bt.Round, bt.BatchIndex}] = bt.RowIDs
		}
		return out
	}
	wantRows, gotRows := rowsOf(wantID), rowsOf(gotID)
	if len(gotRows) != len(wantRows) || len(wantRows) != 9 {
		t.Fatalf("%d batches %s, %d uninterrupted; want 9 each", len(gotRows), when, len(wantRows))
	}
	for p, want := range wantRows {
		if got := gotRows[p]; !slices.Equal(got, want) {
			t.Errorf("round %d batch %d holds rows %v %s, %v uninterrupted", p.round+1, p.batch, got, when, want)
		}
	}

	type cell struct {
		round int
		row   int64
	}
	scoresOf := func(id int64) map[cell]float64 {
		out := map[cell]float64{}
		for _, s := range env.scores(id) {
			if s.Score == nil {
				t.Errorf("run %d: round %d row %d has no score", id, s.Round+1, s.RowID)
				continue
			}
			out[cell{s.Round, s.RowID}] = *s.Score
		}
		return out
	}
	wantScores, gotScores := scoresOf(wantID), scoresOf(gotID)
	if len(gotScores) != 90 || len(wantScores) != 90 {
		t.Fatalf("%d scores %s, %d uninterrupted; want 90 each", len(gotScores), when, len(wantScores))
	}
	for c, want := range wantScores {
		if got := gotScores[c]; got != want {
			t.Errorf("round %d row %d scored %v %s, %v uninterrupted", c.round+1, c.row, got, when, want)
		}
	}

	// The figures: the whole JSON report but the counters (a resumed
	// run paid for the calls lost in its crash).
	if w, g := exportWithoutCounters(t, env, wantID), exportWithoutCounters(t, env, gotID); !bytes.Equal(w.json, g.json) {
		t.Errorf("the report %s differs from the uninterrupted run's:\ngot:           %.600s\nuninterrupted: %.600s", when, g.json, w.json)
	}
}

// TestPausedRunMatchesUninterruptedRun: a run paused in the middle of
// round 2, with two calls on their way, stores and counts those two
// answers when they arrive, sends nothing more, gives its worker up, stays
// paused across a restart, and once continued ends with the same batches,
// scores and figures as the same run nobody interrupted, having sent the
// judge exactly as many calls (no batch paid twice) and counted the same
// calls and tokens.
func TestPausedRunMatchesUninterruptedRun(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		// The three batches of round 1 and one of round 2 are answered
		// before the judge starts holding calls.
		const answered, concurrency = 4, 2
		var holding atomic.Bool
		var admitted atomic.Int32
		var fj *fakeJudge
		fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if holding.Load() && admitted.Add(1) > answered {
				// Held until released, then answered as any call.
				return fj.hang(r)
			}
			return false
		})
		t.Cleanup(fj.releaseHeld)
		newRun := func() models.Run {
			r := env.newRun(fj.URL(), 3, concurrency, 30)
			r.Settings.Seed = 11
			r.Settings.NoCache = true
			r.Settings.Composition = evaluator.Heterogeneous
			r.Settings.SortKey = evaluator.SortByPrevious
			return r
		}

		a := env.startRunner(Config{LeaseTTL: leaseTTL})
		whole := env.waitFinished(env.launch(a, newRun()).ID, 90*time.Second)
		if whole.Status != models.RunSucceeded {
			t.Fatalf("uninterrupted run %s (%s)", whole.Status, whole.Error)
		}
		wholeCalls := fj.Total()

		holding.Store(true)
		run := env.launch(a, newRun())
		env.waitRun(run.ID, 15*time.Second, "four batches stored, two calls held", func(r models.Run) bool {
			return r.BatchesDone == answered && fj.InFlight() == concurrency
		})
		paused, err := a.Pause(context.Background(), env.ws.ID, run.ID)
		if err != nil {
			t.Fatalf("pause: %v", err)
		}
		if paused.Status != models.RunPaused || paused.Finished() {
			t.Fatalf("Pause returned status %s (finished %v), want paused and not finished", paused.Status, paused.Finished())
		}
		if _, err := a.Pause(context.Background(), env.ws.ID, run.ID); models.ErrorCode(err) != models.EConflict {
			t.Errorf("pausing a paused run: %v, want a conflict", err)
		}
		// The two calls on their way answer after the pause: their answers
		// are stored and counted, and nothing more is sent.
		fj.releaseHeld()
		got := env.waitRun(run.ID, 15*time.Second, "the two answers on their way stored", func(r models.Run) bool {
			return r.BatchesDone == answered+concurrency
		})
		env.waitRun(run.ID, 15*time.Second, "the paused execution lets its lease go", func(r models.Run) bool {
			return r.LeaseOwner == ""
		})
		if got.Status != models.RunPaused || got.Calls != answered+concurrency {
			t.Errorf("after the answers on their way: %s with %d calls counted, want paused with %d", got.Status, got.Calls, answered+concurrency)
		}
		// Its job ends, so that it holds no worker.
		deadline := time.Now().Add(15 * time.Second)
		for j := env.job(*run.JobID); j.State != rivertype.JobStateCancelled && j.State != rivertype.JobStateCompleted; j = env.job(*run.JobID) {
			if time.Now().After(deadline) {
				t.Fatalf("the paused run's job is still %s, want it ended (cancelled or completed) so that it holds no worker", j.State)
			}
			time.Sleep(20 * time.Millisecond)
		}

		// A restart while paused: the next process leaves the run paused.
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := a.Kill(kctx); err != nil {
			t.Errorf("kill: %v", err)
		}
		b := env.startRunner(Config{LeaseTTL: leaseTTL})
		b.Sweep(context.Background())
		time.Sleep(leaseTTL) // a worker that took the run would have sent a call by now
		if sent := fj.Total() - wholeCalls; sent != answered+concurrency {
			t.Errorf("the judge got %d calls for the paused run, want the %d sent before the pause", sent, answered+concurrency)
		}
		if now := env.getRun(run.ID); now.Status != models.RunPaused {
			t.Fatalf("after a restart the run is %s, want it still paused", now.Status)
		}

		if _, err := b.Continue(context.Background(), env.ws.ID, run.ID, models.Requeue{}); err != nil {
			t.Fatalf("continue: %v", err)
		}
		done := env.waitFinished(run.ID, 90*time.Second, func() { b.Sweep(context.Background()) })
		if done.Status != models.RunSucceeded {
			t.Fatalf("continued run %s (%s)", done.Status, done.Error)
		}
		if sent := fj.Total() - wholeCalls; sent != wholeCalls {
			t.Errorf("the paused and continued run sent the judge %d calls, the uninterrupted one %d: a batch was paid twice or skipped", sent, wholeCalls)
		}
		if done.Calls != whole.Calls || done.PromptTokens != whole.PromptTokens || done.CompletionTokens != whole.CompletionTokens {
			t.Errorf("continued run counted %d calls, %d+%d tokens; uninterrupted %d calls, %d+%d tokens",
				done.Calls, done.PromptTokens, done.CompletionTokens, whole.Calls, whole.PromptTokens, whole.CompletionTokens)
		}
		sameFiguresAsUninterrupted(t, env, whole.ID, run.ID, "after a pause and continue")
		if _, err := b.Continue(context.Background(), env.ws.ID, run.ID, models.Requeue{}); models.ErrorCode(err) != models.EConflict {
			t.Errorf("continuing a finished run: %v, want a conflict", err)
		}
	})
}
