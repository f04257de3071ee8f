package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"golang.org/x/sync/errgroup"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/evaluator/methods"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

type runWorker struct {
	river.WorkerDefaults[RunArgs]
	r *Runner
}

// Timeout: none; see Config.LeaseTTL.
func (w *runWorker) Timeout(*river.Job[RunArgs]) time.Duration { return -1 }

func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	started := w.r.jobStarted()
	defer w.r.jobEnded()
	if !started {
		return river.JobSnooze(time.Second)
	}
	return w.r.Execute(ctx, job.Args.RunID)
}

// errDraining means the process is shutting down; the job is snoozed so the
// next start picks the run up where it stopped.
var errDraining = errors.New("worker is shutting down")

// Execute runs (or resumes) one run to its end. It is what the job does.
func (r *Runner) Execute(ctx context.Context, runID int64) error {
	run, err := r.db.GetRun(ctx, runID)
	if err != nil {
		if models.ErrorCode(err) == models.ENotFound {
			return river.JobCancel(err)
		}
		return err
	}
	if run.Finished() || run.Paused() {
		// A paused run's job ends here: Continue queues a new one.
		return nil
	}
	// Answers this process was paid for but could not store (the
	// database refused writes for longer than its retries) go in first:
	// this run's may be among them, and its resume replays them from the
	// cache. While the database still refuses them, no call is sent.
	if err := r.storeUnsaved(ctx); err != nil {
		r.log.Warn("database unavailable: run not started; it starts when the database answers", "run", runID, "err", err, "retry_in", dbPause)
		return river.JobSnooze(dbPause)
	}
	// The lease owner names this execution, not just this process: two
	// executions of one job in one process must still tell each other apart.
	owner := fmt.Sprintf("%s/%d", r.id, r.executions.Add(1))
	// claimed is on this process's monotonic clock, before the claim: the
	// lease, written with the database's clock, holds at least until
	// claimed+TTL (keepLease).
	claimed := time.Now()
	ok, prev, err := r.db.ClaimRunFrom(ctx, runID, owner, r.cfg.LeaseTTL)
	if err != nil {
		return err
	}
	if !ok {
		run, err = r.db.GetRun(ctx, runID)
		if err == nil && (run.Finished() || run.Paused()) {
			return nil
		}
		// Another live worker holds the run; look again later.
		return river.JobSnooze(r.cfg.LeaseTTL)
	}
	r.live.Store(owner, struct{}{})
	defer r.live.Delete(owner)
	log := r.log.With("run", runID, "judge", run.JudgeSnapshot.Name)
	ctx = models.WithLeaseOwner(ctx, owner) // fences every run-state write on this lease
	// The answers' writes pass on the lease they read to the next call's
	// fence (guard.go).
	ctx = withLeaseNews(ctx, &leaseNews{})
	log.Info("run started", "worker", owner)
	r.noteTakeover(ctx, runID, owner, prev, log)

	// work is cancelled when the run is cancelled, the lease is lost or the
	// job is cancelled; calls already sent are allowed to finish then.
	work, stopWork := context.WithCancelCause(ctx)
	defer stopWork(nil)
	// settled is closed once every call this execution sent has its
	// answer stored: until then the lease is kept, even after work was
	// stopped (a pause, a cancelled job), so that no other execution
	// claims the run and sends those calls' batches again.
	settled := make(chan struct{})
	settle := sync.OnceFunc(func() { close(settled) })
	leaseDone := make(chan struct{})
	go func() {
		defer close(leaseDone)
		r.keepLease(work, stopWork, settled, runID, owner, claimed)
	}()
	defer func() { stopWork(nil); settle(); <-leaseDone }()

	end, err := r.execute(ctx, work, run, log)
	// The answers queued for the cache (a unit left pending for the
	// resume has its answered calls there) are written before the run
	// ends or pauses: its resume, here or in another process, finds them.
	r.flushSaves(ctx)
	// execute waited for the calls on their way; their answers are
	// stored. The lease is no longer needed to guard them: it is given
	// up, or the run ended, below.
	settle()
	<-leaseDone
	switch {
	case err == nil:
		// The workspace's webhook, if it wants this end, is told by a job
		// queued with the end itself (notify.go).
		// The statistics computed after the end (afterFinish) are counted
		// before the end is written: whoever sees the run finished and
		// waits for them (WaitStats) waits for this run's too.
		r.finishing.add()
		// Marked before the end is written, so a page that sees the run
		// finished also sees its statistics on their way (StoringStats).
		r.storing.Store(runID, struct{}{})
		if ferr := r.finishRun(context.WithoutCancel(ctx), runID, end.status, end.reason); ferr != nil {
			r.storing.Delete(runID)
			r.finishing.done()
			return ferr
		}
		log.Info("run finished", "status", end.status, "reason", end.reason)
		if r.onFinished != nil {
			r.onFinished(runID)
		}
		r.afterFinish(run.WorkspaceID, runID, log)
		return nil
	case errors.Is(err, errDraining):
		_ = r.db.ReleaseLease(context.WithoutCancel(ctx), runID, owner)
		log.Info("run paused for shutdown; it resumes on the next start")
		return river.JobSnooze(time.Second)
	case leaseLost(work, err):
		log.Warn("run paused: its lease could not be renewed; it resumes when claimed again")
		r.noteLeaseLost(ctx, runID, owner, context.Cause(work), err, log)
		return river.JobSnooze(r.cfg.LeaseTTL)
	case errors.Is(context.Cause(work), errCancelled) || errors.Is(err, errCancelled):
		// Cancelled or paused: the answers that were on their way are
		// stored (above). The lease is given up so that a paused run's
		// Continue is claimed at once, not a lease later.
		_ = r.db.ReleaseLease(context.WithoutCancel(ctx), runID, owner)
		if now, gerr := r.db.GetRun(context.WithoutCancel(ctx), runID); gerr == nil && now.Paused() {
			log.Info("run paused; it goes on when continued")
		} else {
			log.Info("run cancelled")
		}
		return nil
	case ctx.Err() != nil:
		// Killed or job cancelled: what was answered is stored.
		_ = r.db.ReleaseLease(context.WithoutCancel(ctx), runID, owner)
		return r.handBack(ctx, log)
	case pausesForDatabase(err):
		return r.pauseForDatabase(ctx, runID, owner, err, log)
	default:
		var rl *rateLimited
		if errors.As(err, &rl) {
			// The run is nobody's until the judge's wait is over: it
			// shows as waiting for its judge, with why and until when.
			now := time.Now()
			_ = r.db.ReleaseLeaseWaiting(context.WithoutCancel(ctx), runID, owner, now, rl.waiting(now))
			log.Warn("judge rate limit: run snoozed", "for", rl.after)
			return river.JobSnooze(rl.after)
		}
		if ee := (*judge.EgressError)(nil); errors.As(err, &ee) {
			// The run's error names the address refused in local mode
			// only; the operator's log always does.
			log = log.With("refused_address", ee.Addr.String(), "refused_host", ee.Host)
		}
		log.Error("run failed", "err", err)
		if ferr := r.finishRun(context.WithoutCancel(ctx), runID, models.RunFailed, err.Error()); ferr != nil {
			return ferr
		}
		return river.JobCancel(err)
	}
}

var errCancelled = errors.New("run cancelled")

// pausesForDatabase reports whether err, which ended an execution, is a
// database error worth waiting out. A judge's error never is, even when a
// network error lies beneath it: a judge address the network policy
// refuses fails in the dialer, and was taken for a lost database
// connection, so the run paused and resumed forever instead of stopping
// with the refusal.
func pausesForDatabase(err error) bool {
	var je *judge.Error
	return !errors.As(err, &je) && models.IsTransient(err)
}

// errLeaseLost stops work whose lease could not be renewed in time; the
// run resumes wherever its lease is next claimed.
var errLeaseLost = errors.New("could not renew the run's lease in time")

// leaseRetryPause is the wait between tries of a renewal that met a
// transient database error: long enough for a reconnect, short next to any
// lease (tests use 2 s).
const leaseRetryPause = 50 * time.Millisecond

// keepLease renews the run's lease until settled is closed: until the
// execution has stored the answers of every call it sent. If the run was
// cancelled, paused or taken over, it stops the work (no new call starts)
// but, unless the lease is gone, keeps renewing it for the calls still on
// their way: a run paused and continued while a call was on its way for
// longer than a lease was claimed by the continuing execution, which sent
// that call's batch again, and the batch was paid twice. claimed is when
// the lease's current expiry was computed (its claim).
//
// A lease that lapsed is lost for good, even if no other worker has
// claimed the run yet: the process may have been frozen (SIGSTOP, a paused
// VM) or its renewal stuck behind a lock for longer than the lease, and the
// fence before each call already treats it as lost. Renewing it after the
// fact used to let a thawed worker carry on sending calls whenever it
// renewed before its successor claimed the run (a SQLite write lock held by
// the frozen worker made that the usual order).
func (r *Runner) keepLease(work context.Context, stop context.CancelCauseFunc, settled <-chan struct{}, runID int64, owner string, claimed time.Time) {
	t := time.NewTicker(r.cfg.LeaseTTL / 3)
	defer t.Stop()
	// validFrom is, on this process's monotonic clock, a moment before the
	// database computed the expiry now in it (with its own clock, one TTL
	// on): the lease holds at least until validFrom+TTL.
	validFrom := claimed
	lapsed := func() bool { return time.Since(validFrom) >= r.cfg.LeaseTTL }
	// lastErr is the last renewal's error, for the run's events: why the
	// lease could not be kept.
	var lastErr error
	lose := func() { stop(&leaseLostError{at: validFrom.Add(r.cfg.LeaseTTL), err: lastErr}) }
	// The renewals outlive work (a paused run's job is cancelled, and its
	// calls on their way still need the lease), not settled.
	db, cancelDB := context.WithCancel(context.WithoutCancel(work))
	defer cancelDB()
	go func() {
		select {
		case <-settled:
			cancelDB()
		case <-db.Done():
		}
	}()
	for {
		select {
		case <-settled:
			return
		case <-t.C:
		}
		if lapsed() {
			lose()
			return
		}
		started := time.Now()
		renew := func() (bool, error) {
			if work.Err() != nil {
				// Stopping: only the calls on their way are guarded,
				// whatever the run's status meanwhile.
				return r.db.HoldLease(db, runID, owner, r.cfg.LeaseTTL)
			}
			return r.db.RenewLease(db, runID, owner, r.cfg.LeaseTTL)
		}
		ok, err := renew()
		if err != nil {
			lastErr = err
		}
		// A transient error (a pooled connection the server dropped) is
		// tried again at once on a new connection, not a tick later, while
		// the lease still holds.
		for err != nil && models.IsTransient(err) && !lapsed() {
			select {
			case <-settled:
				return
			case <-time.After(leaseRetryPause):
			}
			ok, err = renew()
			if err != nil {
				lastErr = err
			}
		}
		if err != nil {
			// A passing database error: the next tick tries again. But once
			// the lease may have lapsed, another worker may own the run:
			// stop sending calls rather than risk sending them twice.
			if lapsed() {
				lose()
				return
			}
			continue
		}
		if !ok && lapsed() {
			// The renewal waited past the lease (a row held by another
			// transaction) and meanwhile the run was claimed by another
			// execution: that is a lost lease, not a cancel, and the run's
			// events must say so. Taken for a cancel, the execution ended
			// its job quietly and the run showed no gap in its progress.
			lose()
			return
		}
		if !ok && work.Err() == nil {
			// Cancelled, paused or taken: no new call. A paused run's
			// lease is still ours, and is held for the calls on their way.
			stop(errCancelled)
			ok, err = r.db.HoldLease(db, runID, owner, r.cfg.LeaseTTL)
		}
		if err != nil || !ok {
			if err == nil {
				stop(errCancelled)
				return // the lease is no longer ours to keep
			}
			if lapsed() {
				lose()
				return
			}
			continue
		}
		if lapsed() {
			// Renewed, but only after the old expiry had passed.
			lose()
			return
		}
		validFrom, lastErr = started, nil
	}
}

type rateLimited struct {
	after time.Duration
	err   *judge.Error // the judge's answer that asked for the wait
}

func (e *rateLimited) Error() string { return fmt.Sprintf("judge rate limit; wait %s", e.after) }

// waiting says, for the run's page and the API, why the run waits from
// now on and when it goes on by itself. It is one message of its own, not
// the judge client's error with a sentence added: that error speaks to
// someone calling the judge by hand ("longer than the 2m0s we wait for:
// try again later"), while the run tries again by itself.
func (e *rateLimited) waiting(now time.Time) string {
	return rateLimitWait(e.err, "The run waits "+e.after.String(), e.after, "sending nothing, and goes on by itself", now)
}

// rateLimitWait words a wait for a rate-limited judge: what the judge
// said, who waits how long (who: "The run waits 5m0s") and whether the
// judge named that time, what happens meanwhile and after (then), and
// when, then the judge's own detail.
func rateLimitWait(je *judge.Error, who string, after time.Duration, then string, now time.Time) string {
	asked := "as the judge asked"
	if je.RetryAfter <= 0 {
		asked = "the judge named no time"
	}
	status := je.Status
	if status == 0 {
		status = http.StatusTooManyRequests
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the endpoint is rate limiting (HTTP %d). %s (%s), %s at %s.", status, who, asked, then,
		now.Add(after).UTC().Format("2006-01-02 15:04:05 UTC"))
	if je.Message != "" {
		b.WriteString(" Details: ")
		b.WriteString(je.Message)
	}
	return b.String()
}

// Completer is the judge as the runner and the methods call it. judgeFor
// is the one place where it is made, so that wrapping it (fencing, circuit
// breaking, metrics) changes every call at once.
type Completer = methods.Completer

// sameEndpoint reports whether two judge base URLs name the same
// endpoint: the same scheme, host and port (a default port written out or
// not). The path and query may differ: they choose a route of the same
// server (Azure's deployments), which the key is for alike. An address
// that does not parse is no endpoint.
func sameEndpoint(a, b string) bool {
	ua, errA := url.Parse(strings.TrimSpace(a))
	ub, errB := url.Parse(strings.TrimSpace(b))
	if errA != nil || errB != nil || ua.Host == "" || ub.Host == "" {
		return false
	}
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		switch strings.ToLower(u.Scheme) {
		case "http":
			return "80"
		case "https":
			return "443"
		}
		return ""
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Hostname(), ub.Hostname()) && port(ua) == port(ub)
}

// Every call goes through b, the execution's budget of calls (limits.go),
// which also learns from every attempt's outcome.
func (r *Runner) judgeFor(ctx context.Context, run models.Run, b *budget) (Completer, error) {
	snap := run.JudgeSnapshot
	cfg := judge.Config{
		BaseURL:   snap.BaseURL,
		Model:     snap.Model,
		KeyHeader: snap.SendsKeyAs(),
		// What the judge's endpoint takes, as the run recorded it at
		// launch (OpenAI's reasoning models: max_completion_tokens, no
		// temperature nor top_p).
		TokenLimit:          snap.SendsTokenLimitAs(),
		DefaultSamplingOnly: snap.DefaultSamplingOnly && !snap.Simulated,
		ReasoningEffort:     snap.SendsReasoningEffort(),
		SettingsAt:          r.cfg.JudgeSettingsAt, // named by a refusal's hint
		Timeout:             time.Duration(snap.TimeoutSeconds) * time.Second,
		MaxAttempts:         r.cfg.JudgeTuning.MaxAttempts,
		MinBackoff:          r.cfg.JudgeTuning.MinBackoff,
		MaxBackoff:          r.cfg.JudgeTuning.MaxBackoff,
	}
	if snap.Simulated {
		if r.cfg.SimulatedURL == "" {
			return nil, errors.New("this run uses the simulated judge, but it is not running in this process")
		}
		cfg.BaseURL = r.cfg.SimulatedURL
	} else {
		// The judge's key (stored, or its key variable) goes only to the
		// endpoint the judge has now: once an owner moved the judge to
		// another endpoint, a run still holding the old address (resumed,
		// continued, taken over) must not hand that endpoint a key chosen
		// for the new one. Such a run falls back to the key variable it
		// started with, if any.
		if run.JudgeID != nil {
			if j, err := r.db.FindJudge(ctx, run.WorkspaceID, *run.JudgeID); err == nil && sameEndpoint(j.BaseURL, snap.BaseURL) {
				cfg.APIKey = j.APIKey
				if cfg.APIKey == "" && j.APIKeyEnv != "" {
					if err := r.db.KeyEnvAllowedIn(ctx, run.WorkspaceID); err != nil {
						return nil, err
					}
					key, err := models.KeyFromEnv(r.cfg.Getenv, j.APIKeyEnv)
					if err != nil {
						return nil, err
					}
					cfg.APIKey = key
				}
			}
		}
		if cfg.APIKey == "" && snap.APIKeyEnv != "" {
			// The operator's variables serve the default workspace only
			// (models.KeyEnvAllowedIn), a run recorded before included.
			if err := r.db.KeyEnvAllowedIn(ctx, run.WorkspaceID); err != nil {
				return nil, err
			}
			key, err := models.KeyFromEnv(r.cfg.Getenv, snap.APIKeyEnv)
			if err != nil {
				return nil, err
			}
			cfg.APIKey = key
		}
	}
	spend, err := r.newSpendCap(ctx, run)
	if err != nil {
		return nil, err
	}
	c, err := judge.New(r.guardJudge(ctx, run, cfg, b, spend)) // fencing, circuit breaker, metrics (guard.go)
	if err != nil {
		return nil, err
	}
	// The shared limits and the spending cap wrap the real client only: an
	// answer from the cache takes no call slot, no tokens of the judge's
	// budget and costs nothing.
	limited := b.wrap(c)
	if spend != nil {
		// Outside the budget: a call waiting for the cap holds no slot.
		limited = capped{c: limited, cap: spend, r: r}
	}
	// A unit's first call waits for its turn and its slot as one wait,
	// unless the spending cap, which sits between them, may hold it.
	limited = turnTaking{c: limited, sem: b.sem, withSlot: spend == nil}
	return cachedJudge(r.db, answerStore{r.db.ResponseCache(run.WorkspaceID).ForRun(run.ID), r}, run, limited, cfg.BaseURL, spend, r.flights), nil
}

// failedUnitRetries is how many times a call unit whose calls failed (after
// the judge client's own retries) is tried again at the end of its round,
// before it is left as a gap. Why one: a passing outage of a few seconds
// is over by then, while a unit that fails twice is failing for a reason
// (a prompt the endpoint refuses), and more tries would only add cost.
const failedUnitRetries = 1

// outcome is how a run that went through every unit ends.
type outcome struct {
	status string // models.RunSucceeded, RunFinishedWithGaps or RunFailed
	reason string // why, for anything but success
}

// execute is the run loop, the same for every method: passes (criteria)
// in turn, rounds in sequence, the call units of a round concurrently,
// each stored as its answer arrives; units that failed are tried again at
// the end of their round. The method decides the passes, the rounds, the
// units and how a unit is judged.
func (r *Runner) execute(ctx, work context.Context, run models.Run, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) (outcome, error) {
	m, err := methods.Lookup(run.Method)
	if err != nil {
		return outcome{}, err
	}
	// This execution builds its prompts with the code's wording, which an
	// upgrade since the run was launched (or last executed) may have
	// changed: note it, so the run's reports say which batches were built
	// with which version instead of the launch version alone.
	if wrote, err := r.db.RecordPromptVersion(context.WithoutCancel(ctx), run.ID, m.PromptVersion()); err != nil {
		return outcome{}, fmt.Errorf("record the prompt template version: %w", err)
	} else if wrote {
		log.Info("prompt template version changed since the run's last execution", "version", m.PromptVersion(), "launched_with", run.PromptTemplateVersion)
	}
	s := run.Settings
	if err := s.Validate(); err != nil {
		return outcome{}, fmt.Errorf("run settings: %w", err)
	}
	ds, err := r.db.FindDataset(ctx, run.WorkspaceID, run.DatasetID)
	if err != nil {
		return outcome{}, err
	}
	fields := run.RubricSnapshot.Fields
	if len(fields) == 0 {
		fields = ds.Fields
	}
	// What the run holds of its rows: ids, places and the judge's samples,
	// read a chunk at a time with only the fields' columns.
	ids, index, samples, err := loadRunRows(ctx, r.db, ds.ID, fields, models.RowTextsChunk)
	if err != nil {
		return outcome{}, fmt.Errorf("load dataset rows: %w", err)
	}
	if len(ids) == 0 {
		return outcome{}, errors.New("the dataset has no rows")
	}
	// The budget of calls to the judge (limits.go): one for every
	// criterion of the run, and the judge's limits shared with every
	// worker.
	budget, err := r.budgetFor(ctx, run)
	if err != nil {
		return outcome{}, err
	}
	defer budget.close()
	client, err := r.judgeFor(ctx, run, budget)
	if err != nil {
		return outcome{}, err
	}
	noteResent := func() {}
	if c, ok := client.(*judge.Cache); ok && c.Hedge != nil {
		// Written when the execution's calls are over: before the run's
		// end is stored (conclude), or on the way out of a run that
		// stopped.
		var once sync.Once
		noteResent = func() { once.Do(func() { r.noteResent(ctx, run, c.Hedge, log) }) }
		defer noteResent()
	}
	mrun := methods.Run{Settings: run.Settings, MethodSettings: run.MethodSettings, Rubric: run.RubricSnapshot}
	passes := m.Passes(mrun.Rubric)
	rounds := m.Rounds(mrun)
	perRound := (len(ids) + s.BatchSize - 1) / s.BatchSize
	total := perRound * rounds * len(passes)
	memo := methods.NewMemo(run.MethodSettings.Learned)
	// What the method finds out about the endpoint (G-Eval: whether it
	// gives log-probabilities) is found out by the first pending unit of
	// the first pass, the same in every identical run, so that a re-run
	// sends the probe the run before it paid for, which the answer cache
	// holds. Before, the first unit to ask probed, whichever it was.
	memo.StartLead()
	defer memo.EndLead()
	words := m.Words()

	// Every criterion's rounds run side by side under the one budget: a
	// round starts as soon as its own criterion's previous round is done
	// (BatchEval composes a round's batches from the scores of the rounds
	// before it), never waiting for another criterion. The first pass to
	// fail stops the others from starting new calls; calls already sent
	// finish and are stored.
	sh := &sharedSettings{run: &mrun}
	passWork, stopPasses := context.WithCancelCause(work)
	defer stopPasses(nil)
	workers := &unitWorkers{}
	defer workers.close()
	var g errgroup.Group
	for i, pass := range passes {
		g.Go(func() error {
			err := r.runPass(ctx, passWork, m, client, run, sh, pass, i == 0, rounds, total, ids, samples, index, memo, words, workers)
			if err != nil {
				stopPasses(err)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return outcome{}, err
	}
	noteResent()
	return r.conclude(ctx, run.ID, words, run.MethodSettings.MinReadableShare != nil && methods.SamplesAnswers(m))
}

// sharedSettings is the run's method settings as every pass sees them:
// each pass judges with its own copy, and what a pass changes (G-Eval's
// steps for its criterion, what the endpoint was found to support) is
// merged here and stored under the lock, so passes running side by side
// never store over each other's changes.
type sharedSettings struct {
	mu  sync.Mutex
	run *methods.Run
}

// snapshot returns a copy of the settings a pass can change freely.
func (sh *sharedSettings) snapshot() methods.Run {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	c := *sh.run
	c.MethodSettings.GEvalSteps = maps.Clone(sh.run.MethodSettings.GEvalSteps)
	c.MethodSettings.Learned = maps.Clone(sh.run.MethodSettings.Learned)
	return c
}

// loadRunRows is what a run holds of its dataset's rows while it goes:
// their ids in file order, each id's place in it, and each row as the
// judge sees it through the fields (DatasetRow.Sample). Only the rows'
// ids and the fields' columns are read, chunk rows a query
// (models.EachDatasetRowTexts): reading every row with its maps (the
// texts of every column, the ratings) at the run's start, to keep only
// this, was the largest part of a server's memory as a million-sample run
// began. The samples' texts share one backing array.
func loadRunRows(ctx context.Context, db *models.DB, datasetID int64, fields []evaluator.Field, chunk int) (ids []int64, index map[int64]int, samples []evaluator.Sample, err error) {
	n, err := db.CountDatasetRows(ctx, datasetID)
	if err != nil {
		return nil, nil, nil, err
	}
	columns := make([]string, len(fields))
	for i, f := range fields {
		columns[i] = f.Column
	}
	ids = make([]int64, 0, n)
	index = make(map[int64]int, n)
	samples = make([]evaluator.Sample, 0, n)
	var texts []evaluator.Text
	if len(fields) > 0 {
		texts = make([]evaluator.Text, 0, n*len(fields))
	}
	err = db.EachDatasetRowTexts(ctx, datasetID, columns, chunk, func(r models.RowTexts) error {
		index[r.ID] = len(ids)
		ids = append(ids, r.ID)
		s := evaluator.Sample{ID: r.ExternalID}
		if len(fields) > 0 {
			if len(texts)+len(fields) > cap(texts) {
				// More rows than counted (rows added since): a new array
				// for the rest; the samples before keep theirs.
				texts = make([]evaluator.Text, 0, max(len(fields)*chunk, cap(texts)/2))
			}
			start := len(texts)
			for i, f := range fields {
				texts = append(texts, evaluator.Text{Label: f.Label, Value: r.Texts[i]})
			}
			s.Fields = texts[start:len(texts):len(texts)]
		}
		samples = append(samples, s)
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return ids, index, samples, nil
}

// runPass judges one pass (one criterion, or all of them for methods that
// judge every criterion in one call) through all its rounds. The lead
// pass's first pending unit is the memo's lead unit (Memo.StartLead).
func (r *Runner) runPass(ctx, work context.Context, m methods.Method, client Completer, run models.Run, sh *sharedSettings,
	pass []int, lead bool, rounds, total int, ids []int64, samples []evaluator.Sample, index map[int64]int, memo *methods.Memo, words methods.Words,
	workers *unitWorkers) error {
	if lead {
		// However the pass ends, the other passes' units stop waiting.
		defer memo.EndLead()
	}
	ci := pass[0]
	mrun := sh.snapshot()
	// known holds the pass's finished rounds' scores once planRound has
	// read them (by round, by row index).
	var known [][]float64
	for round := 0; round < rounds; round++ {
		if err := r.stopping(work); err != nil {
			return err
		}
		if err := r.db.SetRunPlan(ctx, run.ID, total, ci, round); err != nil {
			return err
		}
		if su, ok := m.(methods.Setupper); ok && round == 0 {
			if err := r.setup(ctx, work, su, client, run.ID, run.JudgeSnapshot, sh, &mrun, pass); err != nil {
				return err
			}
		}
		batches, err := r.db.RoundBatches(ctx, run.ID, ci, round)
		if err != nil {
			return err
		}
		if len(batches) == 0 {
			plan, err := r.planRound(ctx, m, mrun, run.ID, ci, round, ids, index, &known)
			if err != nil {
				return err
			}
			if batches, err = r.db.CreateRoundBatches(ctx, run.ID, ci, round, plan); err != nil {
				return err
			}
		}
		failed, err := r.runRound(ctx, work, m, client, run, mrun, pass, lead && round == 0, batches, samples, index, memo, workers)
		if lead {
			memo.EndLead()
		}
		if serr := r.recordLearned(ctx, run.ID, sh, memo); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			return err
		}
		if failed == len(batches) {
			where := ""
			if words.Round != "" {
				where = fmt.Sprintf(" of %s %d", words.Round, round+1)
			}
			return fmt.Errorf("every %s%s of %q failed, even when tried again: the judge is not answering usefully (see the %s for its errors)",
				words.Unit, where, mrun.Rubric.Criteria[ci].Name, words.Units)
		}
	}
	return nil
}

// recordLearned stores, with the run's method settings, what the method
// learned about the endpoint during the round, when that is new.
func (r *Runner) recordLearned(ctx context.Context, runID int64, sh *sharedSettings, memo *methods.Memo) error {
	known := memo.Known()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if len(known) == 0 || maps.Equal(known, sh.run.MethodSettings.Learned) {
		return nil
	}
	sh.run.MethodSettings.Learned = known
	return r.db.UpdateRunMethodSettings(context.WithoutCancel(ctx), runID, sh.run.MethodSettings)
}

// conclude decides how a run that went through every unit ends, from its
// stored scores: failed when none could be read, finished with gaps when
// some are missing, succeeded otherwise. tooFew says the run's scores may
// also be missing for too few readable answers (a sampling run with a
// fewest readable answers for a score), which its reason then names.
func (r *Runner) conclude(ctx context.Context, runID int64, words methods.Words, tooFew bool) (outcome, error) {
	total, missing, err := r.db.ScoreCounts(ctx, runID)
	if err != nil {
		return outcome{}, err
	}
	why := "failed calls or unreadable answers"
	if tooFew {
		why = "failed calls, unreadable answers or too few readable answers"
	}
	switch {
	case total == 0 || missing == total:
		return outcome{status: models.RunFailed, reason: fmt.Sprintf("no score could be read: all %d scores are missing (%s; see the %s for what the judge said)", total, why, words.Units)}, nil
	case missing > 0:
		return outcome{status: models.RunFinishedWithGaps, reason: fmt.Sprintf("%d of %d scores are missing (%s)", missing, total, why)}, nil
	}
	return outcome{status: models.RunSucceeded}, nil
}

// setup makes a method's once-per-pass calls and stores what they changed.
// mrun is the pass's own copy; what the setup changed is merged into sh
// and stored from there.
func (r *Runner) setup(ctx, work context.Context, su methods.Setupper, client Completer, runID int64, js models.JudgeSnapshot, sh *sharedSettings, mrun *methods.Run, pass []int) error {
	if err := r.stopping(work); err != nil {
		return err
	}
	calls, stopCalls := r.callContext(ctx) // not WithoutCancel: see callContext
	defer stopCalls()
	res, err := su.Setup(calls, client, mrun, pass)
	if err != nil {
		if res.Calls > 0 || res.PromptTokens+res.CompletionTokens > 0 {
			// Answered but of no use, or billed for an answer that could
			// not be used: the call is counted (and its cost) with the
			// settings as they were.
			sh.mu.Lock()
			cerr := r.db.SaveRunMethodSettings(context.WithoutCancel(ctx), runID, sh.run.MethodSettings, res.PromptTokens, res.CompletionTokens, Cost(js, res.PromptTokens, res.CompletionTokens))
			sh.mu.Unlock()
			if cerr != nil {
				r.log.Warn("count a setup call", "run", runID, "err", cerr)
			}
		}
		if fatal := runLevel(err); fatal != nil {
			return fatal
		}
		return err
	}
	if !res.Changed {
		return nil
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	// Only G-Eval has a setup: it writes its steps for the pass's criteria.
	for _, ci := range pass {
		name := mrun.Rubric.Criteria[ci].Name
		if steps, ok := mrun.MethodSettings.GEvalSteps[name]; ok {
			if sh.run.MethodSettings.GEvalSteps == nil {
				sh.run.MethodSettings.GEvalSteps = map[string]string{}
			}
			sh.run.MethodSettings.GEvalSteps[name] = steps
		}
	}
	// The call was made and paid for: it is counted (and its steps kept)
	// also when the run was cancelled while it was out, which cancels the
	// job's context (the run's events then say so: a late count).
	return r.db.SaveRunMethodSettings(context.WithoutCancel(ctx), runID, sh.run.MethodSettings, res.PromptTokens, res.CompletionTokens, Cost(js, res.PromptTokens, res.CompletionTokens))
}

// planRound asks the method for a round's units and turns them into row ids.
func (r *Runner) planRound(ctx context.Context, m methods.Method, mrun methods.Run, runID int64, ci, round int, ids []int64, index map[int64]int, known *[][]float64) ([][]int64, error) {
	past := func() ([][]float64, error) {
		// The rounds before this one are finished, so their scores no
		// longer change: *known keeps those read for earlier rounds of
		// the pass, and only the rest are read.
		if from := len(*known); from < round {
			byRow, err := r.db.CriterionScores(ctx, runID, ci, from, mrun.Settings.Rounds)
			if err != nil {
				return nil, err
			}
			for k := from; k < round; k++ {
				col := make([]float64, len(ids))
				for i := range col {
					col[i] = math.NaN()
				}
				for rowID, scores := range byRow {
					if i, ok := index[rowID]; ok && k < len(scores) && scores[k] != nil {
						col[i] = *scores[k]
					}
				}
				*known = append(*known, col)
			}
		}
		out := make([][]float64, round)
		for k := range out {
			out[k] = slices.Clone((*known)[k])
		}
		return out, nil
	}
	idx, err := m.Plan(methods.Plan{Run: mrun, Criterion: ci, Round: round, N: len(ids), Past: past})
	if err != nil {
		return nil, err
	}
	out := make([][]int64, len(idx))
	for b, members := range idx {
		for _, i := range members {
			out[b] = append(out[b], ids[i])
		}
	}
	return out, nil
}

// pendingRetry is a unit whose calls failed, held to be tried again at
// the end of its round.
type pendingRetry struct {
	batch models.RunBatch
	first methods.Outcome
	// firstPaid are first's paid calls (judge.PaidLog).
	firstPaid []judge.PaidCall
}

// runRound judges a round's pending units concurrently, then tries the
// failed ones again, and returns how many of the round's units ended failed.
// With lead, its first pending unit is the memo's lead unit.
func (r *Runner) runRound(ctx, work context.Context, m methods.Method, client Completer, run models.Run, mrun methods.Run,
	pass []int, lead bool, batches []models.RunBatch, samples []evaluator.Sample, index map[int64]int, memo *methods.Memo, workers *unitWorkers) (int, error) {
	concurrency := max(1, run.JudgeSnapshot.MaxConcurrency)
	var mu sync.Mutex
	failed := 0
	var retries []pendingRetry
	judgeAll := func(todo []pendingRetry, last, lead bool) error {
		if lead && len(todo) == 0 {
			memo.EndLead()
		}
		// Units start ahead of their turn to call the judge, so that
		// their cache lookups are made together (lookahead.go); the
		// turns keep the calls within the concurrency. They run on the
		// execution's kept goroutines (workers.go).
		g, gctx := workers.group(work, concurrency+unitLookahead)
		turns := newUnitTurns(concurrency, gctx, r)
		for k, t := range todo {
			isLead := lead && k == 0
			g.Go(func() error {
				if isLead {
					// The others wait for the lead only until it has
					// judged (or never will).
					defer memo.EndLead()
				}
				if err := r.stopping(gctx); err != nil {
					r.leavePending(ctx, run, t, methods.Outcome{}, t.firstPaid)
					return err
				}
				// Was context.WithoutCancel(gctx): then Kill, and Stop
				// once out of patience, waited for hung calls for good.
				calls, stopCalls := r.callContext(ctx)
				defer stopCalls()
				tn := &turn{turns: turns}
				defer tn.done()
				calls = withRound(withTurn(calls, tn), t.batch.Round)
				// A batch never stored has counted nothing: answers the
				// run stored for it before a crash are its paid calls.
				// The answer cache notes the unit's paid calls with their
				// identities, stored with its answer (countRefused).
				paidLog := &judge.PaidLog{}
				calls = judge.WithUnit(calls, judge.Unit{ID: t.batch.ID, Uncounted: t.batch.Calls == 0, Paid: paidLog})
				u := methods.Unit{Run: mrun, Criteria: pass, Round: t.batch.Round, Memo: memo, Lead: isLead}
				for _, id := range t.batch.RowIDs {
					u.Samples = append(u.Samples, samples[index[id]])
				}
				o := m.Judge(calls, client, u)
				paid := append(slices.Clip(t.firstPaid), paidLog.Calls()...)
				if o.Answered == 0 && errors.Is(o.Err, errRoundHalted) {
					// Never called: the unit that halted the round says
					// why, and this one stays pending (with what its
					// first try, or a billed failed call, cost counted).
					r.leavePending(ctx, run, t, o, paid)
					return nil
				}
				if o.Err != nil {
					if fatal := runLevel(o.Err); fatal != nil {
						// Before this unit's turn is given back.
						turns.halt()
						// A follow-up call (a repair, a top-up) met the
						// stop: the spending cap refused it, the judge
						// asked to wait, the run is stopping. Stored
						// done, the unit would keep its missing scores
						// for good; it stays pending for the resume,
						// which sends the call. What the answered calls
						// cost, and its failed first try's, is counted
						// now (a resume replays their answers from the
						// answer cache at no cost).
						r.leavePending(ctx, run, t, o, paid)
						return fatal
					}
				}
				if o.Failed && !last {
					if t.first.Calls > 0 || t.first.Attempts > 0 {
						// Not the last retry: the next one counts both.
						o = retried(t.first, o)
					}
					mu.Lock()
					retries = append(retries, pendingRetry{batch: t.batch, first: o, firstPaid: paid})
					mu.Unlock()
					return nil
				}
				if t.first.Calls > 0 || t.first.Attempts > 0 {
					o = retried(t.first, o)
				}
				if o.Failed {
					mu.Lock()
					failed++
					mu.Unlock()
				}
				res := r.result(run, t.batch, pass, o)
				res.Paid = paidCalls(run, paid)
				return r.store(context.WithoutCancel(ctx), run, res, nil)
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		return r.stopping(work)
	}

	var todo []pendingRetry
	for _, b := range batches {
		switch b.Status {
		case models.BatchPending:
			todo = append(todo, pendingRetry{batch: b})
		case models.BatchFailed:
			failed++
		}
	}
	// A unit waiting for its retry when the round stops stays pending:
	// what its failed try paid for is counted now.
	leaveRetries := func() {
		for _, p := range retries {
			r.leavePending(ctx, run, pendingRetry{batch: p.batch}, p.first, p.firstPaid)
		}
	}
	if err := judgeAll(todo, failedUnitRetries == 0, lead); err != nil {
		leaveRetries()
		return 0, err
	}
	for attempt := 1; attempt <= failedUnitRetries && len(retries) > 0; attempt++ {
		todo, retries = retries, nil
		if err := judgeAll(todo, attempt == failedUnitRetries, false); err != nil {
			leaveRetries()
			return 0, err
		}
	}
	return failed, nil
}

// leavePending counts on the run what a unit left pending for the resume
// made (its answer is not stored, so the store counts nothing): o, the try
// that met the stop (zero when it never called), together with its failed
// first try, t.first, which waited for the end-of-round retry; paid are
// the calls of both that went out (judge.PaidLog: the answered ones, the
// answers replayed as paid, and those that failed after they were sent).
// The run counts those calls, their tokens and cost, and the calls the
// answer cache answered (free, counted as cached calls as they came) as
// the store counts them; a call that never went out (refused before it
// was sent) is not counted. Every paid call reaches the run once: here,
// or with the stored answer. It is counted even when this execution has
// lost the run's lease meanwhile: the money was spent all the same, and
// the count is kept by the calls' identities, so the successor's answer
// replaying those calls does not count them again (models.AddUnitSpend).
func (r *Runner) leavePending(ctx context.Context, run models.Run, t pendingRetry, o methods.Outcome, paid []judge.PaidCall) {
	if t.first.Calls > 0 || t.first.Attempts > 0 {
		o = retried(t.first, o)
	}
	s := models.SpendOf(paidCalls(run, paid))
	// The answered calls that are not in paid came from the answer cache.
	answered := 0
	for _, c := range paid {
		if !c.Failed {
			answered++
		}
	}
	s.Calls += max(o.Answered-answered, 0)
	if err := r.db.AddUnitSpend(context.WithoutCancel(ctx), run.ID, t.batch.ID, s); err != nil {
		r.log.Warn("count the paid calls of a unit left for the resume", "run", run.ID, "batch", t.batch.ID, "err", err)
	}
}

// paidCalls are a unit's paid calls as its stored answer keeps them,
// each priced as the run prices its calls.
func paidCalls(run models.Run, calls []judge.PaidCall) []models.PaidCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]models.PaidCall, len(calls))
	for i, c := range calls {
		out[i] = models.PaidCall{ID: c.ID, PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens,
			Cost: Cost(run.JudgeSnapshot, c.PromptTokens, c.CompletionTokens), Replayed: c.Replayed}
	}
	return out
}

// retried merges the failed first try of a unit into its retry: every
// call made is counted, and the first failure is noted.
func retried(first, again methods.Outcome) methods.Outcome {
	again.Calls += first.Calls
	again.Answered += first.Answered
	again.Attempts += first.Attempts
	again.PromptTokens += first.PromptTokens
	again.CompletionTokens += first.CompletionTokens
	again.Latency += first.Latency
	note := "tried again at the end of the round after failing: " + first.Err.Error()
	if again.Failed {
		note = "failed again when tried at the end of the round; first failure: " + first.Err.Error()
	}
	again.Problems = append([]string{note}, again.Problems...)
	if again.Details == nil {
		again.Details = map[string]any{}
	}
	again.Details["retried"] = true
	return again
}

// result turns a unit's outcome into what is stored: the batch with its
// exchange, and one score per sample and criterion of the pass (missing
// for a failed unit).
func (r *Runner) result(run models.Run, b models.RunBatch, pass []int, o methods.Outcome) models.BatchResult {
	b.Status = models.BatchDone
	if o.Failed {
		b.Status = models.BatchFailed
		if o.Err != nil {
			b.Error = o.Err.Error()
			b.ErrorKind = FailureKind(o.Err)
		}
	}
	b.Request, b.Response = o.Request, o.Response
	b.RepairRequest, b.RepairResponse = o.RepairRequest, o.RepairResponse
	b.Problems = o.Problems
	if b.Problems == nil {
		b.Problems = []string{}
	}
	b.Details = o.Details
	b.Calls, b.Attempts = o.Calls, o.Attempts
	b.PromptTokens, b.CompletionTokens = o.PromptTokens, o.CompletionTokens
	b.LatencyMS = o.Latency.Milliseconds()
	out := models.BatchResult{Batch: b, Cost: Cost(run.JudgeSnapshot, b.PromptTokens, b.CompletionTokens)}
	score := func(ci, k int, v *float64, analysis string) {
		out.Scores = append(out.Scores, models.RunScore{RunID: run.ID, BatchID: b.ID, CriterionIndex: ci, Round: b.Round,
			RowID: b.RowIDs[k], Label: k + 1, Score: v, Analysis: analysis})
	}
	if o.Failed {
		for _, ci := range pass {
			for k := range b.RowIDs {
				score(ci, k, nil, "")
			}
		}
		return out
	}
	short := o.Received < o.Asked
	tooFew, _ := o.Details["too_few_readable"].(bool)
	for _, sc := range o.Scores {
		if sc.Sample >= 0 && sc.Sample < len(b.RowIDs) {
			score(sc.Criterion, sc.Sample, sc.Value, sc.Analysis)
			if tooFew && sc.Value == nil {
				// Left missing for too few readable answers: counted
				// apart from the unreadable ones (among the missing).
				out.TooFewScores++
			}
			if short && sc.Value != nil {
				// Scored from fewer sampled answers than asked: counted
				// on the run (a missing score is counted as missing).
				out.ShortScores++
			}
		}
	}
	return out
}

// callContext is the context judge calls run under. A call already sent
// outlives a cancelled run, a lost lease or a cancelled job (River's
// JobCancel), so its answer is stored; it does not outlive a hard stop of
// the worker (Kill, or Stop out of patience: River's StopAndCancel), which
// must return promptly, as a crash would.
//
// A graceful stop (Stop) cancels the job's context too, once River counts
// no job running: River knows a running job by its id, and an execution
// whose job was requeued (its lease lapsed in a database outage) and
// fetched again by this process is no longer counted once the second
// execution has ended. Its calls still out finish then, unless the stop
// turns hard: each is a paid call, whose answer is counted (Stop waits for
// the execution, waitJobs).
func (r *Runner) callContext(job context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(job))
	stop := context.AfterFunc(job, func() {
		cause := context.Cause(job)
		if errors.Is(cause, river.ErrJobCancelledRemotely) {
			return
		}
		select {
		case <-r.draining:
			select {
			case <-r.hard:
			default:
				// A graceful stop: the call is cut only if the stop
				// turns hard before it ends (r.hard is nil in a runner
				// built without New: never).
				go func() {
					select {
					case <-r.hard:
						cancel(cause)
					case <-ctx.Done():
					}
				}()
				return
			}
		default:
		}
		cancel(cause)
	})
	return ctx, func() { stop(); cancel(nil) }
}

// saveResult stores one answer. On SQLite, which takes one writer at a
// time, this process's answers wait for the write lock in Go rather than
// inside SQLite (whose busy handler sleeps in steps of up to 100 ms: a run
// at concurrency 16 spent most of its time asleep there), and the answers
// that arrive while a write is under way are committed together in the
// next one (group commit, models.SaveBatchResults): a commit is most of a
// write's CPU. Each answer's call returns once its own transaction has
// committed, so an answer is as durable as when it was stored alone.
// PostgreSQL takes writes side by side: each is stored at once.
func (r *Runner) saveResult(ctx context.Context, res models.BatchResult) error {
	w := &pendingSave{item: models.BatchSave{Result: res, Owner: models.LeaseOwnerFrom(ctx)}, done: make(chan struct{})}
	// The write reads the run's lease (its fence): the next call's fence
	// can take that read (leaseNews).
	news := leaseNewsFrom(ctx)
	if r.db.Dialect != models.SQLite {
		// The lease comes with the write's statement, often more than
		// leaseNewsFresh after the next call's fence: fences take it
		// while fresh, and do not wait for it.
		if news != nil && w.item.Owner != "" {
			w.item.OnLease = news.note
		}
		// The cached answers queued meanwhile (this call's, parsed in
		// between) go in the same statement: one round trip.
		items := append([]models.BatchSave{w.item}, r.takeCached()...)
		errs := r.db.SaveBatchResults(ctx, items)
		for i, err := range errs[1:] {
			if err != nil {
				r.keepUnsaved(items[1+i], err)
			}
		}
		return errs[0]
	}
	if news != nil && w.item.Owner != "" {
		lw := news.expect()
		w.item.OnLease = lw.tell
		defer lw.end()
	}
	r.saves.mu.Lock()
	r.saves.pending = append(r.saves.pending, w)
	if r.saves.writing {
		r.saves.mu.Unlock()
		<-w.done
		return w.err
	}
	// Nobody is writing: this answer's caller writes the group itself (it
	// would only wait otherwise), and hands what arrives meanwhile to a
	// goroutine. Writing through a goroutine woke two goroutines per
	// answer, which cost more CPU than the write on a small machine.
	r.saves.writing = true
	r.saves.mu.Unlock()
	if r.writeGroup() {
		go r.writeSaves()
	}
	<-w.done
	return w.err
}

// saveAnswer stores a judge answer in the workspace's answer cache. It is
// queued and not waited for: the call's batch result follows it within a
// few microseconds (the answer is parsed in between) and is committed in
// the same transaction (SQLite's group commit) or statement (PostgreSQL,
// takeCached), where a commit of its own cost about as much CPU as the
// rest of the call's writes. An answer that no batch result follows (its unit was stopped)
// is written after answerLinger at the latest, and Stop writes what is
// left. Both stay durable as soon as their transaction commits; what a
// crash in the microseconds before that commit loses is the same answer
// it lost before (its batch result was not stored either).
func (r *Runner) saveAnswer(ctx context.Context, rc *models.ResponseCache, hash string, occurrence int, answer []byte) error {
	a := rc.Answer(hash, occurrence, answer)
	r.saves.mu.Lock()
	defer r.saves.mu.Unlock()
	r.saves.pending = append(r.saves.pending, &pendingSave{item: models.BatchSave{Cached: &a}})
	if !r.saves.writing && !r.saves.lingering {
		r.saves.lingering = true
		wait := cmp.Or(r.saves.lingerFor, answerLinger)
		if r.saves.linger == nil {
			r.saves.linger = time.AfterFunc(wait, r.flushAnswers)
		} else {
			r.saves.linger.Reset(wait)
		}
	}
	return nil
}

// takeCached takes the cached answers waiting in the queue (PostgreSQL,
// where only they wait there), for the caller to store with its answer.
func (r *Runner) takeCached() []models.BatchSave {
	r.saves.mu.Lock()
	defer r.saves.mu.Unlock()
	if r.saves.writing || len(r.saves.pending) == 0 {
		return nil
	}
	items := make([]models.BatchSave, len(r.saves.pending))
	for i, w := range r.saves.pending {
		items[i] = w.item
	}
	r.saves.pending = nil
	if r.saves.lingering && r.saves.linger.Stop() {
		r.saves.lingering = false
	}
	return items
}

// answerLinger bounds how long a cached answer waits for a batch result to
// share its commit.
const answerLinger = 20 * time.Millisecond

// flushGrace bounds how long stopping waits for queued answers to be
// written: a write takes milliseconds, one held up by a database that
// does not answer must not hold the stop for ever.
const flushGrace = 5 * time.Second

// flushAnswers writes the queue if nobody is writing it.
func (r *Runner) flushAnswers() {
	r.saves.mu.Lock()
	r.saves.lingering = false
	if r.saves.writing || len(r.saves.pending) == 0 {
		r.saves.mu.Unlock()
		return
	}
	r.saves.writing = true
	r.saves.mu.Unlock()
	r.writeSaves()
}

// flushSaves writes everything queued and waits until the queue is idle
// (Stop, Kill). It takes its own grace rather than ctx's: Stop may come
// here with its deadline spent, and the caller closes the database next,
// under a writer still at work (the cached answers it holds are paid for).
func (r *Runner) flushSaves(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushGrace)
	defer cancel()
	for {
		r.saves.mu.Lock()
		switch {
		case len(r.saves.pending) == 0 && !r.saves.writing:
			r.saves.mu.Unlock()
			return
		case !r.saves.writing:
			r.saves.writing = true
			r.saves.mu.Unlock()
			r.writeSaves()
			continue
		}
		r.saves.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// maxGroupCommit bounds the answers of one transaction: a group this big
// already shares its commit's cost 64 ways, and a bigger one would only
// hold the write lock longer against other writers.
const maxGroupCommit = 64

// saveQueue is the answers waiting for this process's next SQLite write.
type saveQueue struct {
	mu      sync.Mutex
	pending []*pendingSave
	// unsaved are paid answers for the cache whose write failed with a
	// database error worth waiting out (a full disk, a database down for
	// longer than the retries): kept here, not dropped, and stored before
	// this process starts its next execution (storeUnsaved), so that the
	// resume of their run replays them instead of paying for them again.
	unsaved []models.BatchSave
	writing bool // a writer is writing the queue's groups
	// lingering: linger, a timer, will write queued cached answers
	// (saveAnswer); it is stopped when a group takes them first.
	lingering bool
	linger    *time.Timer
	// lingerFor is how long linger waits; zero is answerLinger. Tests
	// that must see the timer stopped before it could fire set it long.
	lingerFor time.Duration
}

// pendingSave is one item waiting for the writer; done is nil for a cached
// answer, which nobody waits for.
type pendingSave struct {
	item models.BatchSave
	done chan struct{}
	err  error
}

// writeSaves stores the waiting answers, a group at a time, until none
// waits.
func (r *Runner) writeSaves() {
	for r.writeGroup() {
	}
}

// writeGroup stores the next group of waiting answers in one transaction.
// It reports whether answers are still waiting; when none is, the writer
// is done (writing is cleared).
func (r *Runner) writeGroup() bool {
	r.saves.mu.Lock()
	n := min(len(r.saves.pending), maxGroupCommit)
	if n == 0 {
		r.saves.writing = false
		r.saves.mu.Unlock()
		return false
	}
	group := r.saves.pending[:n:n]
	r.saves.pending = append([]*pendingSave(nil), r.saves.pending[n:]...)
	if r.saves.lingering && len(r.saves.pending) == 0 && r.saves.linger.Stop() {
		// The cached answers it waited for are in this group: the timer
		// would only wake the process, a call later at concurrency 1,
		// to find nothing to write.
		r.saves.lingering = false
	}
	r.saves.mu.Unlock()
	items := make([]models.BatchSave, len(group))
	for i, w := range group {
		items[i] = w.item
	}
	// Stores outlive the execution that made the answer (it is paid
	// for); each answer carries its own lease owner.
	errs := r.db.SaveBatchResults(context.Background(), items)
	for i, w := range group {
		w.err = errs[i]
		if w.done != nil {
			close(w.done)
		} else if errs[i] != nil {
			r.keepUnsaved(w.item, errs[i])
		}
	}
	r.saves.mu.Lock()
	more := len(r.saves.pending) > 0
	if !more {
		r.saves.writing = false
	}
	r.saves.mu.Unlock()
	return more
}

// keepUnsaved handles a cached answer whose write failed: one the
// database may take later (IsTransient) is kept for storeUnsaved; any
// other is dropped, as before (the run has its answer; a re-run asks the
// judge again).
func (r *Runner) keepUnsaved(it models.BatchSave, err error) {
	if it.Cached == nil || !models.IsTransient(err) {
		r.log.Warn("store a judge answer in the answer cache", "err", err)
		return
	}
	r.log.Warn("store a judge answer in the answer cache: kept to store again before the run resumes", "run", it.Cached.RunID, "err", err)
	r.saves.mu.Lock()
	r.saves.unsaved = append(r.saves.unsaved, it)
	r.saves.mu.Unlock()
}

// storeUnsaved stores the kept answers (keepUnsaved). It returns a
// database error worth waiting out when some could still not be stored:
// they stay kept, and the caller should not start sending calls, which
// could ask the judge again for an answer this process holds.
func (r *Runner) storeUnsaved(ctx context.Context) error {
	r.saves.mu.Lock()
	items := r.saves.unsaved
	r.saves.unsaved = nil
	r.saves.mu.Unlock()
	if len(items) == 0 {
		return nil
	}
	errs := r.db.SaveBatchResults(context.WithoutCancel(ctx), items)
	var first error
	stored := 0
	for i, err := range errs {
		switch {
		case err == nil:
			stored++
		case models.IsTransient(err):
			first = cmp.Or(first, err)
			r.saves.mu.Lock()
			r.saves.unsaved = append(r.saves.unsaved, items[i])
			r.saves.mu.Unlock()
		default:
			r.log.Warn("store a judge answer in the answer cache", "run", items[i].Cached.RunID, "err", err)
		}
	}
	if stored > 0 {
		r.log.Info("stored judge answers kept through a database outage", "answers", stored)
	}
	return first
}

// dropUnsaved logs the kept answers this process could not store before
// it stops: their runs will ask the judge for them again.
func (r *Runner) dropUnsaved() {
	r.saves.mu.Lock()
	items := r.saves.unsaved
	r.saves.unsaved = nil
	r.saves.mu.Unlock()
	for _, it := range items {
		r.log.Error("a paid judge answer could not be stored before this process stopped: its run will ask the judge again", "run", it.Cached.RunID)
	}
}

// stopping reports why no new call should start, if any.
func (r *Runner) stopping(work context.Context) error {
	select {
	case <-r.draining:
		return errDraining
	default:
	}
	if cause := context.Cause(work); cause != nil {
		return cause
	}
	return nil
}

// Cost prices tokens; nil when either price is unknown (never 0 for unknown).
func Cost(j models.JudgeSnapshot, promptTokens, completionTokens int) *float64 {
	return j.Cost(promptTokens, completionTokens)
}

// judgeUnusable stops a run whose judge cannot answer any call as it is
// set up (bad credentials, a wrong model or address). Its text is what the
// run page says after "This run failed:", so it speaks of the judge's
// settings rather than of the code path ("stopping the run: judge: ..."
// read as an internal trace); the run page knows it by its opening,
// models.JudgeSettingsStop.
type judgeUnusable struct{ err *judge.Error }

func (e *judgeUnusable) Error() string {
	return models.JudgeSettingsStop + ": " + e.err.InRun()
}

func (e *judgeUnusable) Unwrap() error { return e.err }

// runLevel returns the error that stops or pauses the whole run, or nil
// when the failure only concerns this batch.
func runLevel(err error) error {
	var je *judge.Error
	if !errors.As(err, &je) {
		return err
	}
	switch {
	case je.Kind == judge.KindCancelled:
		return err
	case je.Hint != "":
		// A slip in the judge's settings the client named (an Azure
		// per-deployment address without its api-version, which may
		// answer 400): every call meets it, and the run's failure says
		// what to change, as Test connection does.
		return &judgeUnusable{err: je}
	}
	switch je.Kind {
	case judge.KindAuth, judge.KindNotFound, judge.KindRefused, judge.KindPayment, judge.KindNotAPI:
		// Bad credentials, a wrong model or URL (or one that answers
		// with a web page), an address the egress policy refuses (or a
		// redirect), or an account out of credits:
		// no retry or later batch can succeed, so the run stops instead
		// of failing every batch.
		return &judgeUnusable{err: je}
	case judge.KindRateLimited:
		after := je.RetryAfter
		if after <= 0 {
			after = time.Minute
		}
		return &rateLimited{after: after, err: je}
	}
	return nil
}

// DecodeMessages reads a stored request back.
func DecodeMessages(s string) []evaluator.Message {
	var msgs []evaluator.Message
	if err := json.Unmarshal([]byte(s), &msgs); err != nil {
		return []evaluator.Message{{Role: "user", Content: strings.TrimSpace(s)}}
	}
	return msgs
}

// store saves what a batch produced, if anything, then returns err (a
// run-level failure that may come with a stored answer). An answer another
// execution already stored is not an error: it is simply not stored twice.
func (r *Runner) store(ctx context.Context, run models.Run, res models.BatchResult, err error) error {
	if res.Batch.Status != "" {
		name := judgeName(run.JudgeSnapshot)
		serr := r.saveResult(ctx, res)
		if errors.Is(serr, models.ErrLeaseLost) && res.Batch.Status != models.BatchDone {
			// A failure that came back after this worker lost the run is
			// not stored (the batch is left for whoever holds the run to
			// try again), but its calls may be paid for: they are
			// counted, once, as the store counts a failed unit's (its
			// calls, and the tokens the endpoint billed); this worker
			// stops all the same.
			if lerr := r.db.AddUnitSpend(ctx, run.ID, res.Batch.ID, res.Spend()); lerr != nil {
				r.log.Warn("count the paid calls of a failure that came back after the lease was lost", "run", res.Batch.RunID, "judge", name, "batch", res.Batch.ID, "err", lerr)
			} else {
				r.log.Info("late failure counted after the lease was lost", "run", res.Batch.RunID, "judge", name, "batch", res.Batch.ID)
			}
		}
		if errors.Is(serr, models.ErrLeaseLost) && res.Batch.Status == models.BatchDone {
			// The answer came back after this worker lost the run: it is
			// paid for, so keep it if the batch still has none (the new
			// holder then skips it); this worker stops all the same.
			if lerr := r.db.SaveLateBatchResult(ctx, res); lerr == nil {
				r.log.Info("late answer stored after the lease was lost", "run", res.Batch.RunID, "judge", name, "batch", res.Batch.ID)
				r.metrics.lateAnswers.WithLabelValues(judgeMetricLabel(run)).Inc()
			} else if models.ErrorCode(lerr) == models.EConflict {
				serr = lerr
			}
		}
		if serr != nil {
			if models.ErrorCode(serr) != models.EConflict {
				return serr
			}
			// It was paid for all the same: the store that refused it
			// counted its calls, tokens and cost on the run (its scores
			// do not count), in the transaction that found the conflict.
			r.log.Warn("batch already answered by another execution; this answer is not stored, its cost is counted", "run", res.Batch.RunID, "judge", name, "batch", res.Batch.ID)
		}
	}
	return err
}

// FailureKind classifies a failed call's error for storage: the judge
// client's kind (evaluator/judge.ErrorKind), or "other" for anything else.
func FailureKind(err error) string {
	var je *judge.Error
	if errors.As(err, &je) && je.Kind != "" {
		return string(je.Kind)
	}
	return "other"
}

// statsAtOnce bounds the finished runs whose statistics one process
// computes at the same time (each is CPU-bound, and seconds to a minute of
// a core for a large run).
const statsAtOnce = 2

// afterFinish computes a finished run's statistics once and stores them
// for the pages and exports (report.StoreStats).
// It works in the background: the job's slot, and so the worker's next
// run, does not wait for a finished run's figures (tens of milliseconds
// for a small run, a minute for a million samples). Stop waits for it
// within its deadline; a failure, or a process that dies first, only
// means that the first page to need the figures computes them. The
// caller has counted it in r.finishing.
func (r *Runner) afterFinish(wsID, runID int64, log *slog.Logger) {
	go func() {
		defer r.finishing.done()
		defer r.storing.Delete(runID)
		store := r.storeStats
		if store == nil {
			store = report.StoreStats
		}
		serr := func() (err error) {
			r.statsSlots <- struct{}{}
			defer func() { <-r.statsSlots }()
			// River recovers a panic of the job, not of this goroutine,
			// and the process may be the web server too: a panic is one
			// more failure to store the statistics.
			defer func() {
				if p := recover(); p != nil {
					err = fmt.Errorf("computing the statistics panicked: %v\n%s", p, debug.Stack())
				}
			}()
			return store(context.Background(), r.db, wsID, runID)
		}()
		if serr != nil {
			log.Warn("run statistics not stored", "err", serr)
		}
	}()
}

// StoringStats says whether this process is computing the statistics and
// summary of finished run runID (afterFinish), or about to: a reader that
// finds no stored summary of a large run waits for them rather than
// building the same figures a second time beside them (at a million
// samples, another 1.5 GB of memory at once).
func (r *Runner) StoringStats(runID int64) bool {
	if r == nil {
		return false
	}
	_, ok := r.storing.Load(runID)
	return ok
}

// WaitStats waits, until ctx ends, for the statistics of finished runs
// being computed in the background (afterFinish): of every run this
// process has shown as finished. A reader that changes a finished run's
// stored scores (a test, a tool) waits first, or the figures computed from
// the scores before its change may be stored after it.
func (r *Runner) WaitStats(ctx context.Context) {
	r.finishing.wait(ctx)
}
