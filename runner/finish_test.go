package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// TestNextRunDoesNotWaitForStatistics: a worker that takes one run at a
// time starts and finishes its next run while the previous run's
// statistics are still being computed (they used to hold the job's slot:
// a minute for a million samples); the statistics are then stored, and
// Stop waits for statistics under way.
func TestNextRunDoesNotWaitForStatistics(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{Seed: 5}, nil)
		release := make(chan struct{})
		var held, stored atomic.Int64
		r := env.startRunner(Config{MaxRuns: 1}, func(r *Runner) {
			r.storeStats = func(ctx context.Context, db *models.DB, wsID, runID int64) error {
				held.Add(1)
				<-release
				err := report.StoreStats(ctx, db, wsID, runID)
				if err == nil {
					stored.Add(1)
				}
				return err
			}
		})
		first := env.launch(r, env.newRun(fj.URL(), 1, 2, 10))
		first = env.waitFinished(first.ID, 30*time.Second)
		env.waitRun(first.ID, 10*time.Second, "its statistics to start", func(models.Run) bool { return held.Load() == 1 })
		second := env.launch(r, env.newRun(fj.URL(), 1, 2, 10))
		second = env.waitFinished(second.ID, 30*time.Second)
		if first.Status != models.RunSucceeded || second.Status != models.RunSucceeded {
			t.Fatalf("runs ended %s and %s", first.Status, second.Status)
		}
		if stored.Load() != 0 {
			t.Fatalf("statistics stored while held")
		}
		// Stop waits for the held statistics, within its deadline.
		stopped := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			stopped <- r.Stop(ctx)
		}()
		select {
		case <-stopped:
			t.Fatal("Stop returned while a finished run's statistics were being computed")
		case <-time.After(200 * time.Millisecond):
		}
		close(release)
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
		if stored.Load() != 2 {
			t.Fatalf("%d runs' statistics stored after Stop, want 2", stored.Load())
		}
		for _, run := range []models.Run{first, second} {
			st, err := env.db.ListRunStats(context.Background(), run.ID)
			if err != nil || len(st) != len(run.RubricSnapshot.Criteria) {
				t.Errorf("run %d: %d statistics rows (%v), want %d", run.ID, len(st), err, len(run.RubricSnapshot.Criteria))
			}
		}
	})
}

// TestStatisticsPanicKeepsTheWorker: the statistics of a finished run are
// computed outside River's job (afterFinish), where River no longer
// recovers a panic: a panic there must not end the process (the web
// server shares it). It is logged as a failure to store them (the first
// page computes them), the webhook is still told, the slot is freed and
// the next runs finish.
func TestStatisticsPanicKeepsTheWorker(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		rc := hookedReceiver(t, env)
		fj := newFakeJudge(t, simjudge.Options{Seed: 5}, nil)
		var calls atomic.Int64
		r := env.startRunner(Config{MaxRuns: 1, Webhooks: quickWebhooks},
			func(r *Runner) {
				r.storeStats = func(context.Context, *models.DB, int64, int64) error {
					calls.Add(1)
					panic("statistics bug")
				}
			})
		// More runs than statistics slots: a slot kept by a panic would
		// hold the last ones' statistics for good.
		var runs []models.Run
		for range statsAtOnce + 1 {
			run := env.launch(r, env.newRun(fj.URL(), 1, 2, 10))
			if run = env.waitFinished(run.ID, 30*time.Second); run.Status != models.RunSucceeded {
				t.Fatalf("run ended %s: %s", run.Status, run.Error)
			}
			runs = append(runs, run)
		}
		for _, run := range runs {
			env.waitJobDone(run)
		}
		done := make(chan struct{})
		go func() { r.WaitNotifications(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the webhook deliveries behind the statistics never ended")
		}
		// The statistics run in the background (afterFinish), apart from
		// the job and its webhook: the last run's may not have started yet.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r.WaitStats(ctx)
		if n := calls.Load(); n != int64(len(runs)) {
			t.Errorf("statistics computed %d times, want %d", n, len(runs))
		}
		if got := rc.messages(); len(got) != len(runs) {
			t.Errorf("receiver got %d posts, want %d", len(got), len(runs))
		}
	})
}

// TestWebhookReportPanicKeepsTheProcess: the webhook's message is built in
// a goroutine of its own; a panic of the run's report there is recovered
// (it used to end the process, web server included), and the message is
// still sent, without figures.
func TestWebhookReportPanicKeepsTheProcess(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		rc := hookedReceiver(t, env)
		fj := newFakeJudge(t, simjudge.Options{Seed: 5}, nil)
		var builds atomic.Int64
		r := env.startRunner(Config{Webhooks: quickWebhooks},
			func(r *Runner) {
				r.buildReport = func(context.Context, *models.DB, int64, int64) (*report.Report, error) {
					builds.Add(1)
					panic("report bug")
				}
			})
		run := env.launch(r, env.newRun(fj.URL(), 1, 2, 10))
		if run = env.waitFinished(run.ID, 30*time.Second); run.Status != models.RunSucceeded {
			t.Fatalf("run ended %s: %s", run.Status, run.Error)
		}
		env.waitJobDone(run)
		r.WaitNotifications()
		got := rc.messages()
		if builds.Load() != 1 || len(got) != 1 {
			t.Fatalf("%d report builds, %d posts; want 1 and 1", builds.Load(), len(got))
		}
		if got[0].Run.ID != run.ID || len(got[0].Run.Criteria) != 0 {
			t.Errorf("message %+v: want run %d without figures", got[0].Run, run.ID)
		}
	})
}

// quickWebhooks delivers to this machine with short waits.
var quickWebhooks = WebhookConfig{AllowLoopback: true, Backoff: 5 * time.Millisecond, Timeout: 5 * time.Second}

// hookedReceiver is a webhook receiver set as env's workspace webhook for
// finished runs.
func hookedReceiver(t *testing.T, env *testEnv) *receiver {
	t.Helper()
	rc := newReceiver(t)
	if _, err := env.db.SaveWebhook(context.Background(), models.Webhook{WorkspaceID: env.ws.ID, URL: rc.srv.URL + "/hook", OnFinished: true}); err != nil {
		t.Fatal(err)
	}
	return rc
}

// TestWaitStatsCoversARunSeenFinished: whoever sees a run finished and
// then waits for the statistics (WaitStats) waits for that run's. They
// used to be counted only after the end was written, so a test that saw
// the run finished, waited, and changed its scores could have the
// statistics of the scores before its change stored after it (a shared
// comparison then read Pearson 1.000 where it had to say "undefined").
func TestWaitStatsCoversARunSeenFinished(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{Seed: 5}, nil)
		waited := make(chan error, 1)
		r := env.startRunner(Config{MaxRuns: 1}, func(r *Runner) {
			// Called once the end is written and before the statistics
			// start: the run reads finished from here on.
			r.onFinished = func(int64) {
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				r.WaitStats(ctx)
				waited <- ctx.Err()
			}
		})
		run := env.launch(r, env.newRun(fj.URL(), 1, 2, 10))
		if run = env.waitFinished(run.ID, 30*time.Second); run.Status != models.RunSucceeded {
			t.Fatalf("run ended %s: %s", run.Status, run.Error)
		}
		if err := <-waited; err == nil {
			t.Fatal("WaitStats returned before the statistics of a run that read finished were computed")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r.WaitStats(ctx)
		if ctx.Err() != nil {
			t.Fatal("the statistics never ended")
		}
		if st, err := env.db.ListRunStats(context.Background(), run.ID); err != nil || len(st) == 0 {
			t.Errorf("no statistics stored after WaitStats (%v)", err)
		}
	})
}

// TestStoringStatsWhileTheyAreComputed: StoringStats says a finished run's
// statistics are under way from the moment its end can be read until they
// are stored, and not after, for a reader to wait for them instead of
// computing them a second time.
func TestStoringStatsWhileTheyAreComputed(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		fj := newFakeJudge(t, simjudge.Options{Seed: 5}, nil)
		release := make(chan struct{})
		var seenAtEnd atomic.Bool
		var r *Runner
		r = env.startRunner(Config{}, func(r2 *Runner) {
			r2.storeStats = func(ctx context.Context, db *models.DB, wsID, runID int64) error {
				<-release
				return report.StoreStats(ctx, db, wsID, runID)
			}
			r2.onFinished = func(runID int64) { seenAtEnd.Store(r2.StoringStats(runID)) }
		})
		run := env.launch(r, env.newRun(fj.URL(), 1, 2, 10))
		run = env.waitFinished(run.ID, 30*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s: %s", run.Status, run.Error)
		}
		if !r.StoringStats(run.ID) {
			t.Error("a finished run whose statistics are held is not reported as being stored")
		}
		if r.StoringStats(run.ID + 1000) {
			t.Error("a run this process never finished is reported as being stored")
		}
		close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		r.WaitStats(ctx)
		if r.StoringStats(run.ID) {
			t.Error("the run is still reported as being stored after its statistics were")
		}
		if !seenAtEnd.Load() {
			t.Error("when the run's end was written, its statistics were not yet reported as on their way")
		}
	})
}
