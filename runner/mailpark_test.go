package runner

import (
	"context"
	"testing"
	"time"

	"github.com/batcheval/batcheval/internal/mail/mailtest"
	"github.com/batcheval/batcheval/models"
)

// startMailOnly starts a mail-only runner (`serve --no-worker` with the
// SMTP settings) that parks after idleAfter. Its lease of two minutes
// makes a parked process's backstop look for due jobs a minute apart,
// far past mailtest's wait: a mail that arrives came by a wake.
func (env *testEnv) startMailOnly(t *testing.T, smtpd *mailtest.Server, idleAfter time.Duration, setup ...func(*Runner)) *Runner {
	t.Helper()
	r, err := New(Config{DB: env.db, Log: testLog(), WorkMail: true, IdleAfter: idleAfter,
		PollInterval: 20 * time.Millisecond, LeaseTTL: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetMail(mailTo(t, smtpd)); err != nil {
		t.Fatal(err)
	}
	for _, f := range setup {
		f(r)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Stop(ctx); err != nil {
			t.Errorf("stop the mail-only runner: %v", err)
		}
	})
	return r
}

// TestMailOnlyParks: a mail-only process with nothing to send parks
// (stops River's client, which polled every second for ever: about 7 ms
// of CPU a second, BenchmarkIdleCPU/*-mail-only), and a mail queued while
// it is parked is still sent, whether queued by this process (a page of
// `serve --no-worker`) or by another one (the wake file on SQLite,
// River's insert notification on PostgreSQL); then it parks again. A run
// queued by a worker's process or by this one does not wake it, on
// SQLite (mail's own wake file) as on PostgreSQL.
func TestMailOnlyParks(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		for i, c := range []struct {
			name  string
			other bool
		}{{"queued here", false}, {"queued by another process", true}} {
			t.Run(c.name, func(t *testing.T) {
				smtpd := mailtest.Start(t)
				r := env.startMailOnly(t, smtpd, idleAfter)
				if env.db.Dialect == models.SQLite && !r.wake.watched.Load() {
					t.Fatal("the mail-only process does not watch the wake file")
				}
				waitParked(t, r, true, 10*time.Second)
				from := r
				if c.other {
					from = env.jobs
				}
				to := []string{"ann@company.com", "bob@company.com"}[i]
				job := env.queueReset(from, to)
				msgs := smtpd.Wait(t, 1)
				if msgs[0].To[0] != to || msgs[0].Link("/reset/") == "" {
					t.Fatalf("mail = %+v", msgs[0])
				}
				if j := env.job(job.ID); j.Attempt != 1 {
					t.Fatalf("mail job attempts = %d, want 1", j.Attempt)
				}
				waitParked(t, r, true, 10*time.Second)
			})
		}
		// A run queued by a worker's process, or by this one (a page of
		// `serve --no-worker`), is not the mail-only process's to work:
		// it stays parked. On SQLite mail has a wake file of its own,
		// which alone it watches; before, the one wake file of every
		// queue woke it for each run queued on the database.
		for _, c := range []struct {
			name string
			here bool
		}{{"a run queued elsewhere does not wake it", false}, {"a run queued here does not wake it", true}} {
			to := []string{"cy@company.com", "di@company.com"}[map[bool]int{false: 0, true: 1}[c.here]]
			t.Run(c.name, func(t *testing.T) {
				smtpd := mailtest.Start(t)
				woke := make(chan struct{}, 1)
				r := env.startMailOnly(t, smtpd, idleAfter, func(r *Runner) {
					r.park.beforeStart = func() {
						select {
						case woke <- struct{}{}:
						default:
						}
					}
				})
				waitParked(t, r, true, 10*time.Second)
				from := env.jobs
				if c.here {
					from = r
				}
				env.launch(from, env.newRun("http://127.0.0.1:1", 1, 1, 5))
				select {
				case <-woke:
					t.Fatal("a run queued for the workers woke the mail-only process")
				case <-time.After(500 * time.Millisecond):
				}
				// Mail queued by the other process still wakes it, at once.
				job := env.queueReset(env.jobs, to)
				if msgs := smtpd.Wait(t, 1); msgs[0].To[0] != to {
					t.Fatalf("mail = %+v", msgs[0])
				}
				if j := env.job(job.ID); j.Attempt != 1 {
					t.Fatalf("mail job attempts = %d, want 1", j.Attempt)
				}
			})
		}
	})
}

// TestParkedWorkerWakesForMail: a parked worker with the mail settings is
// woken by mail another process queues (through mail's wake file on
// SQLite, which a worker watches beside the runs' one; River's insert
// notification on PostgreSQL) and sends it at once: its lease of two
// minutes puts its backstop look a minute away.
func TestParkedWorkerWakesForMail(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		smtpd := mailtest.Start(t)
		r := env.startRunner(Config{IdleAfter: idleAfter, PollInterval: 20 * time.Millisecond, LeaseTTL: 2 * time.Minute},
			func(r *Runner) {
				if err := r.SetMail(mailTo(t, smtpd)); err != nil {
					t.Fatal(err)
				}
			})
		waitParked(t, r, true, 10*time.Second)
		job := env.queueReset(env.jobs, "eve@company.com")
		if msgs := smtpd.Wait(t, 1); msgs[0].To[0] != "eve@company.com" {
			t.Fatalf("mail = %+v", msgs[0])
		}
		if j := env.job(job.ID); j.Attempt != 1 {
			t.Fatalf("mail job attempts = %d, want 1", j.Attempt)
		}
	})
}
