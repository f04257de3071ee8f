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
				whole := env.waitFinished(env.launch(a, newRun()).ID, 30*time.Second)
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
				resumed := env.waitFinished(run.ID, 30*time.Second, func() { b.Sweep(context.Background()) })
				if resumed.Status != models.RunSucceeded {
					t.Fatalf("resumed run %s (%s)", resumed.Status, resumed.Error)
				}

				type place struct{ round, batch int }
				rowsOf := func(id int64) map[place][]int64 {
					out := map[place][]int64{}
					for _, bt := range env.batches(id) {
						out[place{bt.Round, bt.BatchIndex}] = bt.RowIDs
					}
					return out
				}
				wantRows, gotRows := rowsOf(whole.ID), rowsOf(resumed.ID)
				if len(gotRows) != len(wantRows) || len(wantRows) != 9 {
					t.Fatalf("%d batches after the resume, %d uninterrupted; want 9 each", len(gotRows), len(wantRows))
				}
				for p, want := range wantRows {
					if got := gotRows[p]; !slices.Equal(got, want) {
						t.Errorf("round %d batch %d holds rows %v after the resume, %v uninterrupted", p.round+1, p.batch, got, want)
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
				wantScores, gotScores := scoresOf(whole.ID), scoresOf(resumed.ID)
				if len(gotScores) != 90 || len(wantScores) != 90 {
					t.Fatalf("%d scores after the resume, %d uninterrupted; want 90 each", len(gotScores), len(wantScores))
				}
				for c, want := range wantScores {
					if got := gotScores[c]; got != want {
						t.Errorf("round %d row %d scored %v after the resume, %v uninterrupted", c.round+1, c.row, got, want)
					}
				}

				// The figures: the whole JSON report but the counters (the
				// resumed run paid for the two calls lost in the crash).
				if w, g := exportWithoutCounters(t, env, whole.ID), exportWithoutCounters(t, env, resumed.ID); !bytes.Equal(w.json, g.json) {
					t.Errorf("the resumed run's report differs from the uninterrupted run's:\nresumed:       %.600s\nuninterrupted: %.600s", g.json, w.json)
				}
			})
		}
	})
}
