package runner

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/internal/mail/mailtest"
	"github.com/batcheval/batcheval/models"
)

// TestMailAgainDuringAnAttempt: a link's mail is asked for again
// (MailAgain, as "Send the confirmation mail again" does) while its job's
// attempt is under way, the SMTP server holding the connection. When that
// attempt fails ("try later"), the mail is tried again at once and
// delivered, though the retry wait is a minute (before: the request was
// forgotten, and the mail waited the minute); when it succeeds, the mail is
// delivered once and nothing is left to send it again; when it was the
// job's last attempt, a new job sends the mail at once (before: given up).
// In all, the resend request is gone once the attempt is over.
func TestMailAgainDuringAnAttempt(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		for i, c := range []struct {
			name      string
			fails     bool
			max       int // the mail's attempts (MailAttempts)
			tries     int
			attempts  int
			wantState rivertype.JobState
		}{
			{"the attempt fails", true, 3, 2, 2, rivertype.JobStateCompleted},
			{"the attempt succeeds", false, 3, 1, 1, rivertype.JobStateCompleted},
			// The job ends with its last attempt: a job of its own sends
			// the mail asked for.
			{"the last attempt fails", true, 1, 2, 1, rivertype.JobStateDiscarded},
		} {
			t.Run(c.name, func(t *testing.T) {
				smtpd := mailtest.Start(t)
				held, release := smtpd.Hold()
				t.Cleanup(release)
				if c.fails {
					smtpd.Refuse("421 4.3.2 service shutting down, try later")
				}
				r := env.startRunner(Config{PollInterval: 20 * time.Millisecond, MailBackoff: time.Minute, MailAttempts: c.max},
					func(r *Runner) {
						if err := r.SetMail(mailTo(t, smtpd)); err != nil {
							t.Fatal(err)
						}
					})
				t.Cleanup(func() {
					// The next case's mail is for its own worker.
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_ = r.Stop(ctx)
				})
				to := []string{"fay@company.com", "gus@company.com", "hal@company.com"}[i]
				job := env.queueReset(r, to)
				select {
				case <-held:
				case <-time.After(10 * time.Second):
					t.Fatal("the mail's attempt did not reach the SMTP server")
				}
				if j := env.job(job.ID); j.State != rivertype.JobStateRunning {
					t.Fatalf("the mail job is %s during its attempt, want running", j.State)
				}
				var args MailArgs
				if err := json.Unmarshal(job.EncodedArgs, &args); err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				tx, err := env.db.SQL.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := r.MailAgain(models.LinkReset, args.Base)(ctx, tx, args.ID); err != nil {
					_ = tx.Rollback()
					t.Fatal(err)
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
				r.MailQueued()
				release()
				msgs := smtpd.Wait(t, 1)
				if msgs[0].To[0] != to || msgs[0].Link("/reset/") == "" {
					t.Fatalf("mail = %+v", msgs[0])
				}
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				if err := r.WaitMail(wctx); err != nil {
					t.Fatalf("a mail job is still queued: %v", err)
				}
				j := env.job(job.ID)
				if j.State != c.wantState || j.Attempt != c.attempts {
					t.Errorf("mail job %s after %d attempts, want %s after %d", j.State, j.Attempt, c.wantState, c.attempts)
				}
				if n, tries := len(smtpd.Messages()), smtpd.Tries(); n != 1 || tries != c.tries {
					t.Errorf("%d mails delivered in %d tries, want 1 in %d", n, tries, c.tries)
				}
				// Delivered: no problem is shown for the link any more.
				var problem string
				if err := env.db.Gorm.Raw(`SELECT mail_problem FROM password_resets WHERE id = ?`, args.ID).Scan(&problem).Error; err != nil {
					t.Fatal(err)
				}
				if problem != "" {
					t.Errorf("the delivered mail's link still shows the problem %q", problem)
				}
				var left int
				if err := env.db.SQL.QueryRow(`SELECT COUNT(*) FROM mail_resend_requests`).Scan(&left); err != nil {
					t.Fatal(err)
				}
				if left != 0 {
					t.Errorf("%d resend requests left after the mail went out", left)
				}
			})
		}
	})
}
