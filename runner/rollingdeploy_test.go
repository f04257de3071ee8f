package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// futureArgs is a job kind this build does not know, as a newer server
// would queue during a rolling deploy.
type futureArgs struct {
	RunID int64 `json:"run_id"`
}

func (futureArgs) Kind() string { return "batcheval_run_from_a_newer_build" }

type futureWorker struct {
	river.WorkerDefaults[futureArgs]
	worked atomic.Int64
}

func (w *futureWorker) Work(ctx context.Context, job *river.Job[futureArgs]) error {
	w.worked.Add(1)
	return nil
}

// TestUnknownJobKindWaitsForAWorkerThatKnowsIt: a job of a kind this
// worker does not know stays available, no attempt used, however long
// the worker runs beside it; a worker that knows the kind (a newer build)
// then works it. Before, the worker fetched it at once and failed it with
// River's UnknownJobKindError, attempt after attempt with growing waits,
// until River discarded it: a run queued by a newer server was lost when
// only older workers ran.
func TestUnknownJobKindWaitsForAWorkerThatKnowsIt(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		res, err := env.jobs.river.Insert(ctx, futureArgs{RunID: 1}, &river.InsertOpts{Queue: river.QueueDefault})
		if err != nil {
			t.Fatal(err)
		}
		// An older worker: this build's runner, polling every 20 ms.
		env.startRunner(Config{})
		// Meanwhile a run of a known kind is worked, so the worker is
		// fetching jobs of this queue all along.
		fj := newFakeJudge(t, simjudge.Options{Seed: 21}, nil)
		run := env.launch(env.jobs, env.newRun(fj.URL(), 1, 4, 30))
		if got := env.waitFinished(run.ID, 30*time.Second); got.Status != models.RunSucceeded {
			t.Fatalf("the known run ended %s (%s)", got.Status, got.Error)
		}
		// About 15 more polls: a worker that fetched unknown kinds took the
		// job at its first fetch, long before this (was a second).
		time.Sleep(300 * time.Millisecond)
		job, err := env.jobs.river.JobGet(ctx, res.Job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if job.State != rivertype.JobStateAvailable || job.Attempt != 0 || len(job.Errors) != 0 {
			t.Fatalf("the unknown job is %s after %d attempts (errors %v); want available, untouched, for a worker that knows it",
				job.State, job.Attempt, job.Errors)
		}

		// A newer worker knows the kind and works it.
		fw := &futureWorker{}
		workers := river.NewWorkers()
		river.AddWorker(workers, fw)
		newer, err := river.NewClient(driverFor(env.db, nil), &river.Config{
			Logger: testLog(), Workers: workers, FetchPollInterval: 20 * time.Millisecond, FetchCooldown: 10 * time.Millisecond,
			Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := newer.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = newer.Stop(sctx)
		})
		eventually(t, "the newer worker to work the job", func() bool {
			j, err := env.jobs.river.JobGet(ctx, res.Job.ID)
			return err == nil && j.State == rivertype.JobStateCompleted
		})
		if n := fw.worked.Load(); n != 1 {
			t.Errorf("the newer worker worked the job %d times, want 1", n)
		}
	})
}

// TestSweepRequeuesARunningRunWhoseJobWasDiscarded: River's rescuer in an
// older worker discards a job of a kind it does not know once it has run
// past RescueAfter, even while a newer worker judges its run. When that
// worker then stops, its run's lease lapses and the sweep gives the run's
// job one more attempt: the run is resumed and ends. Before, the sweep
// requeued only jobs still marked running, and the run stayed "running"
// with nobody working it, for ever.
func TestSweepRequeuesARunningRunWhoseJobWasDiscarded(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		fj := newFakeJudge(t, simjudge.Options{Seed: 22}, nil)
		run := env.launch(env.jobs, env.newRun(fj.URL(), 1, 4, 30))
		// Its worker (gone now) claimed it and its lease lapsed; the
		// rescuer discarded its job (one attempt, all it had).
		if err := env.db.Gorm.Exec(`UPDATE runs SET status = ?, lease_owner = 'gone-worker/1', lease_until = ? WHERE id = ?`,
			models.RunRunning, time.Now().Add(-time.Minute).UTC(), run.ID).Error; err != nil {
			t.Fatal(err)
		}
		if err := env.db.Gorm.Exec(`UPDATE river_job SET state = 'discarded', attempt = 1, max_attempts = 1, attempted_at = ?, finalized_at = ? WHERE id = ?`,
			time.Now().Add(-3*time.Minute).UTC(), time.Now().Add(-time.Minute).UTC(), *run.JobID).Error; err != nil {
			t.Fatal(err)
		}
		r := env.startRunner(Config{LeaseTTL: 2 * time.Second})
		got := env.waitFinished(run.ID, 30*time.Second, func() { r.Sweep(ctx) })
		if got.Status != models.RunSucceeded {
			t.Fatalf("the run ended %s (%s)", got.Status, got.Error)
		}
		var job *rivertype.JobRow
		eventually(t, "the run's job to complete", func() bool {
			j, err := env.jobs.river.JobGet(ctx, *run.JobID)
			job = j
			// A sweep that read the lapsed lease just before the claim
			// may hand the job out once more: that execution finds the
			// run ended and completes the job.
			return err == nil && j.FinalizedAt != nil
		})
		if job.State != rivertype.JobStateCompleted || job.Attempt < 2 {
			t.Errorf("the job is %s after %d attempts, want completed after the discarded one and the resume", job.State, job.Attempt)
		}
	})
}
