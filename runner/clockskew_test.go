package runner

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestLeasesFollowTheDatabaseClock: two workers share a database, and one
// of them has a wall clock three leases off. Leases used to be written and
// compared with each worker's own clock: a worker whose clock runs ahead
// saw every other worker's live lease as lapsed and took the run (its
// batches were then paid twice), and a worker whose clock runs behind
// wrote leases that looked lapsed to everyone else the moment it wrote
// them. With the database's clock, the contender leaves the live lease
// alone (neither its sweep nor its claim takes the run) and the holder
// keeps its lease to the end of the run, each batch sent once.
func TestLeasesFollowTheDatabaseClock(t *testing.T) {
	t.Parallel()
	// Short, so that three leases pass while the holder's call is out.
	const ttl = time.Second
	cases := []struct {
		name              string
		holder, contender time.Duration // how far each worker's clock is off
	}{
		{name: "the other worker's clock runs ahead", contender: 3 * ttl},
		{name: "the holder's clock runs behind", holder: -3 * ttl},
	}
	for _, d := range dbtest.Dialects {
		for _, tc := range cases {
			t.Run(string(d)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				// Two processes on one database, each with its own clock.
				dsn := dbtest.DSN(t, d)
				holderDB := dbtest.OpenDSN(t, dsn, migrateJobs)
				contenderDB := dbtest.OpenDSN(t, dsn, migrateJobs)
				holderDB.Clock = func() time.Time { return time.Now().Add(tc.holder) }
				contenderDB.Clock = func() time.Time { return time.Now().Add(tc.contender) }
				env := newTestEnv(t, holderDB)

				var fj *fakeJudge
				fj = newFakeJudge(t, simjudge.Options{Seed: 9}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
					return fj.hang(r) // held until released, then answered
				})
				holder := env.startRunner(Config{LeaseTTL: ttl})
				t.Cleanup(fj.releaseHeld)
				run := env.launch(holder, env.newRun(fj.URL(), 1, 1, 30))
				held := env.waitRun(run.ID, 15*time.Second, "a call out", func(models.Run) bool { return fj.Total() >= 1 })
				if held.LeaseOwner == "" {
					t.Fatal("the run is not leased while its call is out")
				}

				contender, err := New(Config{DB: contenderDB, Log: testLog(), LeaseTTL: ttl})
				if err != nil {
					t.Fatal(err)
				}
				// The contender sweeps and tries to claim the run, as its
				// sweep loop and its worker would, while the holder renews.
				ctx, stop := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for ctx.Err() == nil {
						contender.Sweep(ctx)
						_ = contender.Execute(ctx, run.ID)
						time.Sleep(50 * time.Millisecond)
					}
				}()
				var taken string
				var requeued rivertype.JobState
				for end := time.Now().Add(3 * ttl); time.Now().Before(end) && taken == ""; time.Sleep(20 * time.Millisecond) {
					if got := env.getRun(run.ID); got.LeaseOwner != held.LeaseOwner {
						taken = got.LeaseOwner
					}
					if j := env.job(*run.JobID); j.State != rivertype.JobStateRunning && requeued == "" {
						requeued = j.State
					}
				}
				stop()
				fj.releaseHeld()
				wg.Wait()
				if taken != "" {
					t.Fatalf("the live lease of %s was taken by %q", held.LeaseOwner, taken)
				}
				if requeued != "" {
					t.Errorf("the holder's job became %s during its run, want running (the contender's sweep requeued it)", requeued)
				}
				got := env.waitFinished(run.ID, 20*time.Second)
				if got.Status != models.RunSucceeded || fj.Total() != 3 || got.Calls != 3 {
					t.Errorf("run %s after %d requests, %d calls counted (error %q); want succeeded after 3, each batch sent once",
						got.Status, fj.Total(), got.Calls, got.Error)
				}
			})
		}
	}
}
