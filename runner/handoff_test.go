package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// storedRun stores run (not launched) and a round of n one-row batches
// (n at most the 30 rows of the demo dataset: a row is judged once a round).
func (env *testEnv) storedRun(run models.Run, n int) (models.Run, []models.RunBatch) {
	env.t.Helper()
	ctx := context.Background()
	if err := env.db.CreateRun(ctx, &run, nil); err != nil {
		env.t.Fatal(err)
	}
	plan := make([][]int64, n)
	for i := range plan {
		plan[i] = []int64{env.rows[i%len(env.rows)].ID}
	}
	bs, err := env.db.CreateRoundBatches(ctx, run.ID, 0, 0, plan)
	if err != nil {
		env.t.Fatal(err)
	}
	return run, bs
}

// TestAnswersSavedTogetherAllStored: answers stored at once (the first
// caller writes its group itself, the rest go to a writer) are each stored
// once, each with its own fate (a writer that lost the lease is refused,
// the others are kept), and the queue is idle afterwards.
func TestAnswersSavedTogetherAllStored(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		r := env.startRunner(Config{})
		run, bs := env.storedRun(env.newRun("http://127.0.0.1:1/v1", 1, 1, 30), 30)
		if err := env.db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ? WHERE id = ?`, "w1", models.RunRunning, run.ID).Error; err != nil {
			t.Fatal(err)
		}
		lost := 7 // this batch's writer lost the lease
		errs := make([]error, len(bs))
		var wg sync.WaitGroup
		for i, b := range bs {
			wg.Go(func() {
				b.Status, b.Response, b.Calls = models.BatchDone, fmt.Sprintf("Sample1: %d", i%3+1), 1
				score := float64(i%3 + 1)
				res := models.BatchResult{Batch: b, Scores: []models.RunScore{{RunID: run.ID, BatchID: b.ID, RowID: b.RowIDs[0], Label: 1, Score: &score}}}
				owner := "w1"
				if i == lost {
					owner = "w0"
				}
				errs[i] = r.saveResult(models.WithLeaseOwner(context.Background(), owner), res)
			})
		}
		wg.Wait()
		for i, err := range errs {
			if i == lost {
				if !errors.Is(err, models.ErrLeaseLost) {
					t.Errorf("answer %d from a lost lease: %v, want ErrLeaseLost", i, err)
				}
			} else if err != nil {
				t.Errorf("answer %d: %v", i, err)
			}
		}
		done := 0
		for _, b := range env.batches(run.ID) {
			if b.Status == models.BatchDone {
				done++
			}
		}
		if got := env.getRun(run.ID); done != len(bs)-1 || got.BatchesDone != len(bs)-1 || len(env.scores(run.ID)) != len(bs)-1 {
			t.Errorf("%d batches done, run counts %d, %d scores; want %d of each", done, got.BatchesDone, len(env.scores(run.ID)), len(bs)-1)
		}
		r.saves.mu.Lock()
		defer r.saves.mu.Unlock()
		if r.saves.writing || len(r.saves.pending) != 0 {
			t.Errorf("after the saves: writing %v, %d pending; want an idle queue", r.saves.writing, len(r.saves.pending))
		}
	})
}

// TestLeaseChecksSeeTheDatabaseAfterAsking: lease checks made together
// (the first reads itself, the others share the next read) all see the
// lease as it was when they asked or later; a check after a takeover sees
// the new owner; a check whose context ends while it waits reports why;
// the guard is idle afterwards.
func TestLeaseChecksSeeTheDatabaseAfterAsking(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		r := env.startRunner(Config{})
		run, _ := env.storedRun(env.newRun("http://127.0.0.1:1/v1", 1, 1, 30), 1)
		setOwner := func(owner string) {
			if err := env.db.Gorm.Exec(`UPDATE runs SET lease_owner = ?, status = ? WHERE id = ?`, owner, models.RunRunning, run.ID).Error; err != nil {
				t.Fatal(err)
			}
		}
		g := &callGuard{r: r, runID: run.ID, owner: "w1", ctx: context.Background()}
		for _, owner := range []string{"w1", "w2", "w1"} {
			setOwner(owner)
			owners := make([]string, 30)
			var wg sync.WaitGroup
			for i := range owners {
				wg.Go(func() {
					st, err := g.readLease(context.Background())
					if err != nil {
						t.Error(err)
					}
					owners[i] = st.Owner
				})
			}
			wg.Wait()
			for i, got := range owners {
				if got != owner {
					t.Errorf("check %d read owner %q after the lease went to %q", i, got, owner)
				}
			}
		}
		// A check waiting behind a read under way, whose context ends.
		g.mu.Lock()
		g.reading = true
		g.mu.Unlock()
		cause := errors.New("the run was paused")
		ctx, cancel := context.WithCancelCause(context.Background())
		go func() { time.Sleep(20 * time.Millisecond); cancel(cause) }()
		if _, err := g.readLease(ctx); !errors.Is(err, cause) {
			t.Errorf("a check whose context ended while waiting: %v, want %v", err, cause)
		}
		g.mu.Lock()
		g.reading = false
		g.next = nil
		g.mu.Unlock()
		if _, err := g.readLease(ctx); !errors.Is(err, cause) {
			t.Errorf("a check reading itself with an ended context: %v, want %v", err, cause)
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.reading || g.next != nil {
			t.Errorf("after the checks: reading %v, next %v; want an idle guard", g.reading, g.next)
		}
	})
}

// TestCachedAnswersShareTheBatchCommit: on SQLite a cached answer is
// queued, not written at once; the batch result that follows it is
// committed with it (stored when that save returns); one that no result
// follows is stored within the linger; Stop writes what is still queued.
// On PostgreSQL it is stored at once. A linger timer whose answers a
// group took is stopped.
func TestCachedAnswersShareTheBatchCommit(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		r := env.startRunner(Config{})
		run, bs := env.storedRun(env.newRun("http://127.0.0.1:1/v1", 1, 1, 30), 2)
		rc := env.db.ResponseCache(env.ws.ID)
		stored := func(hash string) bool {
			_, ok, err := rc.LoadAnswer(ctx, hash, 0)
			if err != nil {
				t.Fatal(err)
			}
			return ok
		}
		// The timer must not fire before the result's save takes the
		// answer: under load the 20 ms between the two calls can pass,
		// the timer fires, and its flush (waiting for the lock) leaves
		// lingering set while the group writes, which the check below
		// reads as a timer left armed. Long while the group takes it.
		r.saves.mu.Lock()
		r.saves.lingerFor = time.Hour
		r.saves.mu.Unlock()
		if err := r.saveAnswer(ctx, rc, "with-result", 0, []byte(`{"choices":[{"Text":"Sample1: 2"}]}`)); err != nil {
			t.Fatal(err)
		}
		b := bs[0]
		b.Status, b.Calls = models.BatchDone, 1
		score := 2.0
		res := models.BatchResult{Batch: b, Scores: []models.RunScore{{RunID: run.ID, BatchID: b.ID, RowID: b.RowIDs[0], Label: 1, Score: &score}}}
		if err := r.saveResult(ctx, res); err != nil {
			t.Fatal(err)
		}
		if !stored("with-result") {
			t.Error("the cached answer queued before a batch result is not stored when that result's save returns")
		}
		// Its linger timer is stopped: firing, it would only wake an idle
		// process (once a call at concurrency 1) to find nothing to write.
		r.saves.mu.Lock()
		if env.db.Dialect == models.SQLite && (r.saves.lingering || r.saves.linger == nil || r.saves.linger.Stop()) {
			t.Errorf("after the group took the cached answer: lingering %v, timer %v still armed", r.saves.lingering, r.saves.linger)
		}
		r.saves.lingerFor = 0 // answerLinger: "alone" is written by the timer
		r.saves.mu.Unlock()
		if err := r.saveAnswer(ctx, rc, "alone", 0, []byte(`{"choices":[{"Text":"x"}]}`)); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for !stored("alone") {
			if time.Now().After(deadline) {
				t.Fatal("a cached answer no result followed was not stored")
			}
			time.Sleep(5 * time.Millisecond)
		}
		// Hold the queue (nothing is written until Stop) once the writer
		// of "alone" is done: "alone" is visible as soon as it commits,
		// before its writer looks for more, and a hold taken then would
		// let that writer take "at-stop" too.
		held := time.Now().Add(10 * time.Second)
		for {
			r.saves.mu.Lock()
			if !r.saves.writing && len(r.saves.pending) == 0 {
				r.saves.writing = true
				r.saves.mu.Unlock()
				break
			}
			r.saves.mu.Unlock()
			if time.Now().After(held) {
				t.Fatal("the writer of a cached answer did not end")
			}
			time.Sleep(time.Millisecond)
		}
		if err := r.saveAnswer(ctx, rc, "at-stop", 0, []byte(`{"choices":[{"Text":"y"}]}`)); err != nil {
			t.Fatal(err)
		}
		if env.db.Dialect == models.SQLite && stored("at-stop") {
			t.Error("a cached answer was written while the queue was held")
		}
		r.saves.mu.Lock()
		r.saves.writing = false
		r.saves.mu.Unlock()
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := r.Stop(stopCtx); err != nil {
			t.Fatal(err)
		}
		if !stored("at-stop") {
			t.Error("Stop left a queued cached answer unwritten")
		}
	})
}

// TestRoundsPlannedFromKeptScores: a run plans each round from the
// earlier rounds' scores it kept while running (reading only the newest
// round each time); every stored round is the one the method plans from
// all the stored scores, read at once as before.
func TestRoundsPlannedFromKeptScores(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		fj := newFakeJudge(t, simjudge.Options{Seed: 5}, nil)
		r := env.startRunner(Config{})
		spec := env.newRun(fj.URL(), 4, 2, 30)
		spec.Settings.BatchSize = 7 // 30 rows: batches of 7, 7, 7, 7 and 2
		run := env.waitFinished(env.launch(r, spec).ID, 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s: %s", run.Status, run.Error)
		}
		m, err := methods.Lookup(run.Method)
		if err != nil {
			t.Fatal(err)
		}
		mrun := methods.Run{Settings: run.Settings, MethodSettings: run.MethodSettings, Rubric: run.RubricSnapshot}
		index := map[int64]int{}
		for i, row := range env.rows {
			index[row.ID] = i
		}
		for round := 1; round < 4; round++ {
			// The plan as made before scores were kept: every earlier
			// round read from the database.
			past := func() ([][]float64, error) {
				byRow, err := env.db.CriterionScores(ctx, run.ID, 0, 0, mrun.Settings.Rounds)
				if err != nil {
					return nil, err
				}
				out := make([][]float64, round)
				for k := range out {
					out[k] = make([]float64, len(env.rows))
					for i := range out[k] {
						out[k][i] = math.NaN()
					}
					for rowID, scores := range byRow {
						if scores[k] != nil {
							out[k][index[rowID]] = *scores[k]
						}
					}
				}
				return out, nil
			}
			idx, err := m.Plan(methods.Plan{Run: mrun, Criterion: 0, Round: round, N: len(env.rows), Past: past})
			if err != nil {
				t.Fatal(err)
			}
			var plan [][]int64
			for _, members := range idx {
				var ids []int64
				for _, i := range members {
					ids = append(ids, env.rows[i].ID)
				}
				plan = append(plan, ids)
			}
			stored, err := env.db.RoundBatches(ctx, run.ID, 0, round)
			if err != nil {
				t.Fatal(err)
			}
			var got [][]int64
			for _, b := range stored {
				got = append(got, b.RowIDs)
			}
			if !reflect.DeepEqual(got, plan) {
				t.Errorf("round %d stored as %v; planned from scratch %v", round+1, got, plan)
			}
		}
	})
}

// TestLeaseCheckEndsWithItsCall: a lease check whose call is cancelled
// while its read waits (here on PostgreSQL for a table lock) returns at
// once with the call's cause, so a hard stop is not held by it.
func TestLeaseCheckEndsWithItsCall(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		if env.db.Dialect != models.Postgres {
			t.Skip("SQLite reads do not wait for locks (WAL); PostgreSQL's can")
		}
		r := env.startRunner(Config{})
		run, _ := env.storedRun(env.newRun("http://127.0.0.1:1/v1", 1, 1, 30), 1)
		tx, err := env.db.SQL.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.Exec("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		g := &callGuard{r: r, runID: run.ID, owner: "w1", ctx: context.Background()}
		cause := errors.New("the worker is stopping hard")
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(100*time.Millisecond, func() { cancel(cause) })
		start := time.Now()
		_, err = g.readLease(ctx)
		if !errors.Is(err, cause) {
			t.Errorf("a check cancelled while its read waited: %v, want %v", err, cause)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the check returned %s after its call was cancelled, want at once", took)
		}
	})
}

// TestStopWithASpentDeadlineWritesQueuedAnswers: Stop that comes to the
// queue with its deadline spent, while a writer is still at work, waits
// for the writer (up to its own grace) and writes what is queued, instead
// of returning and letting the caller close the database under it.
func TestStopWithASpentDeadlineWritesQueuedAnswers(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		if env.db.Dialect != models.SQLite {
			t.Skip("cached answers are queued on SQLite only")
		}
		ctx := context.Background()
		r := env.startRunner(Config{})
		rc := env.db.ResponseCache(env.ws.ID)
		r.saves.mu.Lock()
		r.saves.writing = true // a writer at work
		r.saves.mu.Unlock()
		if err := r.saveAnswer(ctx, rc, "queued-at-stop", 0, []byte(`{"choices":[{"Text":"z"}]}`)); err != nil {
			t.Fatal(err)
		}
		spent, cancel := context.WithCancel(ctx)
		cancel()
		done := make(chan struct{})
		go func() { r.flushSaves(spent); close(done) }()
		time.Sleep(50 * time.Millisecond)
		r.saves.mu.Lock()
		r.saves.writing = false // the writer ends, leaving the answer queued
		r.saves.mu.Unlock()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("flushSaves did not return")
		}
		if _, ok, err := rc.LoadAnswer(ctx, "queued-at-stop", 0); err != nil || !ok {
			t.Errorf("an answer queued at a stop with its deadline spent was not written (%v)", err)
		}
	})
}
