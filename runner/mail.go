package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/internal/mail"
	"github.com/batcheval/batcheval/models"
)

// Mail (invite, password reset and address confirmation links) is sent by
// a durable job on a queue of its own (MailQueue), so the page that asks for it answers
// at once, however slow the SMTP server, and a mail the server would not
// take now is tried again with growing waits (a 4xx answer, a server
// down or refusing connections), across restarts, until it is delivered,
// refused for good (5xx: the reason is recorded) or MailAttempts are used.
//
// The job holds the kind and id of the link's row, never its token: the
// token is made when the job runs and only its hash is stored
// (models.RemintLink), as for every link; a link mailed by an earlier
// attempt keeps working (models.MailedToken), since a failed attempt may
// have been delivered all the same.

const mailKind = "batcheval_mail"

// MailQueue is the queue mail jobs wait in. Only a process that has the
// SMTP settings (SetMail) works it, with Config.MailWorkers workers of its
// own: a busy worker's runs never delay a mail, a storm of mail retries
// never takes a run's slot, and a worker without the settings never takes
// a mail it cannot send.
const MailQueue = "batcheval_mail"

// DefaultMailWorkers is how many mails one process sends at once.
const DefaultMailWorkers = 2

// LinkForgot is the MailArgs.Link of a "Forgot password?" request: the job
// makes a reset link if the address has a confirmed account, and queues
// its mail; otherwise nothing happens. The page answers the same either
// way, at once.
const LinkForgot = "forgot"

// MailArgs is the job that mails one link.
type MailArgs struct {
	// Link is models.LinkInvite, LinkReset, LinkConfirm or LinkForgot.
	Link string `json:"link"`
	// ID is the link's row (invites, password_resets, email_confirmations).
	ID int64 `json:"id,omitempty"`
	// Base is the server's address the link starts with
	// ("https://batcheval.example.com"), as the page that asked saw it.
	Base string `json:"base"`
	// Email and From are a LinkForgot request's address and the client
	// address it came from (for the audit log).
	Email string `json:"email,omitempty"`
	From  string `json:"from,omitempty"`
	// Again marks a job queued for a mail asked for again during its
	// previous job's last attempt, which failed: its first attempt records
	// its outcome even when delivered, clearing that failure.
	Again bool `json:"again,omitempty"`
}

// Kind is the stable job name stored in River's table.
func (MailArgs) Kind() string { return mailKind }

// DefaultMailAttempts is how many times a mail is tried: with the
// default backoff (30 s, doubling, at most an hour) the last is about
// four hours after the first.
const DefaultMailAttempts = 10

// mailAttemptTime bounds one attempt's dialogue with the SMTP server.
const mailAttemptTime = 30 * time.Second

// maxMailBackoff bounds the wait between two attempts.
const maxMailBackoff = time.Hour

// mailSender holds the SMTP server jobs send through (SetMail), and
// whether this process works MailQueue.
type mailSender struct {
	s  atomic.Pointer[mail.Sender]
	mu sync.Mutex
	on bool
	// started: a mail-only process's client is running (startMailOnly).
	started atomic.Bool
	// retryNow holds the ids of jobs whose failed attempt is tried again
	// at once (a resend was asked during it): Work stores, NextRetry takes.
	retryNow sync.Map
}

// SetMail gives this process's workers the SMTP server mail jobs are sent
// through, and makes them work MailQueue (nil: none; mail jobs then wait
// for a process that has one, and a process never given one does not
// look at them).
func (r *Runner) SetMail(s mail.Sender) error {
	if s == nil {
		r.mail.s.Store(nil)
		return nil
	}
	r.mail.s.Store(&s)
	if !r.cfg.Work && !r.cfg.WorkMail {
		return nil
	}
	r.mail.mu.Lock()
	defer r.mail.mu.Unlock()
	if r.mail.on {
		return nil
	}
	if r.cfg.Work {
		// A mail-only client has the queue from the start (New).
		if err := r.river.Queues().Add(MailQueue, river.QueueConfig{MaxWorkers: mailWorkers(r.cfg)}); err != nil {
			return fmt.Errorf("work the mail queue: %w", err)
		}
	}
	r.mail.on = true
	return nil
}

// mailWorkers is how many mails a process of cfg sends at once.
func mailWorkers(cfg Config) int {
	if cfg.MailWorkers <= 0 {
		return DefaultMailWorkers
	}
	return cfg.MailWorkers
}

// startMailOnly starts a mail-only process's client (Config.WorkMail)
// once SetMail gave it a sender; nothing for an insert-only one.
func (r *Runner) startMailOnly(ctx context.Context) error {
	if !r.cfg.WorkMail || !r.worksMail() {
		return nil
	}
	r.riverCtx = context.WithoutCancel(ctx)
	if err := r.startRiver(); err != nil {
		return fmt.Errorf("start the mail workers: %w", err)
	}
	r.mail.started.Store(true)
	// Idle, it parks as a worker does (park.go), woken by mail queued here,
	// by the wake file on SQLite and by River's insert notification on
	// PostgreSQL: a started River client costs about 7 ms of CPU a second
	// with nothing to send.
	r.watchWakeFile()
	r.startParking(ctx)
	return nil
}

// mailOnly reports whether this process works the mail queue and nothing
// else (Config.WorkMail): its parking looks at MailQueue only.
func (r *Runner) mailOnly() bool { return !r.cfg.Work && r.cfg.WorkMail }

// stopMailOnly stops a mail-only process's client: a mail being sent is
// awaited until ctx ends, then cancelled (it is tried again later; a
// link mailed twice still works, see models.MailedToken).
func (r *Runner) stopMailOnly(ctx context.Context) error {
	if !r.mail.started.Load() {
		return nil
	}
	// The client is ours from here, as in Stop.
	r.stopWatchingWakeFile()
	r.stopParking(ctx)
	err := r.river.Stop(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		err = r.river.StopAndCancel(context.Background())
	}
	return err
}

// worksMail reports whether this process works MailQueue.
func (r *Runner) worksMail() bool {
	r.mail.mu.Lock()
	defer r.mail.mu.Unlock()
	return r.mail.on
}

func (r *Runner) mailer() mail.Sender {
	if p := r.mail.s.Load(); p != nil {
		return *p
	}
	return nil
}

// QueueMail queues the mail of one link; a worker sends it.
func (r *Runner) QueueMail(ctx context.Context, a MailArgs) error {
	if _, err := r.river.Insert(ctx, a, r.mailOpts()); err != nil {
		return fmt.Errorf("queue the mail: %w", err)
	}
	r.wakeMail()
	return nil
}

// MailQueue returns what queues the mail of a link of kind
// (models.LinkInvite, LinkReset, LinkConfirm) in the transaction that
// makes its row; call MailQueued once that transaction has committed.
func (r *Runner) MailQueue(kind, base string) models.QueueLinkMail {
	return func(ctx context.Context, tx *sql.Tx, id int64) error {
		_, err := r.river.InsertTx(ctx, tx, MailArgs{Link: kind, ID: id, Base: base}, r.mailOpts())
		return err
	}
}

// MailAgain is MailQueue for a link whose mail is asked for again (an
// invite answer's confirmation, resent by an owner after its mail failed):
// a mail job of the same link still waiting for its next attempt is made
// due now instead of a second job being queued. One being attempted at
// this moment is left to its attempt, and the request is kept
// (mail_resend_requests): if that attempt fails, its next one is made at
// once (mailWorker.NextRetry) rather than after the retry wait. Before, a
// resend while the first mail was still being retried queued a second
// job, and both were delivered once the server took mail again; and a
// resend during a failing attempt was forgotten, the mail waiting the
// whole retry wait (30 s at first, up to an hour) as if nobody had asked.
func (r *Runner) MailAgain(kind, base string) models.QueueLinkMail {
	queue := r.MailQueue(kind, base)
	return func(ctx context.Context, tx *sql.Tx, id int64) error {
		q, ask := pendingMailSQLite, askResendSQLite
		if r.db.Dialect == models.Postgres {
			q, ask = pendingMailPostgres, askResendPostgres
		}
		rows, err := tx.QueryContext(ctx, q, mailKind, kind, id)
		if err != nil {
			return fmt.Errorf("look for the link's mail still queued: %w", err)
		}
		type job struct {
			id    int64
			state string
		}
		var pending []job
		for rows.Next() {
			var j job
			if err := rows.Scan(&j.id, &j.state); err != nil {
				rows.Close()
				return fmt.Errorf("look for the link's mail still queued: %w", err)
			}
			pending = append(pending, j)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return fmt.Errorf("look for the link's mail still queued: %w", err)
		}
		if len(pending) == 0 {
			return queue(ctx, tx, id)
		}
		for _, j := range pending {
			if j.state == string(rivertype.JobStateRunning) {
				// River leaves a running job as it is: its attempt is
				// told, should it fail, to try again now.
				if _, err := tx.ExecContext(ctx, ask, j.id, time.Now().UTC()); err != nil {
					return fmt.Errorf("ask the link's mail under way to be sent again: %w", err)
				}
				continue
			}
			// Any other is made due now (its attempts so far still count).
			if _, err := r.river.JobRetryTx(ctx, tx, j.id); err != nil {
				return fmt.Errorf("send the link's queued mail now: %w", err)
			}
		}
		return nil
	}
}

// The queries of MailAgain: the mail jobs of one link (kind, link and id)
// not yet finished, and a resend asked of one under way. River's SQLite
// driver stores args as JSONB, which json_extract reads.
const (
	pendingMailSQLite = `SELECT id, state FROM river_job WHERE kind = ?1
		AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
		AND json_extract(args, '$.link') = ?2 AND json_extract(args, '$.id') = ?3 ORDER BY id`
	pendingMailPostgres = `SELECT id, state FROM river_job WHERE kind = $1
		AND state IN ('available', 'pending', 'retryable', 'running', 'scheduled')
		AND args->>'link' = $2 AND (args->>'id')::bigint = $3 ORDER BY id`
	askResendSQLite   = `INSERT INTO mail_resend_requests (job_id, asked_at) VALUES (?1, ?2) ON CONFLICT (job_id) DO NOTHING`
	askResendPostgres = `INSERT INTO mail_resend_requests (job_id, asked_at) VALUES ($1, $2) ON CONFLICT (job_id) DO NOTHING`
)

// resendRequestLife is how long a resend request whose attempt ended as
// it was made (and so never read) is kept before an attempt drops it.
const resendRequestLife = 24 * time.Hour

// dropResendRequests drops the resend requests of the job starting an
// attempt (the attempt is the mail asked for) and any older than
// resendRequestLife. A failure is logged: at worst a failed attempt is
// tried again at once once more.
func (r *Runner) dropResendRequests(ctx context.Context, jobID int64) {
	q := `DELETE FROM mail_resend_requests WHERE job_id = ?1 OR asked_at < ?2`
	if r.db.Dialect == models.Postgres {
		q = `DELETE FROM mail_resend_requests WHERE job_id = $1 OR asked_at < $2`
	}
	if _, err := r.db.SQL.ExecContext(ctx, q, jobID, time.Now().Add(-resendRequestLife).UTC()); err != nil {
		r.log.Warn("mail: drop the resend requests an attempt answers", "job", jobID, "err", err)
	}
}

// takeResendRequest reports whether a resend of the job's mail was asked
// during its attempt, and drops the request.
func (r *Runner) takeResendRequest(ctx context.Context, jobID int64) bool {
	q := `DELETE FROM mail_resend_requests WHERE job_id = ?1`
	if r.db.Dialect == models.Postgres {
		q = `DELETE FROM mail_resend_requests WHERE job_id = $1`
	}
	res, err := r.db.SQL.ExecContext(ctx, q, jobID)
	if err != nil {
		r.log.Warn("mail: read whether the mail was asked for again", "job", jobID, "err", err)
		return false
	}
	n, err := res.RowsAffected()
	return err == nil && n > 0
}

// MailQueued wakes the workers for mail queued in a transaction (on
// SQLite River wakes none for it; it would wait for the next poll).
func (r *Runner) MailQueued() { r.wakeMail() }

func (r *Runner) mailOpts() *river.InsertOpts {
	n := r.cfg.MailAttempts
	if n <= 0 {
		n = DefaultMailAttempts
	}
	return &river.InsertOpts{Queue: MailQueue, MaxAttempts: n}
}

// mailRetryWait is the wait after the attempt-th attempt failed.
func (r *Runner) mailRetryWait(attempt int) time.Duration {
	d := r.cfg.MailBackoff
	if d <= 0 {
		d = 30 * time.Second
	}
	for i := 1; i < attempt && d < maxMailBackoff; i++ {
		d *= 2
	}
	return min(d, maxMailBackoff)
}

// WaitMail waits until no mail job is queued, waiting for a retry or under
// way (tests), or ctx ends.
func (r *Runner) WaitMail(ctx context.Context) error {
	params := river.NewJobListParams().Kinds(mailKind).First(1).States(rivertype.JobStateAvailable,
		rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled, rivertype.JobStatePending)
	for {
		res, err := r.river.JobList(ctx, params)
		if err == nil && len(res.Jobs) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

type mailWorker struct {
	river.WorkerDefaults[MailArgs]
	r *Runner
}

// Timeout bounds an attempt (and tells River's rescuer when a job still
// marked running was left by a process that died).
func (w *mailWorker) Timeout(*river.Job[MailArgs]) time.Duration {
	return mailAttemptTime + 15*time.Second
}

// NextRetry waits MailBackoff after the first failed attempt, doubling
// after each; none after an attempt during which the mail was asked for
// again (MailAgain): its owner is waiting for it.
func (w *mailWorker) NextRetry(job *river.Job[MailArgs]) time.Time {
	if _, now := w.r.mail.retryNow.LoadAndDelete(job.ID); now {
		return time.Now()
	}
	return time.Now().Add(w.r.mailRetryWait(job.Attempt))
}

// Work makes one attempt at mailing the link.
func (w *mailWorker) Work(ctx context.Context, job *river.Job[MailArgs]) error {
	r := w.r
	started := r.jobStarted()
	defer r.jobEnded()
	if !started {
		return river.JobSnooze(time.Second)
	}
	sender := r.mailer()
	if sender == nil {
		// The sender was taken away (SetMail(nil), tests): left for a
		// process that has one (a snooze uses no attempt).
		return river.JobSnooze(time.Minute)
	}
	a := job.Args
	if a.Link == LinkForgot {
		_, err := r.db.RequestOwnReset(ctx, a.Email, a.From, func(ctx context.Context, tx *sql.Tx, resetID int64) error {
			_, err := r.river.InsertTx(ctx, tx, MailArgs{Link: models.LinkReset, ID: resetID, Base: a.Base}, r.mailOpts())
			return err
		})
		if err == nil {
			r.wakeMail()
		}
		return err
	}
	// This attempt is the mail asked for by any resend before it.
	r.dropResendRequests(ctx, job.ID)
	// An attempt before this one may have been delivered though it
	// failed (the server's reply after the message was lost): its link
	// keeps working.
	l, ok, err := r.db.RemintLink(ctx, a.Link, a.ID, job.Attempt > 1)
	if err != nil {
		return err
	}
	if !ok {
		return nil // the link was used, revoked or has expired since
	}
	var msg mail.Message
	link := a.Base + l.Path
	switch l.Kind {
	case models.LinkInvite:
		msg = mail.Invite(l.Workspace, l.Role, l.Inviter, link)
	case models.LinkReset:
		msg = mail.Reset(l.Name, link)
	case models.LinkConfirm:
		msg = mail.Confirm(l.To, l.Workspace, link)
	}
	sctx, cancel := context.WithTimeout(ctx, mailAttemptTime)
	err = sender.Send(sctx, l.To, msg)
	cancel()
	problem, permanent, requeue := "", false, false
	switch {
	case err == nil:
		// A resend asked during this attempt is answered by it.
		r.takeResendRequest(context.WithoutCancel(ctx), job.ID)
	case mail.Permanent(err):
		permanent = true
		problem = fmt.Sprintf("%v (refused for good: not tried again)", err)
	case job.Attempt >= job.MaxAttempts:
		problem = fmt.Sprintf("%v (gave up after %d attempts)", err, job.Attempt)
		if requeue = r.takeResendRequest(context.WithoutCancel(ctx), job.ID); requeue {
			// Asked for again during the last attempt: a job of its own,
			// with attempts of its own, sends it (below; this one ends).
			problem = fmt.Sprintf("%v (attempt %d of %d; sent again on request: trying again now)", err, job.Attempt, job.MaxAttempts)
		}
	case r.takeResendRequest(context.WithoutCancel(ctx), job.ID):
		// Asked for again while this attempt was under way: NextRetry
		// (called by River in this process once Work returns) makes the
		// next attempt due now.
		r.mail.retryNow.Store(job.ID, struct{}{})
		problem = fmt.Sprintf("%v (attempt %d of %d; sent again on request: trying again now)", err, job.Attempt, job.MaxAttempts)
	default:
		next := time.Now().Add(r.mailRetryWait(job.Attempt)).UTC()
		problem = fmt.Sprintf("%v (attempt %d of %d; trying again at %s)", err, job.Attempt, job.MaxAttempts, next.Format("15:04:05 UTC"))
	}
	if err != nil {
		r.log.Warn("mail not delivered", "link", l.Kind, "id", a.ID, "to", l.To, "problem", problem)
	}
	if err != nil || job.Attempt > 1 || a.Again {
		// Recorded (and shown: Members for invites and members, the
		// account's page, admin list-users) even when the attempt used
		// the job's time up.
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if rerr := r.db.RecordLinkMail(rctx, l.Kind, a.ID, problem); rerr != nil {
			r.log.Warn("mail: record the link's mail problem", "link", l.Kind, "id", a.ID, "err", rerr)
		}
		rcancel()
	}
	if requeue {
		// After the record, so the new job's own outcome is the last one.
		again := MailArgs{Link: a.Link, ID: a.ID, Base: a.Base, Again: true}
		if qerr := r.QueueMail(context.WithoutCancel(ctx), again); qerr != nil {
			r.log.Warn("mail: queue the mail asked for again", "link", a.Link, "id", a.ID, "err", qerr)
		}
	}
	switch {
	case err == nil:
		return nil
	case permanent:
		return river.JobCancel(errors.New(problem))
	}
	return errors.New(problem)
}
