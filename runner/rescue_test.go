package runner

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
)

// TestWebhookLeftByDeadProcessIsRetried: a webhook delivery whose process
// died during the attempt (River still marks it running) is delivered by a
// live worker once the rescue time has passed, parked or not, while a run
// job running for an hour under a live lease is left to its owner.
func TestWebhookLeftByDeadProcessIsRetried(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		rescueAfter time.Duration // Config.RescueAfter; 0 for the default
		park        bool          // the delivery is left while the worker is parked
		// attemptAgo is when the dead process started the delivery: past
		// the attempt's own time and the rescue time, within 12 hours
		// (River's client-wide rescue, the only one there was).
		attemptAgo time.Duration
	}{
		{name: "default rescue time", attemptAgo: DefaultRescueAfter + 10*time.Second},
		// 35 s is past this attempt's own time (31 s) and the configured
		// rescue time, but not the default one.
		{name: "configured rescue time, parked worker", rescueAfter: 2 * time.Second, park: true, attemptAgo: 35 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachDB(t, func(t *testing.T, env *testEnv) {
				ctx := context.Background()
				rc := newReceiver(t)
				if _, err := env.db.SaveWebhook(ctx, models.Webhook{WorkspaceID: env.ws.ID, URL: rc.srv.URL, OnFinished: true, OnFailed: true}); err != nil {
					t.Fatal(err)
				}
				// A run that failed, whose delivery the dead process was making.
				ended := env.newRun("http://127.0.0.1:1/v1", 1, 1, 10)
				if err := env.db.CreateRun(ctx, &ended, nil); err != nil {
					t.Fatal(err)
				}
				if err := env.db.Gorm.Exec(`UPDATE runs SET status = ?, error = ? WHERE id = ?`, models.RunFailed, "judge refused the key", ended.ID).Error; err != nil {
					t.Fatal(err)
				}
				// A run that a live worker elsewhere has been running for an
				// hour: its lease is renewed, its job attempt is old.
				long := env.launch(env.jobs, env.newRun("http://127.0.0.1:1/v1", 1, 1, 10))
				if ok, err := env.db.ClaimRun(ctx, long.ID, "live-worker", time.Hour); err != nil || !ok {
					t.Fatalf("claim for the live worker: %v, %v", ok, err)
				}
				env.markRunning(*long.JobID, time.Hour)

				cfg := Config{RescueAfter: tc.rescueAfter,
					Webhooks: WebhookConfig{AllowLoopback: true, Timeout: time.Second, Backoff: 10 * time.Millisecond}}
				if tc.park {
					cfg.IdleAfter = idleAfter
				}
				leave := func() int64 {
					return env.insertRunning(WebhookArgs{RunID: ended.ID, Status: models.RunFailed}, tc.attemptAgo)
				}
				var hook int64
				if !tc.park {
					hook = leave()
				}
				r := env.startRunner(cfg)
				if tc.park {
					waitParked(t, r, true, 5*time.Second)
					hook = leave()
				}
				deadline := time.Now().Add(20 * time.Second)
				for len(rc.messages()) == 0 {
					if time.Now().After(deadline) {
						t.Fatalf("the delivery left running is still %s after 20 s, undelivered", env.job(hook).State)
					}
					time.Sleep(20 * time.Millisecond)
				}
				if got := rc.messages(); len(got) != 1 || got[0].Run.ID != ended.ID || got[0].Event != EventRunFailed {
					t.Errorf("receiver got %+v, want one run.failed message about run %d", got, ended.ID)
				}
				// River's rescuer went over both jobs in the look that
				// rescued the delivery; the run job is still its owner's.
				j := env.job(*long.JobID)
				if j.State != rivertype.JobStateRunning || j.Attempt != 1 || len(j.Errors) != 0 {
					t.Errorf("the live run's job is %s, attempt %d, errors %v; want it running, untouched", j.State, j.Attempt, j.Errors)
				}
				if got := env.getRun(long.ID); got.Status != models.RunRunning || got.LeaseOwner != "live-worker" {
					t.Errorf("the live run is %s owned by %q; want it running for live-worker", got.Status, got.LeaseOwner)
				}
			})
		})
	}
}

// insertRunning queues a job as a process that died during its attempt
// left it: running, attempted ago, by nobody alive. In one transaction, so
// no live worker fetches it first.
func (env *testEnv) insertRunning(args river.JobArgs, ago time.Duration) int64 {
	env.t.Helper()
	var id int64
	err := env.db.Gorm.Transaction(func(tx *gorm.DB) error {
		stx, err := models.SQLTx(tx)
		if err != nil {
			return err
		}
		res, err := env.jobs.river.InsertTx(context.Background(), stx, args, &river.InsertOpts{Queue: river.QueueDefault})
		if err != nil {
			return err
		}
		id = res.Job.ID
		return markRunningTx(stx, env.db.Dialect, id, ago)
	})
	if err != nil {
		env.t.Fatalf("leave a job running: %v", err)
	}
	return id
}

// markRunning marks a job running, its attempt started ago.
func (env *testEnv) markRunning(jobID int64, ago time.Duration) {
	env.t.Helper()
	if err := markRunningTx(env.db.SQL, env.db.Dialect, jobID, ago); err != nil {
		env.t.Fatalf("mark job %d running: %v", jobID, err)
	}
}

func markRunningTx(ex interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, dialect models.Dialect, jobID int64, ago time.Duration) error {
	// River's SQLite driver stores times as text, "2006-01-02 15:04:05.000"
	// in UTC, and compares them as text.
	q := `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = strftime('%Y-%m-%d %H:%M:%f', 'now', ?) WHERE id = ?`
	arg := fmt.Sprintf("-%d seconds", int(ago.Seconds()))
	if dialect == models.Postgres {
		q = `UPDATE river_job SET state = 'running', attempt = 1, attempted_at = now() - make_interval(secs => $1) WHERE id = $2`
		_, err := ex.ExecContext(context.Background(), q, ago.Seconds(), jobID)
		return err
	}
	_, err := ex.ExecContext(context.Background(), q, arg, jobID)
	return err
}
