package runner

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"

	"github.com/batcheval/batcheval/models"
)

// Parking. A started River client costs CPU even with an empty queue: its
// job completer ticks every 50 ms (hard-coded), its producers poll, its
// elector renews leadership. When Config.IdleAfter is set, a worker that
// has had no job running and none due for that long stops its client
// (gracefully; River clients can be started again) and waits on something
// cheap instead:
//
//   - a Launch, Resume or hand-over through this runner, and a rescue by
//     its lease sweep (which keeps running), wake it at once (wakeUp);
//   - on PostgreSQL, River's insert notification, LISTENed for on one
//     connection of the pgx pool, wakes it when another process queues a
//     run in this runner's queue;
//   - on SQLite, a change of the wake file (wakefile.go) that another
//     process writes when it queues a run;
//   - a cheap indexed query (dueIn) as a backstop (missed notifications,
//     a process that queued without waking, retried or snoozed jobs coming
//     due) every PollInterval or half a lease, whichever is longer; every
//     PollInterval on SQLite when the wake file is not watched
//     (parkedPoll).

// parking is a runner's parking state.
type parking struct {
	// wake is signalled (never blocking) when work may exist: a job was
	// inserted or requeued by this process.
	wake chan struct{}
	// active counts the jobs this process is working.
	active atomic.Int64
	// idleSince is when the last job ended or work was last signalled
	// (unix nanoseconds): the idle time counts from there.
	idleSince atomic.Int64
	parked    atomic.Bool
	// stopping is set while the loop stops River's client to park: a job
	// River fetched in that moment (queued by another process just after
	// the last look) is handed back rather than worked, or the client's
	// graceful stop would wait for the whole run.
	stopping atomic.Bool
	stop     context.CancelFunc
	done     chan struct{}
	// afterStop, when set (tests), runs once River's client has stopped
	// and before the worker looks for work: a job queued there is one
	// queued while River was stopping.
	afterStop func()
	// beforeStart, when set (tests), runs before each restart of River's
	// client: a restart that hangs (a database that does not answer).
	beforeStart func()
	// swept is signalled (never blocking) after each look of the lease
	// sweep (sweepLoop): a parked worker whose look for due jobs is a
	// backstop looks then, in the sweep's wake-up, rather than on a timer
	// of its own at the same interval (parkedLooksWithSweep).
	swept chan struct{}
	// ownTimer, when set (BenchmarkIdleCPU's baseline), makes a parked
	// worker look on its own timer, as it did before it looked with the
	// sweep.
	ownTimer bool
	// looked, when set (tests), is called after each look of a parked
	// worker for due jobs.
	looked func()
	// due is dueIn's statement, prepared on first use: a parked worker
	// runs it every PollInterval, and SQLite's driver parses a statement
	// given as text every time.
	dueMu sync.Mutex
	due   *sql.Stmt
}

// Parked reports whether this worker has stopped its job client for lack
// of work (see Config.IdleAfter).
func (r *Runner) Parked() bool { return r.park.parked.Load() }

// wakeUp tells this process's worker that work was queued in its queue
// (wakeHere) and, when that is the shared queue, the workers of other
// processes on a SQLite file (wakeOthers, wakefile.go). Call it after the
// transaction that queued the work has committed.
func (r *Runner) wakeUp() {
	if !r.mailOnly() {
		// A mail-only process works no run: waking its River client
		// would only fetch nothing.
		r.wakeHere()
	}
	if r.cfg.Queue == river.QueueDefault {
		r.wakeOthers()
	}
}

// wakeShared is wakeUp for work queued in the shared queue by a runner
// that may have a private one (the command line's): only the workers of
// the shared queue are woken.
func (r *Runner) wakeShared() {
	if r.cfg.Queue == river.QueueDefault {
		r.wakeUp()
		return
	}
	r.wakeOthers()
}

// wakeMail is wakeShared for mail (MailQueue): this process's worker is
// woken as for the shared queue, and the processes on a SQLite file that
// work mail through mail's own wake file, which mail-only processes watch
// alone (wakefile.go).
func (r *Runner) wakeMail() {
	if r.cfg.Queue == river.QueueDefault {
		r.wakeHere()
	}
	r.wakeMailOthers()
}

// wakeHere tells a parked (or parking) worker of this process that work
// may exist, and an awake one's River producer to look for it now
// (fetchNow).
func (r *Runner) wakeHere() {
	r.fetchNow()
	r.park.idleSince.Store(time.Now().UnixNano())
	select {
	case r.park.wake <- struct{}{}:
	default: // a wake is already pending
	}
}

// jobStarted and jobEnded bracket each job this process works; jobStarted
// reports false when the worker is stopping its client to park, and the
// job must then be handed back (snoozed) instead of worked: the parked
// worker's look finds it due and wakes.
func (r *Runner) jobStarted() bool {
	r.park.active.Add(1)
	return !r.park.stopping.Load()
}

func (r *Runner) jobEnded() {
	// The time first, so a loop that sees no job active sees it too.
	r.park.idleSince.Store(time.Now().UnixNano())
	r.park.active.Add(-1)
}

// startParking starts the loop that parks and wakes River's client.
func (r *Runner) startParking(ctx context.Context) {
	if r.cfg.IdleAfter <= 0 {
		return
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.park.stop = cancel
	r.park.done = make(chan struct{})
	r.park.idleSince.Store(time.Now().UnixNano())
	go r.parkLoop(pctx)
}

// stopParking ends the parking loop and waits for it: afterwards River's
// client is the caller's to stop (it may be running, stopping, or
// stopped), and no listener connection is held. It waits no longer than
// ctx: a loop restarting River's client against a database that does not
// answer cannot hold up a shutdown past its deadline.
func (r *Runner) stopParking(ctx context.Context) {
	if r.park.stop == nil {
		return
	}
	r.park.stop()
	select {
	case <-r.park.done:
	case <-ctx.Done():
		r.log.Warn("stopping: the parking loop did not end in time; stopping the job client anyway")
	}
	r.setParked(false) // stopped now, but not for lack of work
}

func (r *Runner) parkLoop(ctx context.Context) {
	defer close(r.park.done)
	for {
		if !r.waitIdle(ctx) {
			return
		}
		r.log.Debug("parking: no run for a while; stopping the job client", "idle_after", r.cfg.IdleAfter)
		r.park.stopping.Store(true)
		err := r.river.Stop(ctx)
		r.park.stopping.Store(false)
		if err != nil {
			if ctx.Err() != nil {
				return // Stop or Kill takes it from here
			}
			r.log.Warn("parking: stop the job client", "err", err)
			continue
		}
		r.setParked(true)
		if r.park.afterStop != nil {
			r.park.afterStop()
		}
		if !r.waitParked(ctx) {
			return
		}
		if !r.unpark(ctx) {
			return
		}
	}
}

func (r *Runner) setParked(p bool) {
	r.park.parked.Store(p)
	v := 0.0
	if p {
		v = 1
	}
	r.metrics.parked.Set(v)
}

// waitIdle returns true once no job has run for IdleAfter and none is due,
// false when ctx ends.
func (r *Runner) waitIdle(ctx context.Context) bool {
	after := r.cfg.IdleAfter
	t := time.NewTimer(after)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-r.park.wake:
			// Work was queued: the timer reads idleSince, which wakeUp set.
			continue
		case <-t.C:
		}
		next := after
		if r.park.active.Load() == 0 {
			idle := time.Since(time.Unix(0, r.park.idleSince.Load()))
			if idle < after {
				next = after - idle
			} else {
				wait, any, err := r.dueIn(ctx)
				switch {
				case err != nil:
					if ctx.Err() != nil {
						return false
					}
					r.log.Warn("parking: look for due jobs", "err", err)
				case !any || wait > 0:
					return true
				}
			}
		}
		t.Reset(next)
	}
}

// waitParked waits, with River's client stopped, until work may exist
// (true) or ctx ends (false).
func (r *Runner) waitParked(ctx context.Context) bool {
	poll := r.parkedPoll()
	var notes <-chan string
	if r.db.Dialect == models.Postgres && r.db.Pool != nil {
		l, err := listenInserts(ctx, r.db.Pool)
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			// Still parked, looking as often as an idle River would.
			r.log.Warn("parking: listen for queued runs; polling instead", "err", err)
			poll = r.cfg.PollInterval
		} else {
			defer l.close()
			notes = l.notes
		}
	}
	// Forget wakes from before the client stopped: the look below, made
	// after it stopped and after LISTEN, sees every job committed before a
	// later wake. This is what keeps a job queued while River was stopping
	// from waiting for the next poll.
	select {
	case <-r.park.wake:
	default:
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		// The backstop look comes with the sweep's (one wake-up, not two);
		// the timer is then set only for a job seen coming due sooner.
		var swept <-chan struct{}
		if r.parkedLooksWithSweep(poll) {
			swept = r.park.swept
		}
		select {
		case <-ctx.Done():
			return false
		case <-swept:
		case <-r.park.wake:
			r.log.Debug("waking: work queued by this process")
			return true
		case payload, ok := <-notes:
			if !ok {
				r.log.Warn("parking: lost the notification connection; polling instead")
				notes, poll = nil, r.cfg.PollInterval
				break
			}
			if r.insertedInOurQueue(payload) {
				r.log.Debug("waking: a run was queued by another process")
				return true
			}
			continue // another queue's job: keep the timer as it is
		case <-t.C:
		}
		wait, any, err := r.dueIn(ctx)
		if r.park.looked != nil {
			r.park.looked()
		}
		next := poll
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return false
			}
			r.log.Warn("parking: look for due jobs", "err", err)
		case any && wait <= 0:
			r.log.Debug("waking: a job is due")
			return true
		case any && wait < next:
			next = wait
		}
		if next < poll || !r.parkedLooksWithSweep(poll) {
			t.Reset(next)
		} else {
			t.Stop()
		}
	}
}

// parkedLooksWithSweep says whether a parked worker that looks for due
// jobs every poll makes its look right after each of the lease sweep's
// (every idleSweepInterval while no run is running, more often while one
// is) instead of on a timer of its own: when the sweep runs (a working
// runner's) and looks at least as often. Two timers of 5 s woke the
// parked SQLite worker's process twice every 5 s, most of its idle CPU
// (BenchmarkIdleCPU/sqlite-parked); a worker that must look more often
// than the sweep (SQLite without its wake file, every PollInterval)
// keeps its own timer.
func (r *Runner) parkedLooksWithSweep(poll time.Duration) bool {
	return r.park.swept != nil && r.sweepDone != nil && !r.park.ownTimer && poll >= idleSweepInterval(r.cfg.LeaseTTL)
}

// unpark starts River's client again, retrying every PollInterval while
// the database refuses; false when ctx ended first.
func (r *Runner) unpark(ctx context.Context) bool {
	for {
		if r.park.beforeStart != nil {
			r.park.beforeStart()
		}
		if ctx.Err() != nil {
			return false // stopped while waking: the client stays stopped
		}
		err := r.startRiver()
		if err == nil {
			r.park.idleSince.Store(time.Now().UnixNano())
			r.setParked(false)
			return true
		}
		r.log.Warn("waking: start the job client", "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(r.cfg.PollInterval):
		}
	}
}

// parkedPoll is how often a parked worker looks for due jobs. Where
// another process's run wakes it (River's insert notification on
// PostgreSQL, the wake file it watches on SQLite), only as a backstop, as
// often as the idle lease sweep looks (5 s by default): for a process that
// queues without waking it (one that cannot write the wake file, a build
// older than the wake file), and for the jobs its look has seen coming due
// it sets its timer to their time. Otherwise (SQLite without the watch:
// no inotify, none of the user's instances left, a folder it cannot make
// the file in) every PollInterval, which then bounds how soon another
// process's run starts.
func (r *Runner) parkedPoll() time.Duration {
	if (r.db.Dialect == models.Postgres && r.db.Pool != nil) || r.wake.watched.Load() {
		return max(r.cfg.PollInterval, idleSweepInterval(r.cfg.LeaseTTL))
	}
	return r.cfg.PollInterval
}

// dueIn says whether this runner's queue holds a job that is or will be
// available, or a webhook delivery left running by a dead process (any),
// and how long until the first is due (<= 0: now). One query on River's
// fetch index (state, queue, priority, scheduled_at, id): the available
// jobs are answered from the index, the running ones (a few) read their
// rows; the database's clock decides, as it does for River's own fetches.
// A delivery left running keeps the worker from parking, or wakes it, until
// its client's rescuer has made it retryable.
func (r *Runner) dueIn(ctx context.Context) (wait time.Duration, any bool, err error) {
	q := dueInSQLite
	if r.db.Dialect == models.Postgres {
		q = dueInPostgres
	}
	r.park.dueMu.Lock()
	if r.park.due == nil {
		st, err := r.db.SQL.PrepareContext(ctx, q)
		if err != nil {
			r.park.dueMu.Unlock()
			return 0, false, fmt.Errorf("look for due jobs in queue %q: %w", r.cfg.Queue, err)
		}
		r.park.due = st
	}
	st := r.park.due
	r.park.dueMu.Unlock()
	var secs *float64
	queue, mailQueue := r.cfg.Queue, r.cfg.Queue
	if r.worksMail() {
		mailQueue = MailQueue
	}
	if r.mailOnly() {
		// Runs and webhook deliveries are not this process's to wake for.
		queue = MailQueue
	}
	if err := st.QueryRowContext(ctx, queue, r.webhookRescueWait().Seconds(), mailQueue).Scan(&secs); err != nil {
		return 0, false, fmt.Errorf("look for due jobs in queue %q: %w", r.cfg.Queue, err)
	}
	if secs == nil {
		return 0, false, nil
	}
	return time.Duration(*secs * float64(time.Second)), true, nil
}

// The queries of dueIn: seconds until the earliest job of a queue that is
// or will be available (scheduled: snoozed; retryable: waiting for its
// retry), NULL when there is none; or until a webhook delivery still
// marked running (its process died during the attempt) is due for River's
// rescuer, which runs only in a started client. River's SQLite driver
// stores times as "2006-01-02 15:04:05.000" in UTC, which julianday reads.
// The first parameter is the queue, the second the rescue wait in seconds
// (webhookRescueWait), the third MailQueue when this process works it (the
// first again otherwise).
const (
	dueInSQLite = `SELECT MIN(d) * 86400.0 FROM (
		SELECT julianday(MIN(scheduled_at)) - julianday('now') AS d FROM river_job
			WHERE state IN ('available', 'scheduled', 'retryable') AND queue IN (?1, ?3)
		UNION ALL
		SELECT julianday(MIN(attempted_at)) + ?2 / 86400.0 - julianday('now') FROM river_job
			WHERE state = 'running' AND queue = ?1 AND kind = '` + webhookKind + `')`
	dueInPostgres = `SELECT EXTRACT(EPOCH FROM LEAST(
		(SELECT MIN(scheduled_at) FROM river_job WHERE state IN ('available', 'scheduled', 'retryable') AND queue IN ($1, $3)),
		(SELECT MIN(attempted_at) FROM river_job WHERE state = 'running' AND queue = $1 AND kind = '` + webhookKind + `')
			+ make_interval(secs => $2)) - now())::float8`
)

// webhookKind is WebhookArgs' Kind, for the queries above.
const webhookKind = "batcheval_webhook"

// webhookRescueWait is how long after its attempt started a webhook
// delivery still marked running is rescued: River's rescuer waits for
// both RescueAfter and the worker's own Timeout.
func (r *Runner) webhookRescueWait() time.Duration {
	return max(r.cfg.RescueAfter, r.cfg.Webhooks.withDefaults().attemptTime())
}

// insertTopic is River's insert notification channel (River v0.51.2,
// notifier.NotificationTopicInsert), sent as "<schema>.river_insert" with
// the inserting connection's current_schema() (no River schema is
// configured), in the inserting transaction, whenever a job is inserted
// available and the driver supports LISTEN/NOTIFY. The database/sql driver
// driverFor builds does, listener or not, so an insert-only `serve`
// notifies too.
const insertTopic = "river_insert"

// insertedInOurQueue reads an insert notification's payload, {"queue":
// "..."}; one it cannot read wakes the worker (a spurious wake only costs a
// start of the client).
func (r *Runner) insertedInOurQueue(payload string) bool {
	var p struct {
		Queue string `json:"queue"`
	}
	if err := json.Unmarshal([]byte(payload), &p); err != nil || p.Queue == "" {
		return true
	}
	if p.Queue == MailQueue {
		return r.worksMail()
	}
	return p.Queue == r.cfg.Queue && !r.mailOnly()
}

// insertListener holds one pool connection LISTENing for River's insert
// notifications while the worker is parked.
type insertListener struct {
	conn   *pgxpool.Conn
	notes  chan string // payloads; closed when the connection fails
	cancel context.CancelFunc
	done   chan struct{}
}

func listenInserts(ctx context.Context, pool *pgxpool.Pool) (*insertListener, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire a connection: %w", err)
	}
	// On an error (ctx ending included: Stop while parking) the LISTEN
	// may have run all the same, so the connection is closed, not put
	// back in the pool with a subscription.
	discard := func() {
		_ = conn.Conn().Close(context.Background())
		conn.Release()
	}
	var schema string
	if err := conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		discard()
		return nil, fmt.Errorf("read the current schema: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{schema + "." + insertTopic}.Sanitize()); err != nil {
		discard()
		return nil, fmt.Errorf("listen: %w", err)
	}
	lctx, cancel := context.WithCancel(ctx)
	l := &insertListener{conn: conn, notes: make(chan string), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer close(l.notes)
		for {
			n, err := conn.Conn().WaitForNotification(lctx)
			if err != nil {
				return
			}
			select {
			case l.notes <- n.Payload:
			case <-lctx.Done():
				return
			}
		}
	}()
	return l, nil
}

// close stops listening and gives the connection back to the pool, or
// closes it when it cannot be cleaned (a LISTEN must not outlive parking
// on a pooled connection: its notifications would pile up there).
func (l *insertListener) close() {
	l.cancel()
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, "UNLISTEN *"); err != nil {
		_ = l.conn.Conn().Close(ctx)
	}
	l.conn.Release()
}
