package runner

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// loseJob makes a queued run's job one no worker takes, as an older build
// or River's maintenance left it: discarded or cancelled (ended ago
// before now), or deleted.
func (env *testEnv) loseJob(jobID int64, state string, ago time.Duration) {
	env.t.Helper()
	var err error
	if state == "" {
		err = env.db.Gorm.Exec(`DELETE FROM river_job WHERE id = ?`, jobID).Error
	} else {
		err = env.db.Gorm.Exec(`UPDATE river_job SET state = ?, attempt = 1, max_attempts = 1, attempted_at = ?, finalized_at = ? WHERE id = ?`,
			state, time.Now().Add(-ago-time.Second).UTC(), time.Now().Add(-ago).UTC(), jobID).Error
	}
	if err != nil {
		env.t.Fatal(err)
	}
}

func (env *testEnv) requeuedEvents(runID int64) []models.RunEvent {
	env.t.Helper()
	evs, err := env.db.RunEvents(context.Background(), runID)
	if err != nil {
		env.t.Fatal(err)
	}
	var out []models.RunEvent
	for _, e := range evs {
		if e.Kind == models.RunEventRequeued {
			out = append(out, e)
		}
	}
	return out
}

// TestSweepRequeuesAQueuedRunWhoseJobWasLost: a run queued while an older
// build was about (it fetched the job, did not know its kind and used up
// its attempts, so River discarded it), or whose job was cancelled or
// deleted since, was never queued again: the sweep looked only at running
// runs, and the run stayed "queued" for ever. Now the sweep gives it a new
// job, says so on the run, and the run is judged to its end.
func TestSweepRequeuesAQueuedRunWhoseJobWasLost(t *testing.T) {
	t.Parallel()
	for _, state := range []string{"discarded", "cancelled", ""} {
		name := state
		if name == "" {
			name = "deleted"
		}
		t.Run(name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				ctx := context.Background()
				fj := newFakeJudge(t, simjudge.Options{Seed: 23}, nil)
				run := env.launch(env.jobs, env.newRun(fj.URL(), 1, 4, 30))
				lost := *run.JobID
				env.loseJob(lost, state, time.Minute)
				r := env.startRunner(Config{LeaseTTL: 2 * time.Second})
				got := env.waitFinished(run.ID, 30*time.Second, func() { r.Sweep(ctx) })
				if got.Status != models.RunSucceeded {
					t.Fatalf("the run ended %s (%s)", got.Status, got.Error)
				}
				if got.JobID == nil || *got.JobID == lost {
					t.Fatalf("the run's job is %v, want a new one in place of %d", got.JobID, lost)
				}
				evs := env.requeuedEvents(run.ID)
				if len(evs) != 1 || !strings.Contains(evs[0].Message, "job ("+strconv.FormatInt(lost, 10)+")") ||
					!strings.Contains(evs[0].Message, "as job "+strconv.FormatInt(*got.JobID, 10)) {
					t.Fatalf("requeue events %+v, want one naming job %d and job %d", evs, lost, *got.JobID)
				}
				if state != "" {
					if old := env.job(lost); old == nil || string(old.State) != state {
						t.Errorf("the lost job %d is %v now, want it left %s", lost, old, state)
					}
				}
				var j *rivertype.JobRow
				eventually(t, "the new job to end", func() bool { j = env.job(*got.JobID); return j.FinalizedAt != nil })
				if j.State != rivertype.JobStateCompleted || j.Queue != "default" {
					t.Errorf("the new job is %s on queue %s, want completed on the default queue", j.State, j.Queue)
				}
			})
		})
	}
}

// TestLostJobRequeuedOnceAndNotEarly: a job cancelled a moment ago is not
// lost yet (a hand-over cancels a job just before recording the next);
// sweeps of two processes at once queue one new job; a run whose new job
// is lost again is not queued a third time.
func TestLostJobRequeuedOnceAndNotEarly(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		run := env.launch(env.jobs, env.newRun("http://127.0.0.1:9/v1", 1, 4, 30))
		lost := *run.JobID
		// Two insert-only runners stand for two processes' sweepers; the
		// lease (10 s by default) is the grace.
		other, err := New(Config{DB: env.db, Log: testLog()})
		if err != nil {
			t.Fatal(err)
		}
		sweepBoth := func() {
			var wg sync.WaitGroup
			for _, r := range []*Runner{env.jobs, other} {
				wg.Go(func() { r.Sweep(ctx) })
			}
			wg.Wait()
		}
		env.loseJob(lost, "cancelled", 0)
		sweepBoth()
		if got := env.getRun(run.ID); got.JobID == nil || *got.JobID != lost || len(env.requeuedEvents(run.ID)) != 0 {
			t.Fatalf("a job cancelled just now was replaced: job %v, events %v", got.JobID, env.requeuedEvents(run.ID))
		}
		env.loseJob(lost, "cancelled", time.Minute)
		sweepBoth()
		got := env.getRun(run.ID)
		if got.Status != models.RunQueued || got.JobID == nil || *got.JobID == lost || len(env.requeuedEvents(run.ID)) != 1 {
			t.Fatalf("after the lost job: run %s on job %v, %d requeue events; want queued on a new job, one event", got.Status, got.JobID, len(env.requeuedEvents(run.ID)))
		}
		var jobs int64
		if err := env.db.Gorm.Raw(`SELECT COUNT(*) FROM river_job WHERE kind = ? AND state = 'available'`, RunArgs{}.Kind()).Scan(&jobs).Error; err != nil || jobs != 1 {
			t.Fatalf("%d available run jobs (%v), want the one new job", jobs, err)
		}
		second := *got.JobID
		env.loseJob(second, "discarded", time.Minute)
		sweepBoth()
		sweepBoth()
		if got := env.getRun(run.ID); got.JobID == nil || *got.JobID != second || len(env.requeuedEvents(run.ID)) != 1 {
			t.Fatalf("the run was queued again after its new job was lost: job %v (was %d), %d events", got.JobID, second, len(env.requeuedEvents(run.ID)))
		}
	})
}
