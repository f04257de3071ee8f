// Package runner executes evaluation runs as durable background jobs on
// River, sharing the product's database. It owns the run loop: compose a
// round's batches, store them, send each batch to the judge, and store every
// answer the moment it returns, so a crash or restart never re-sends a
// batch that already has an answer.
package runner

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// RunArgs is the job that executes one run.
type RunArgs struct {
	RunID int64 `json:"run_id"`
}

// Kind is the stable job name stored in River's table.
func (RunArgs) Kind() string { return "batcheval_run" }

// Config holds what a Runner needs.
type Config struct {
	DB  *models.DB
	Log *slog.Logger
	// Work makes this process execute jobs; false gives an insert-only client
	// (a `serve` that leaves the work to separate `batcheval worker`s).
	Work bool
	// WorkMail, with Work false, makes this process work the mail queue
	// (MailQueue) and nothing else, once SetMail gives it a sender: a
	// `serve --no-worker` with the SMTP settings sends the invites, resets
	// and confirmations it queues itself, whether or not a worker with
	// those settings runs. Mail is small and separate from runs, which it
	// still leaves to the workers.
	WorkMail bool
	// MaxRuns is how many runs one process executes at once.
	MaxRuns int
	// SimulatedURL is the base URL of the in-process simulated judge.
	SimulatedURL string
	// Getenv reads API keys named by judges' key variables.
	Getenv func(string) string
	// JudgeTuning overrides retry timings (tests use tiny backoffs).
	JudgeTuning JudgeTuning
	// JudgeSettingsAt is where the judges this process calls have their
	// request settings changed, which a refused call's error names: the
	// judge's page (the default) or, for `batcheval run`, its flags.
	JudgeSettingsAt judge.SettingsPlace
	// PollInterval is how often idle workers look for jobs; SQLite has no
	// LISTEN/NOTIFY so this bounds how soon a launched run starts.
	PollInterval time.Duration
	// LeaseTTL is how long a run's lease lasts without renewal before
	// another worker may take the run over.
	LeaseTTL time.Duration
	// Queue is the job queue this runner launches into and works; empty
	// is River's default queue, shared by `serve` and `worker`. The
	// command line uses a private one so it judges only its own run.
	Queue string
	// Webhooks is how run-end webhooks are sent (notify.go).
	Webhooks WebhookConfig
	// Breaker tunes the per-run circuit breaker on the judge.
	Breaker BreakerConfig
	// DBRetryFor bounds how long a run-state write is retried through
	// transient database errors (0: models.DefaultRetryFor).
	DBRetryFor time.Duration
	// IdleAfter parks a worker that has had no job running and none due
	// for this long: its River client stops, which saves nearly all of an
	// idle worker's CPU, and starts again when work may exist (park.go).
	// 0 never parks.
	IdleAfter time.Duration
	// EventRetryFor is how long a lost lease that the database would not
	// take (it stayed down past DBRetryFor) is still tried in the
	// background before it is given up (0: DefaultEventRetryFor).
	EventRetryFor time.Duration
	// RescueAfter is how long a job other than a run may stay running
	// before River takes it for left by a dead process and retries it
	// (DefaultRescueAfter when zero). Only webhook deliveries are such
	// jobs; a run job is never rescued this way (runWorker.Timeout), its
	// lease tells a live worker from a dead one.
	RescueAfter time.Duration
	// MailAttempts and MailBackoff tune how a mail that could not be
	// delivered is tried again (mail.go; 0: the defaults).
	MailAttempts int
	MailBackoff  time.Duration
	// MailWorkers is how many mails this process sends at once, on
	// MailQueue, apart from MaxRuns (0: DefaultMailWorkers).
	MailWorkers int
}

// JudgeTuning overrides the judge client's retry behaviour.
type JudgeTuning struct {
	MaxAttempts int
	MinBackoff  time.Duration
	MaxBackoff  time.Duration
	// TimeoutRetries bounds retries after a timeout (0: once; negative:
	// never); see judge.Config.TimeoutRetries.
	TimeoutRetries int
}

// Runner launches, executes, cancels and rescues runs.
type Runner struct {
	// flights shares identical judge calls under way between this
	// process's runs (judge.Flights).
	flights *judge.Flights
	cfg     Config
	db      *models.DB
	log     *slog.Logger
	river   *river.Client[*sql.Tx]
	id      string
	// metrics are this runner's Prometheus collectors (Metrics()).
	metrics *Metrics
	// mail is the SMTP server mail jobs are sent through (SetMail).
	mail mailSender

	// draining is closed when the process shuts down gracefully: no new
	// judge calls start, in-flight ones finish and are stored.
	draining  chan struct{}
	drainOnce sync.Once
	// hard is closed when the stop cuts the calls in flight (Kill, or Stop
	// out of patience): until then a graceful stop lets every call out
	// finish, those of an execution River no longer counts too
	// (callContext).
	hard      chan struct{}
	hardOnce  sync.Once
	stopSweep context.CancelFunc
	// executions numbers this process's executions, for unique lease owners.
	executions atomic.Int64
	// live holds the lease owners of this process's executions still under
	// way: Sweep leaves their runs alone (see Sweep).
	live sync.Map
	// lostAgain holds the jobs of queued runs lost again after their one
	// requeue, already logged (requeueLostJobs).
	lostAgain sync.Map
	sweepDone chan struct{}
	// beforeSweep, when set (tests), runs before each look of the sweep.
	beforeSweep func()
	// slots wakes calls waiting for a judge's shared slot (limits.go).
	slots slotWaits
	// saves queues this process's answers for SQLite (saveResult).
	saves saveQueue
	// park stops River's client while there is no work (park.go).
	park parking
	// fetch wakes River's producer after a launch (fetchnow.go).
	fetch fetching
	// wake wakes the workers of other processes on a SQLite file, and
	// this one for theirs (wakefile.go).
	wake wakeFile
	// finishing counts the finished runs whose statistics are being
	// computed (afterFinish); statsSlots bounds them.
	finishing  pending
	statsSlots chan struct{}
	// storing holds the ids of the finished runs whose statistics this
	// process is computing or about to (StoringStats).
	storing sync.Map
	// notes counts the lost leases being written in the background
	// (keepNoting); stopNotes ends them (Stop, Kill).
	notes     sync.WaitGroup
	notesCtx  context.Context
	stopNotes context.CancelFunc
	// eventWriter, set by tests before Start, stands for the database's
	// AddRunEvent (to make it fail as a database that is down).
	eventWriter func(ctx context.Context, ev models.RunEvent) error
	// riverCtx is what River's client is (re)started with.
	riverCtx context.Context
	// onBudget, set by tests before Start, sees each execution's budget
	// as it is made.
	onBudget func(*budget)
	// onFinished, set by tests before Start, is called when an execution
	// has stored its run's end, before the statistics are computed.
	onFinished func(runID int64)
	// storeStats, set by tests before Start, stands for report.StoreStats
	// (to hold or count the statistics of finished runs).
	storeStats func(ctx context.Context, db *models.DB, wsID, runID int64) error
	// buildReport, set by tests before Start, stands for report.Build in
	// webhook messages.
	buildReport func(ctx context.Context, db *models.DB, wsID, runID int64) (*report.Report, error)
}

// driverFor is River's driver on db. On PostgreSQL it listens for River's
// notifications on a connection of db's pgx pool (LISTEN/NOTIFY): a run
// queued by any process (the dashboard, another worker) is fetched by an
// idle worker at once instead of at its next poll (up to PollInterval
// later), and a cancel reaches the worker running the job at once. On
// SQLite, pilot (when not nil) is the driver's River pilot (fetchnow.go).
func driverFor(db *models.DB, pilot *fetchPilot) riverdriver.Driver[*sql.Tx] {
	if db.Dialect == models.Postgres {
		if db.Pool != nil {
			return riverdatabasesql.NewWithPgxListener(db.SQL, db.Pool)
		}
		return riverdatabasesql.New(db.SQL)
	}
	return sqliteDriver{riversqlite.New(db.SQL), pilot}
}

// sqliteDriver is River's SQLite driver without its stand-in for LISTEN/
// NOTIFY, which reads a notification table every 50 ms: that was most of
// an idle worker's CPU (about 25 ms a second). Without a listener River
// polls for jobs every PollInterval. River wakes its own producers only for
// jobs inserted outside a transaction, and a run's job is queued in the
// run's own transaction; the driver's pilot lets a worker fetch a run
// launched through it at once all the same (fetchnow.go), and a parked one
// fetches it as its wake starts River's client. A run queued by another
// process wakes it through the wake file beside the database (wakefile.go),
// or failing that waits for the next poll (up to PollInterval).
type sqliteDriver struct {
	*riversqlite.Driver
	pilot *fetchPilot
}

func (sqliteDriver) SupportsListener() bool     { return false }
func (sqliteDriver) SupportsListenNotify() bool { return false }

// Migrate applies River's schema migrations to the database.
func Migrate(ctx context.Context, db *models.DB, log *slog.Logger) error {
	m, err := rivermigrate.New(driverFor(db, nil), &rivermigrate.Config{Logger: slog.New(levelFilter{quiet(log).Handler(), slog.LevelWarn})})
	if err != nil {
		return fmt.Errorf("prepare job engine migrations: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate job engine schema: %w", err)
	}
	return nil
}

func quiet(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return log
}

// New builds a Runner. Call Start to begin working jobs.
func New(cfg Config) (*Runner, error) {
	if cfg.DB == nil {
		return nil, errors.New("runner needs a database")
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = 4
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Queue == "" {
		cfg.Queue = river.QueueDefault
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.RescueAfter <= 0 {
		cfg.RescueAfter = DefaultRescueAfter
	}
	if cfg.EventRetryFor <= 0 {
		cfg.EventRetryFor = DefaultEventRetryFor
	}
	host, _ := os.Hostname()
	r := &Runner{
		cfg:        cfg,
		db:         cfg.DB,
		log:        quiet(cfg.Log),
		id:         fmt.Sprintf("%s-%d-%s", host, os.Getpid(), strconv.FormatInt(time.Now().UnixNano(), 36)),
		draining:   make(chan struct{}),
		hard:       make(chan struct{}),
		park:       parking{wake: make(chan struct{}, 1), swept: make(chan struct{}, 1)},
		statsSlots: make(chan struct{}, statsAtOnce),
		flights:    judge.NewFlights(),
	}
	r.notesCtx, r.stopNotes = context.WithCancel(context.Background())
	r.metrics = newMetrics(cfg.DB, r.log)
	if cfg.DBRetryFor > 0 {
		cfg.DB.Retry.For = cfg.DBRetryFor
	}
	if cfg.DB.Retry.OnRetry == nil {
		// The first runner on a database counts its retries (a process has
		// one runner; tests that make several share the first's).
		cfg.DB.Retry.OnRetry = func(op string, err error) {
			r.metrics.dbRetries.WithLabelValues(op).Inc()
			r.log.Warn("database error; retrying", "op", op, "err", err)
		}
	}
	rc := &river.Config{
		ID:     r.id,
		Logger: slog.New(levelFilter{r.log.Handler(), slog.LevelWarn}),
		// A run may take hours on a slow judge; its lease, not a timeout,
		// tells a live worker from a dead one. River's rescuer leaves a job
		// alone while its worker's Timeout() (or, when that is 0, this) is
		// negative or not yet over (River v0.51.2, maintenance.JobRescuer's
		// makeRetryDecision): run jobs say -1 and are never rescued by it,
		// webhook deliveries say their own bound and are retried once
		// RescueAfter has passed too.
		JobTimeout:           -1,
		RescueStuckJobsAfter: cfg.RescueAfter,
		FetchCooldown:        minDur(cfg.PollInterval, fetchCooldown),
		FetchPollInterval:    cfg.PollInterval,
		MaxAttempts:          25,
		// A job of a kind this build does not know (queued by a newer
		// server during a rolling deploy) is left available for a worker
		// that knows it. Without this an older worker fetched it, failed
		// it with River's UnknownJobKindError and used up its attempts
		// with growing waits, until River discarded it and the run sat
		// queued for ever. (River's rescuer still discards such a job if
		// it is left running past RescueAfter; Sweep requeues the run's
		// job then, see models.DB.RequeueJob. An idle worker's parking
		// still counts such a job as due, so it stays awake, polling,
		// while one waits: its query keeps to River's covering index.)
		FetchOnlyKnownKinds: true,
	}
	if cfg.Work || cfg.WorkMail {
		// Every kind is registered even in a mail-only process: River's
		// rescuer, in whichever process leads, discards a long-running
		// job of a kind its client does not know, and a run's job runs
		// for hours (see JobTimeout above).
		workers := river.NewWorkers()
		river.AddWorker(workers, &runWorker{r: r})
		river.AddWorker(workers, &webhookWorker{r: r})
		river.AddWorker(workers, &mailWorker{r: r})
		rc.Workers = workers
		rc.Queues = map[string]river.QueueConfig{cfg.Queue: {MaxWorkers: cfg.MaxRuns}}
		if !cfg.Work {
			rc.Queues = map[string]river.QueueConfig{MailQueue: {MaxWorkers: mailWorkers(cfg)}}
		}
	}
	pilot := &fetchPilot{}
	client, err := river.NewClient(driverFor(cfg.DB, pilot), rc)
	if err != nil {
		return nil, fmt.Errorf("create job client: %w", err)
	}
	r.river = client
	if notify := pilot.notify; (cfg.Work || cfg.WorkMail) && notify != nil && cfg.DB.Dialect != models.Postgres {
		// The mail queue's producer too, when this process works it
		// (River skips a queue it has no producer for).
		queued := []*rivertype.JobInsertResult{{Job: &rivertype.JobRow{Queue: cfg.Queue}}, {Job: &rivertype.JobRow{Queue: MailQueue}}}
		if !cfg.Work {
			queued = queued[1:]
		}
		r.fetch.wake = func(ctx context.Context) { notify(ctx, queued) }
	}
	r.wake.path, r.wake.mode, err = wakeFileOf(context.Background(), cfg.DB)
	if err != nil {
		// The poll still finds every job.
		r.log.Warn("wake file: cannot name it; runs queued by other processes start at the next poll", "err", err)
	}
	if r.wake.path != "" {
		r.wake.mailPath = r.wake.path + mailWakeSuffix
	}
	return r, nil
}

// fetchCooldown is River's FetchCooldown: the least time between two job
// fetches of one worker, and between two "new job" notifications one
// process sends for a queue. With River's default, 100 ms, a run launched
// within 100 ms of another sent no notification, and an idle worker that
// had fetched the first before the second was committed left the second
// for its next poll (a second later). 10 ms still folds a storm of
// launches into a few fetches.
const fetchCooldown = 10 * time.Millisecond

func minDur(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

// DefaultLeaseTTL is how long a run's lease lasts without renewal. It is
// renewed every third of that, so a live worker survives two missed
// renewals (a slow database write, a short pause); a crashed worker's run is
// taken over within the lease plus one sweep (about 12 s).
const DefaultLeaseTTL = 10 * time.Second

// DefaultRescueAfter is Config.RescueAfter's default. A webhook delivery
// gives up after its own timeout (40 s with the defaults: the attempt plus
// building the message), so one still running after two minutes was left
// by a process that died; River's rescuer looks every 30 s and the retry
// waits WebhookConfig.Backoff, so such a delivery is retried within about
// three minutes of its start (it waited 12 h when only the client-wide
// rescue stood between a crash and a retry).
const DefaultRescueAfter = 2 * time.Minute

// MinRescueAfter is the shortest RescueAfter that takes effect with the
// default webhook settings: River never rescues a delivery before its
// attempt could have ended (webhookWorker.Timeout), so a shorter one acts
// as this.
func MinRescueAfter() time.Duration { return WebhookConfig{}.withDefaults().attemptTime() }

// sweepInterval is how often expired leases are looked for: often enough
// that a crash costs little more than the lease, and at most every 2 s
// (one small indexed query).
func sweepInterval(lease time.Duration) time.Duration {
	return min(lease/2, 2*time.Second)
}

// Metrics returns this runner's Prometheus metrics.
func (r *Runner) Metrics() *Metrics { return r.metrics }

// Resume re-opens a finished run with gaps and queues it: only batches
// without an answer (failed ones, and rounds never reached) are sent. req
// may give the run a new spending cap, saved only if the resume is not
// refused.
func (r *Runner) Resume(ctx context.Context, wsID, runID int64, req models.Requeue) (models.Run, error) {
	run, err := r.db.ReopenRun(ctx, wsID, runID, req, r.enqueue)
	if err == nil {
		r.wakeUp()
		r.log.Info("run resumed", "run", runID, "judge", judgeName(run.JudgeSnapshot))
	}
	return run, err
}

// ID is this process's worker id (recorded as a run's lease owner).
func (r *Runner) ID() string { return r.id }

// Start begins working jobs and rescuing runs of dead workers.
func (r *Runner) Start(ctx context.Context) error {
	if !r.cfg.Work {
		return r.startMailOnly(ctx)
	}
	// Detached: River cancels running jobs when its start context ends, and
	// a signal must not do that (the calls in flight would be lost and each
	// stop counted as a failed attempt, with River's growing backoff). Stop
	// drains instead.
	r.riverCtx = context.WithoutCancel(ctx)
	if r.cfg.Queue == river.QueueDefault {
		// Mail queued by a build before MailQueue waits in the shared
		// queue: moved to its own, where processes with mail settings
		// take it.
		if err := r.db.Gorm.WithContext(ctx).Exec(`UPDATE river_job SET queue = ? WHERE kind = ? AND queue = ? AND state IN ('available', 'scheduled', 'retryable')`,
			MailQueue, mailKind, river.QueueDefault).Error; err != nil {
			r.log.Warn("mail: move mail jobs to their own queue", "err", err)
		}
	}
	if err := r.startRiver(); err != nil {
		return fmt.Errorf("start job workers: %w", err)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.stopSweep = cancel
	r.sweepDone = make(chan struct{})
	go r.sweepLoop(sctx)
	r.watchWakeFile()
	r.startParking(ctx)
	return nil
}

// Stop shuts down gracefully: no new judge calls start, answers already
// on their way are awaited and stored, unfinished runs are handed back to
// the queue for the next start. ctx bounds the wait.
func (r *Runner) Stop(ctx context.Context) error {
	if !r.cfg.Work {
		return r.stopMailOnly(ctx)
	}
	r.drainOnce.Do(func() { close(r.draining) })
	if r.stopSweep != nil {
		r.stopSweep()
		<-r.sweepDone
	}
	// The client is ours from here whatever parking left it as: running,
	// stopping (then Stop waits for that stop), or stopped (Stop returns).
	r.stopWatchingWakeFile()
	r.stopParking(ctx)
	err := r.river.Stop(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		// Out of patience: cancel what is left. Stored answers are safe.
		r.stopHard()
		err = r.river.StopAndCancel(context.Background())
	}
	// Executions River no longer counts may still be storing paid answers.
	r.waitJobs(ctx)
	// Cached answers still queued for a group commit (saveAnswer), and
	// those kept through a database outage: a last try.
	r.flushSaves(ctx)
	_ = r.storeUnsaved(ctx)
	r.dropUnsaved()
	// Finished runs' statistics being computed: kept if they end in time.
	r.WaitStats(ctx)
	r.endNotes()
	return err
}

// stopHard marks the stop as one that cuts the calls in flight.
func (r *Runner) stopHard() {
	if r.hard != nil {
		r.hardOnce.Do(func() { close(r.hard) })
	}
}

// waitJobs waits, until ctx ends, for the jobs this process is still
// working once River's client has stopped. River waits for its running
// jobs by their id: when another worker's sweep requeued a job whose lease
// lapsed (a database outage) and this process fetched it again while its
// first execution was still storing the answers of calls it had out, the
// second execution's end made River forget the first. Stop returned, the
// caller closed the database, and the first execution's paid answer was
// neither stored nor counted (the run counted a call fewer than the judge
// answered). Such an execution stores or counts its answers (a late
// answer, or one refused and counted) before the process goes on.
func (r *Runner) waitJobs(ctx context.Context) {
	if r.park.active.Load() == 0 {
		return
	}
	r.log.Info("worker stopping: waiting for executions still storing the answers of their calls", "executions", r.park.active.Load())
	// Why 2ms: as flushSaves, a store takes milliseconds, and this runs
	// only while the process stops.
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for r.park.active.Load() > 0 {
		select {
		case <-ctx.Done():
			r.log.Warn("worker stopped before every execution had stored its answers: a paid answer they held is not counted on its run", "executions", r.park.active.Load())
			return
		case <-t.C:
		}
	}
}

// endNotes stops the background writes of lost leases (keepNoting) and
// waits for them to return.
func (r *Runner) endNotes() {
	r.stopNotes()
	r.notes.Wait()
}

// Kill stops at once, cancelling in-flight calls, as a crash would (tests).
func (r *Runner) Kill(ctx context.Context) error {
	if r.stopSweep != nil {
		r.stopSweep()
		<-r.sweepDone
	}
	r.stopWatchingWakeFile()
	r.stopParking(ctx)
	r.stopHard()
	err := r.river.StopAndCancel(ctx)
	// Kill stands for a crash of the jobs, not of this process's memory:
	// cached answers already queued are written as a live process would.
	r.flushSaves(ctx)
	r.endNotes()
	return err
}

// Launch stores a new queued run and enqueues its job in one transaction.
func (r *Runner) Launch(ctx context.Context, run *models.Run) error {
	if err := PrepareRun(run); err != nil {
		return err
	}
	if err := r.db.CreateRun(ctx, run, r.enqueue); err != nil {
		return err
	}
	// After the commit: a parked worker woken earlier could miss the job.
	r.wakeUp()
	return nil
}

// PrepareRun is the package's PrepareRun, for those that store a run
// themselves and queue it with Enqueue (the demo's first run).
func (r *Runner) PrepareRun(run *models.Run) error { return PrepareRun(run) }

// Enqueue queues a stored run's job in tx, the transaction that stores
// the run, as Launch does; once tx has committed, call Queued, or the
// workers find it at their next poll (Launch does both).
func (r *Runner) Enqueue(ctx context.Context, tx *sql.Tx, run *models.Run) (int64, error) {
	return r.enqueue(ctx, tx, run)
}

// Queued wakes the workers for runs queued with Enqueue, once their
// transaction has committed: this process's (if it works jobs) and, on a
// SQLite file, those of other processes (the wake file, wakefile.go).
func (r *Runner) Queued() { r.wakeUp() }

func (r *Runner) enqueue(ctx context.Context, tx *sql.Tx, run *models.Run) (int64, error) {
	res, err := r.river.InsertTx(ctx, tx, RunArgs{RunID: run.ID}, &river.InsertOpts{Queue: r.cfg.Queue})
	if err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}

// Cancel marks the run cancelled and cancels its job: the worker stops
// sending new calls at once.
func (r *Runner) Cancel(ctx context.Context, wsID, runID int64) (models.Run, error) {
	run, err := r.db.RequestCancel(ctx, wsID, runID)
	if err != nil {
		return run, err
	}
	if run.JobID != nil {
		if _, err := r.river.JobCancel(ctx, *run.JobID); err != nil {
			r.log.Warn("cancel job", "run", runID, "judge", judgeName(run.JudgeSnapshot), "job", *run.JobID, "err", err)
		}
	}
	return run, nil
}

// Pause pauses the run and cancels its job: the worker sends no new call
// from its next check on, stores the answers already on their way, and
// gives its slot up. Continue goes on where it stopped.
func (r *Runner) Pause(ctx context.Context, wsID, runID int64) (models.Run, error) {
	run, err := r.db.RequestPause(ctx, wsID, runID)
	if err != nil {
		return run, err
	}
	r.log.Info("run paused", "run", runID, "judge", judgeName(run.JudgeSnapshot))
	if run.JobID != nil {
		if _, err := r.river.JobCancel(ctx, *run.JobID); err != nil {
			r.log.Warn("cancel the job of a paused run", "run", runID, "judge", judgeName(run.JudgeSnapshot), "job", *run.JobID, "err", err)
		}
	}
	return run, nil
}

// Continue queues a paused run again: it goes on where it stopped, and
// sends no batch that has an answer. req may give the run a new spending
// cap, saved only if the continue is not refused.
func (r *Runner) Continue(ctx context.Context, wsID, runID int64, req models.Requeue) (models.Run, error) {
	run, err := r.db.ContinueRun(ctx, wsID, runID, req, r.enqueue)
	if err == nil {
		r.wakeUp()
		r.log.Info("run continued", "run", runID, "judge", judgeName(run.JudgeSnapshot))
	}
	return run, err
}

// sweepLoop rescues runs whose worker died (expired lease) by making their
// job available again.
//
// While no run is running it looks less often (idleSweepInterval): a run
// claimed after a sweep that found none holds its lease for a whole lease
// from its claim, so the sweep after it still comes before the lease can
// lapse, and from then on sweeps come every sweepInterval again. (This
// assumes the workers sharing the database use leases at least half as
// long as this one's, as they do with one BATCHEVAL_LEASE.)
func (r *Runner) sweepLoop(ctx context.Context) {
	defer close(r.sweepDone)
	busy, idle := sweepInterval(r.cfg.LeaseTTL), idleSweepInterval(r.cfg.LeaseTTL)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if r.beforeSweep != nil {
			r.beforeSweep()
		}
		next := busy
		if running := r.Sweep(ctx); running == 0 {
			next = idle
		}
		// A parked worker looks for due jobs now, in this wake-up
		// (parkedLooksWithSweep).
		select {
		case r.park.swept <- struct{}{}:
		default:
		}
		t.Reset(next)
	}
}

// idleSweepInterval is how often the sweep looks while no run is running:
// half a lease (5 s with the default), where a busy sweep looks every 2 s.
func idleSweepInterval(lease time.Duration) time.Duration {
	return max(sweepInterval(lease), lease/2)
}

// Sweep requeues the jobs of runs whose lease has expired, and returns how
// many runs are running (whatever their lease); -1 when it could not read
// them.
func (r *Runner) Sweep(ctx context.Context) int {
	leases, err := r.db.RunningLeases(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("look for orphaned runs", "err", err)
		}
		return -1
	}
	for _, l := range leases {
		// Lapsed by the database's clock: this process's may be off.
		if l.JobID == nil || !l.Lapsed {
			continue
		}
		if _, alive := r.live.Load(l.Owner); alive {
			// This process's own execution, which could not renew (a full
			// disk, a locked file): it is not dead, and may hold paid
			// answers it is still trying to store. It notices the lapse
			// itself, sends nothing more, stores what it holds and hands
			// the run back; another execution now would send those
			// batches again. (Other processes cannot tell; for them the
			// lease decides.)
			continue
		}
		// A lapsed lease of this process's own execution that has just
		// ended (it lost the lease through a full disk or a database
		// outage and snoozed its job, which River had not yet recorded):
		// the job stays in this runner's queue, which this live process
		// works. Moved to the shared queue, a command line's run (whose
		// queue is private) was left to workers that may not exist, and
		// `batcheval run` waited for ever.
		queue := river.QueueDefault
		if strings.HasPrefix(l.Owner, r.id+"/") {
			queue = r.cfg.Queue
		}
		ok, err := r.db.RequeueJob(ctx, *l.JobID, queue)
		if err != nil {
			r.log.Warn("requeue orphaned run", "run", l.RunID, "judge", r.judgeOf(ctx, l.RunID), "err", err)
			continue
		}
		if ok {
			// The job is in this runner's queue or, when this one is a
			// command line's private queue, most likely the shared one.
			r.wakeHere()
			r.wakeOthers()
			r.log.Info("resuming run left by a stopped worker", "run", l.RunID, "judge", r.judgeOf(ctx, l.RunID), "previous_worker", l.Owner)
		}
	}
	r.requeueLostJobs(ctx)
	return len(leases)
}

// requeueLostJobs gives a queued run whose job no worker will take (River
// discarded it: an older build fetched a kind it did not know and used up
// its attempts; or it was cancelled, or deleted since) a new job on the
// shared queue, once, with an event on the run. Before, such a run stayed
// queued for ever: the sweep looked only at running runs. The job is
// taken as lost a lease after it ended (a hand-over cancels a job just
// before it records the next one). A run whose new job is lost again is
// only logged, once per process: pausing and continuing it queues it anew.
func (r *Runner) requeueLostJobs(ctx context.Context) {
	lost, err := r.db.QueuedRunsWithLostJobs(ctx, r.cfg.LeaseTTL)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("look for queued runs with lost jobs", "err", err)
		}
		return
	}
	for _, l := range lost {
		how := "was " + l.State
		if l.State == "" {
			how = "is gone from the job table"
		}
		if l.Requeued {
			if _, seen := r.lostAgain.LoadOrStore(l.JobID, struct{}{}); !seen {
				r.log.Warn("queued run's job lost again after it was requeued once; pause and continue the run to queue it again",
					"run", l.RunID, "judge", r.judgeOf(ctx, l.RunID), "job", l.JobID, "job_state", cmp.Or(l.State, "deleted"))
			}
			continue
		}
		var newJob int64
		errStale := errors.New("run no longer queued on the lost job")
		err := r.db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			stx, err := models.SQLTx(tx)
			if err != nil {
				return err
			}
			res, err := r.river.InsertTx(ctx, stx, RunArgs{RunID: l.RunID}, &river.InsertOpts{Queue: river.QueueDefault})
			if err != nil {
				return fmt.Errorf("queue run %d: %w", l.RunID, err)
			}
			newJob = res.Job.ID
			ev := models.RunEvent{At: time.Now(), Message: fmt.Sprintf("The run's job (%d) %s while the run was still queued, so no worker would have taken it; it was queued again at %s as job %d.",
				l.JobID, how, eventTime(time.Now()), newJob)}
			ok, err := models.ReplaceLostJob(tx, l, newJob, ev)
			if err != nil {
				return err
			}
			if !ok {
				return errStale
			}
			return nil
		})
		switch {
		case errors.Is(err, errStale):
			// Another process requeued it, or the run moved on.
		case err != nil:
			if ctx.Err() == nil {
				r.log.Warn("requeue queued run with a lost job", "run", l.RunID, "judge", r.judgeOf(ctx, l.RunID), "job", l.JobID, "err", err)
			}
		default:
			r.wakeShared()
			r.log.Info("queued run's job was lost; queued it again", "run", l.RunID, "judge", r.judgeOf(ctx, l.RunID),
				"lost_job", l.JobID, "job_state", cmp.Or(l.State, "deleted"), "job", newJob)
		}
	}
}

// judgeOf names a run's judge for a log line ("" when the run cannot be
// read): every line about a run says which judge it uses.
func (r *Runner) judgeOf(ctx context.Context, runID int64) string {
	run, err := r.db.GetRun(ctx, runID)
	if err != nil {
		return ""
	}
	return judgeName(run.JudgeSnapshot)
}

// levelFilter drops River's chatty logs below a level.
type levelFilter struct {
	slog.Handler
	min slog.Level
}

func (l levelFilter) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.min && l.Handler.Enabled(ctx, lv)
}

// HandOver gives an unfinished run to the shared queue, for when a
// runner with a private queue (the command line) stops before the run
// ends: its job is cancelled and a new one, for the same run, is queued
// where `serve` and `worker` processes will resume it.
func (r *Runner) HandOver(ctx context.Context, wsID, runID int64) error {
	run, err := r.db.FindRun(ctx, wsID, runID)
	if err != nil || run.Finished() {
		return err
	}
	if run.JobID != nil {
		if _, err := r.river.JobCancel(ctx, *run.JobID); err != nil {
			return fmt.Errorf("cancel the private job of run %d: %w", runID, err)
		}
	}
	err = r.db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		stx, err := models.SQLTx(tx)
		if err != nil {
			return err
		}
		res, err := r.river.InsertTx(ctx, stx, RunArgs{RunID: runID}, &river.InsertOpts{Queue: river.QueueDefault})
		if err != nil {
			return fmt.Errorf("queue run %d: %w", runID, err)
		}
		return tx.Model(&models.Run{}).Where("id = ?", runID).Update("job_id", res.Job.ID).Error
	})
	if err == nil {
		// Only a worker of the shared queue can take the job: a parked
		// private one woken here would find nothing and keep River's
		// client running until it parks again.
		r.wakeShared()
	}
	return err
}
