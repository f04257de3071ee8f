package runner

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestWebhookWakesTheWorkers: on SQLite a run's end queues its webhook's
// delivery in the transaction that stores the end, where River wakes no
// worker; the delivery went out at the workers' next poll (a second by
// default). Once that transaction has committed the workers of the shared
// queue are woken as for a launch: this process's (River's fetch) and
// other processes' (the wake file). Every worker polls once an hour here,
// its first fetch long made, so only a wake delivers the message.
func TestWebhookWakesTheWorkers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// private: the run is worked by a command line's runner (its own
		// queue), the delivery by a worker of the shared queue on
		// another connection pool (another process's).
		private bool
	}{
		{"the worker that ran the run", false},
		{"another process's worker", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := newTestEnv(t, dbtest.Open(t, models.SQLite, migrateJobs))
			ctx := context.Background()
			rc := newReceiver(t)
			if _, err := env.db.SaveWebhook(ctx, models.Webhook{WorkspaceID: env.ws.ID, URL: rc.srv.URL + "/hook", OnFinished: true}); err != nil {
				t.Fatal(err)
			}
			fj := newFakeJudge(t, simjudge.Options{Seed: 38}, nil)
			hooks := WebhookConfig{AllowLoopback: true, Timeout: 5 * time.Second}
			runs := env.startRunner(Config{PollInterval: time.Hour, Webhooks: hooks})
			if tc.private {
				env.startRunner(Config{DB: otherHandle(t, env.db), PollInterval: time.Hour, Webhooks: hooks})
				runs = env.startRunner(Config{Queue: "cli_webhook", PollInterval: time.Hour, Webhooks: hooks})
			}
			// Past the workers' first fetch, made as they start.
			time.Sleep(500 * time.Millisecond)
			run := env.launch(runs, env.newRun(fj.URL(), 1, 2, 10))
			// 30 s: bounds for a loaded machine, far below the hour's poll.
			if got := env.waitFinished(run.ID, 30*time.Second); got.Status != models.RunSucceeded {
				t.Fatalf("run %s (error %q), want succeeded", got.Status, got.Error)
			}
			deadline := time.Now().Add(30 * time.Second)
			for len(rc.messages()) == 0 {
				if time.Now().After(deadline) {
					var state []rivertype.JobState
					if res, err := env.jobs.river.JobList(ctx, river.NewJobListParams().Kinds(webhookKind)); err == nil {
						for _, j := range res.Jobs {
							state = append(state, j.State)
						}
					}
					t.Fatalf("no delivery of run %d's end; its delivery jobs: %v", run.ID, state)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if m := rc.messages()[0]; m.Event != EventRunFinished || m.Run.ID != run.ID {
				t.Errorf("delivered %s of run %d, want %s of run %d", m.Event, m.Run.ID, EventRunFinished, run.ID)
			}
		})
	}
}
