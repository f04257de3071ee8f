package runner

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// This file guards every HTTP attempt a run's judge client makes:
//   - fencing: the worker checks it still holds the run's lease (and the
//     run is still running) right before sending; a worker that lost its
//     lease, was frozen past it, or whose run was cancelled sends nothing;
//   - circuit breaker: after consecutive connection failures, 5xx or
//     timeouts the run waits ("waiting for judge", with the last error on
//     the run page) while one cheap probe at a time checks the judge, and
//     goes on when it answers, instead of failing batch after batch;
//   - metrics: every attempt's latency, outcome, tokens and retries.
// It plugs into the judge client through judge.Config's BeforeAttempt and
// AfterAttempt hooks, set in one place (guardJudge, called by judgeFor).
// Each execution of a run has its own guard, so the breaker is per run.

// Breaker defaults; Config.Breaker overrides them (tests use milliseconds).
const (
	// DefaultBreakerThreshold: three failures in a row, with no success in
	// between, is an outage rather than a blip (a blip is what the judge
	// client's own retries are for).
	DefaultBreakerThreshold = 3
	// DefaultProbeInterval: a restarted local server is back within
	// seconds; probing more often would only add load to a struggling one.
	DefaultProbeInterval = 5 * time.Second
)

// BreakerConfig tunes the per-run circuit breaker.
type BreakerConfig struct {
	// Threshold is how many consecutive failed attempts (network, 5xx,
	// timeout) open the breaker; 0 means DefaultBreakerThreshold, negative
	// turns the breaker off.
	Threshold int
	// ProbeInterval is the wait between probes while open.
	ProbeInterval time.Duration
}

// errRunCancelled is what a guard reports when the run it guards is no
// longer running (cancelled): no new attempt starts.
var errRunCancelled = fmt.Errorf("%w (the run is no longer running)", errCancelled)

// leaseLost reports whether the execution stopped because its lease is gone.
func leaseLost(work context.Context, err error) bool {
	return errors.Is(context.Cause(work), errLeaseLost) || errors.Is(err, models.ErrLeaseLost)
}

// guardJudge installs the fence, the breaker and the metrics on cfg, the
// judge configuration of one execution of run. ctx carries the execution's
// lease owner (models.WithLeaseOwner); without one nothing is fenced.
// spend is the run's spending cap (nil: none), which its probes draw on.
func (r *Runner) guardJudge(ctx context.Context, run models.Run, cfg judge.Config, b *budget, spend *spendCap) judge.Config {
	if cfg.TimeoutRetries == 0 {
		cfg.TimeoutRetries = r.cfg.JudgeTuning.TimeoutRetries
	}
	name := judgeName(run.JudgeSnapshot)
	g := &callGuard{r: r, runID: run.ID, owner: models.LeaseOwnerFrom(ctx), news: leaseNewsFrom(ctx), judge: judgeMetricLabel(run),
		log: r.log.With("run", run.ID, "judge", name), ctx: ctx, budget: b, spend: spend}
	// The workspace's permission to reach the private and loopback
	// addresses the operator allows, asked at every connection of the
	// run's calls and its probes (models.DB.NetworkPermit): a run of a
	// workspace whose grant is revoked connects there no more.
	if r.db != nil { // nil only in tests of the guard alone
		g.grant = r.db.NetworkPermit(run.WorkspaceID)
	}
	probeCfg := cfg
	probeCfg.MaxAttempts = 1
	if probeCfg.HTTPClient == nil {
		probeCfg.HTTPClient = judge.GrantedClient(g.grant)
	}
	g.probeCfg = probeCfg
	bc := r.cfg.Breaker
	if bc.Threshold == 0 {
		bc.Threshold = DefaultBreakerThreshold
	}
	if bc.ProbeInterval <= 0 {
		bc.ProbeInterval = DefaultProbeInterval
	}
	g.breaker = bc
	// The client's limits, as it applies them (judge.Config's defaults):
	// which rate-limited attempts it retries after sleeping in the call.
	g.maxAttempts, g.maxRetryAfter = cfg.MaxAttempts, cfg.MaxRetryAfter
	if g.maxAttempts <= 0 {
		g.maxAttempts = judge.DefaultMaxAttempts
	}
	if g.maxRetryAfter <= 0 {
		g.maxRetryAfter = judge.DefaultMaxRetryAfter
	}
	cfg.BeforeAttempt = g.before
	cfg.AfterAttempt = g.after
	// Was the default transport with a plain dialer: runs then connected
	// wherever the judge's URL pointed and followed redirects, whatever
	// the egress policy said.
	hc := fencedClient(g, max(1, run.JudgeSnapshot.MaxConcurrency))
	if cfg.HTTPClient != nil {
		hc = cfg.HTTPClient
		if hc.Transport == nil {
			hc.Transport = fencedClient(g, max(1, run.JudgeSnapshot.MaxConcurrency)).Transport
		}
		c := *hc
		hc = &c
	}
	hc.Transport = fenceTransport{base: hc.Transport, g: g}
	cfg.HTTPClient = hc
	cfg.Header = cfg.Header.Clone()
	if cfg.Header == nil {
		cfg.Header = http.Header{}
	}
	cfg.Header.Set(WorkerHeader, r.Tag())
	return cfg
}

// judgeName is how logs and metrics name a run's judge: its name, or its
// model when it has none.
func judgeName(j models.JudgeSnapshot) string {
	if j.Name == "" {
		return j.Model
	}
	return j.Name
}

// judgeMetricLabel is the judge_id label of a run's metrics: the judge's
// id, not its name. /metrics covers every workspace and its reader is an
// operator, not a member: a judge's name is text people wrote in their
// workspace ("Fake <judge>", a customer's name), and an id tells an
// operator which judge to look up without showing it. "none" for a run
// whose judge is not stored (deleted since).
func judgeMetricLabel(run models.Run) string {
	if run.JudgeID == nil {
		return "none"
	}
	return strconv.FormatInt(*run.JudgeID, 10)
}

// WorkerHeader names the header that tells the judge (and its logs, or a
// proxy's) which worker process sent a request.
const WorkerHeader = "X-Batcheval-Worker"

// Tag is a short, opaque name of this worker process (a hash of its id,
// which holds the host name): sent to the judge in WorkerHeader and logged
// at start, so an operator can match requests to processes.
func (r *Runner) Tag() string {
	h := fnv.New32a()
	h.Write([]byte(r.id))
	return fmt.Sprintf("%08x", h.Sum32())
}

// callGuard is the state shared by the attempts of one run's execution.
type callGuard struct {
	r        *Runner
	runID    int64
	owner    string
	news     *leaseNews // the lease as the execution's writes last read it; may be nil
	judge    string     // the judge's metric label (judgeMetricLabel)
	log      *slog.Logger
	ctx      context.Context // the execution's (job context, lease owner), for the probe loop
	probeCfg judge.Config
	// grant is the run's workspace's network permission (judge.Grant).
	grant   judge.Grant
	breaker BreakerConfig
	// budget learns from every attempt (adaptive concurrency); may be nil.
	budget *budget
	// spend is the run's spending cap; may be nil. The breaker's probes
	// are money spent too: each asks it first and is counted on it.
	spend *spendCap
	// maxAttempts and maxRetryAfter are the judge client's: a rate-limited
	// attempt before the last, with a Retry-After up to maxRetryAfter, is
	// retried after a sleep inside the call (rateWait).
	maxAttempts   int
	maxRetryAfter time.Duration

	// waitMu orders the writes of rate-limit waits (rateWait, rateGoesOn),
	// so that a wait recorded and one cleared land in the order decided.
	waitMu sync.Mutex
	// rateSince and rateUntil are the rate-limit wait shown on the run
	// (zero when none): since when, and when the last call asked to wait
	// goes on. Under waitMu.
	rateSince, rateUntil time.Time

	mu sync.Mutex
	// validUntil is, on this machine's monotonic clock, when the lease as
	// last confirmed in the database runs out; the transport refuses to
	// send after it.
	validUntil time.Time
	// reading is set while a read of the lease is under way; next is the
	// read the checks arriving now will share (nil when none waits).
	reading bool
	next    *leaseRead
	fails   int           // consecutive breaker-relevant failures
	open    chan struct{} // non-nil while the breaker is open; closed when it closes
	last    string        // the error that opened the breaker, then the last probe's
	// capped is set when the spending cap refused a probe: the breaker
	// closed, and every attempt is refused with it, which stops the run.
	capped error
}

// before runs right before each HTTP attempt.
func (g *callGuard) before(ctx context.Context) error {
	if err := g.r.stopping(ctx); err != nil {
		return err
	}
	g.mu.Lock()
	open := g.open
	g.mu.Unlock()
	if open != nil {
		select {
		case <-open:
		case <-g.r.draining:
			return errDraining
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		// The breaker also closes when the process starts shutting down:
		// look again before sending.
		if err := g.r.stopping(ctx); err != nil {
			return err
		}
	}
	g.mu.Lock()
	capped := g.capped
	g.mu.Unlock()
	if capped != nil {
		return capped
	}
	g.rateGoesOn(false)
	return g.fence(ctx)
}

// countRetry counts an attempt that failed with an error worth trying
// again on the run, at once (models.AddRunRetries): the rate-limited
// attempts of a run paused again and again, whose units are never stored,
// used to go uncounted.
func (g *callGuard) countRetry(a judge.AttemptInfo) {
	if a.Err == nil || !a.Err.Temporary() {
		return
	}
	if err := g.r.db.AddRunRetries(context.WithoutCancel(g.ctx), g.runID, 1); err != nil {
		g.log.Warn("count a judge retry", "err", err)
	}
}

// rateWait shows on the run that its calls wait for a rate-limited judge
// (waiting for judge, with why and until when) when the judge client will
// sleep through the judge's Retry-After inside the call: a wait of up to
// maxRetryAfter used to leave the run showing "running" with no reason.
// A longer wait, or the last attempt, ends the call: the run is then put
// aside (Execute, ReleaseLeaseWaiting) and says so itself.
func (g *callGuard) rateWait(a judge.AttemptInfo) {
	je := a.Err
	if je == nil || je.Kind != judge.KindRateLimited || je.RetryAfter <= 0 || je.RetryAfter > g.maxRetryAfter || a.N >= g.maxAttempts {
		return
	}
	g.waitMu.Lock()
	defer g.waitMu.Unlock()
	now := time.Now()
	until := now.Add(je.RetryAfter)
	if until.Before(g.rateUntil) {
		return // an earlier call already shows a longer wait
	}
	if g.rateSince.IsZero() {
		g.rateSince = now
	}
	g.rateUntil = until
	msg := rateLimitWait(je, "The run's calls wait "+je.RetryAfter.String(), je.RetryAfter, "and go on by themselves", now)
	since := g.rateSince
	if err := g.r.db.SetRunWaiting(context.WithoutCancel(g.ctx), g.runID, &since, msg); err != nil && !errors.Is(err, models.ErrLeaseLost) {
		g.log.Warn("record that the run waits for its rate-limited judge", "err", err)
	}
}

// rateGoesOn clears a rate-limit wait shown on the run once calls go on:
// an attempt is about to be sent after the wait (answered: an attempt
// succeeded). The circuit breaker's wait, while open, is its own.
func (g *callGuard) rateGoesOn(answered bool) {
	g.waitMu.Lock()
	defer g.waitMu.Unlock()
	if g.rateUntil.IsZero() || (!answered && time.Now().Before(g.rateUntil)) {
		return
	}
	g.mu.Lock()
	open := g.open != nil
	g.mu.Unlock()
	if open {
		return
	}
	g.rateSince, g.rateUntil = time.Time{}, time.Time{}
	if err := g.r.db.SetRunWaiting(context.WithoutCancel(g.ctx), g.runID, nil, ""); err != nil && !errors.Is(err, models.ErrLeaseLost) {
		g.log.Warn("record that the run's calls go on", "err", err)
	}
}

// fence checks the lease in the database, then, with no I/O in between,
// that the lease's expiry has not passed on this machine's monotonic clock
// since the check began: a process frozen (SIGSTOP, a VM pause) between the
// two fails the second.
func (g *callGuard) fence(ctx context.Context) error {
	if g.owner == "" {
		return nil
	}
	started := time.Now()
	st, ok := g.news.lease(ctx, started)
	if ok {
		started = st.Began
	} else {
		var err error
		if st, err = g.readLease(ctx); err != nil {
			// Unknown: do not risk a call another worker may also be making.
			return fmt.Errorf("check the run's lease: %w", err)
		}
	}
	switch {
	case st.Status != models.RunRunning:
		return errRunCancelled
	case st.Owner != g.owner || st.Until == nil:
		return models.ErrLeaseLost
	}
	// The lease's remaining time, measured from when the check started.
	left := st.Until.Sub(st.Now)
	if left <= 0 || time.Since(started) >= left {
		return models.ErrLeaseLost
	}
	g.mu.Lock()
	if until := started.Add(left); until.After(g.validUntil) {
		g.validUntil = until
	}
	g.mu.Unlock()
	return nil
}

// leaseNewsFresh is how old a lease read by one of the execution's own
// answer writes may be for a fence to take it instead of reading the
// lease again, and how long a fence waits for a write under way to read
// it. An answer's write reads the lease inside its transaction (its
// fence); a read of the fence's own was a sixth of a call's CPU at
// concurrency 1 (BENCHMARKS.md). What reusing a read gives up is small
// and bounded: a cancel committed in the few milliseconds after the
// write's read may let one call per unit start. A takeover cannot slip
// through: the lease's time left still counts from when the read began.
const leaseNewsFresh = 5 * time.Millisecond

// leaseNews hands the lease as the execution's answer writes read it
// (models.BatchSave.OnLease) to its fences: a fence takes a read that
// began at most leaseNewsFresh ago or, when a write is under way, waits
// for that write's read if it begins after the fence asked (with one
// call's slot handed on as its answer arrives, the next call's fence
// comes while that answer is being stored).
type leaseNews struct {
	mu      sync.Mutex
	st      models.LeaseState
	writing int           // writes registered whose read is not told yet
	told    chan struct{} // closed when a write tells or ends; nil when nobody waits
	// wait is how long a fence waits for a write under way to read the
	// lease: leaseNewsFresh when zero. Tests that check the waiting itself
	// set it long, so a loaded machine cannot turn the check into a race
	// against the timer.
	wait time.Duration
}

type leaseNewsKey struct{}

// withLeaseNews gives ctx's execution somewhere to pass its writes' lease
// reads; the execution's guard and its answer saves take it from ctx.
func withLeaseNews(ctx context.Context, n *leaseNews) context.Context {
	return context.WithValue(ctx, leaseNewsKey{}, n)
}

func leaseNewsFrom(ctx context.Context) *leaseNews {
	n, _ := ctx.Value(leaseNewsKey{}).(*leaseNews)
	return n
}

// leaseWrite is one answer write's part in leaseNews: it tells what it
// read, or ends having read nothing; only the first of the two counts.
type leaseWrite struct {
	n    *leaseNews
	done bool // under n.mu
}

// expect registers a write that will read the lease.
func (n *leaseNews) expect() *leaseWrite {
	n.mu.Lock()
	n.writing++
	n.mu.Unlock()
	return &leaseWrite{n: n}
}

// tell records the write's read (unless a later one is known) and wakes
// the fences waiting for it.
func (w *leaseWrite) tell(st models.LeaseState) {
	n := w.n
	n.mu.Lock()
	defer n.mu.Unlock()
	n.record(st)
	w.finish()
}

// record keeps st if it is the latest read, or if it shows the run no
// longer running: on PostgreSQL a write that began earlier may be the one
// to see a cancel, and a later read must not make it forgotten (a cancel
// is final for this execution). Under n.mu.
func (n *leaseNews) record(st models.LeaseState) {
	if n.st.Status != "" && n.st.Status != models.RunRunning {
		return
	}
	if st.Status != models.RunRunning || st.Began.After(n.st.Began) {
		n.st = st
	}
}

// note records a write's read without a registered write: fences take
// it while fresh, and never wait for it.
func (n *leaseNews) note(st models.LeaseState) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.record(st)
}

// end is called when the write is over; a write that read nothing wakes
// the fences waiting for it, which then read the lease themselves.
func (w *leaseWrite) end() {
	w.n.mu.Lock()
	defer w.n.mu.Unlock()
	w.finish()
}

func (w *leaseWrite) finish() {
	if w.done {
		return
	}
	w.done = true
	n := w.n
	n.writing--
	if n.told != nil {
		close(n.told)
		n.told = nil
	}
}

// lease returns a read a fence that started at started may take instead
// of its own: one that began at most leaseNewsFresh before, or the read
// of a write under way when it begins after started. It waits at most
// leaseNewsFresh for the latter.
func (n *leaseNews) lease(ctx context.Context, started time.Time) (models.LeaseState, bool) {
	if n == nil {
		return models.LeaseState{}, false
	}
	var timeout <-chan time.Time
	for {
		n.mu.Lock()
		st := n.st
		if !st.Began.IsZero() && started.Sub(st.Began) <= leaseNewsFresh {
			n.mu.Unlock()
			return st, true
		}
		if n.writing == 0 {
			n.mu.Unlock()
			return models.LeaseState{}, false
		}
		if n.told == nil {
			n.told = make(chan struct{})
		}
		told := n.told
		n.mu.Unlock()
		if timeout == nil {
			wait := n.wait
			if wait == 0 {
				wait = leaseNewsFresh
			}
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-told:
		case <-timeout:
			return models.LeaseState{}, false
		case <-ctx.Done():
			return models.LeaseState{}, false
		}
	}
}

// leaseRead is one database read of the run's lease, shared by every
// check that asked for it before it began.
type leaseRead struct {
	done chan struct{}
	st   models.LeaseState
	err  error
}

// readLease reads the run's lease for a check that starts now. Checks that
// arrive together share one read, but never one that began before they
// arrived: a check waiting behind a read under way gets the next one. So
// every call that reads still sees the database as it was after the call
// asked (a fence may instead take a write's read, up to leaseNewsFresh
// old: see there), and at concurrency 16 the calls
// of a round make a few reads instead of one each.
//
// A check that finds no read under way makes its own read itself, rather
// than handing it to a goroutine and waiting for it: that hand-off woke two
// goroutines per call, which on a small machine cost more CPU than the
// read. Checks that arrive during its read share the next read, which a
// goroutine makes once the first is done.
func (g *callGuard) readLease(ctx context.Context) (models.LeaseState, error) {
	g.mu.Lock()
	if !g.reading {
		// Nobody waits: g.next is nil whenever no read is under way.
		g.reading = true
		g.mu.Unlock()
		// The read is this check's alone, so it ends with ctx (a hard
		// stop returns promptly); LeaseState keeps the statement itself
		// free of ctx's cancellation on SQLite, where watching it costs
		// more than the read.
		st, err := g.r.db.LeaseState(ctx, g.runID)
		g.mu.Lock()
		if g.next != nil {
			go g.readLeases()
		} else {
			g.reading = false
		}
		g.mu.Unlock()
		if ctx.Err() != nil {
			// As a check waiting for a shared read reports it.
			return models.LeaseState{}, context.Cause(ctx)
		}
		return st, err
	}
	if g.next == nil {
		g.next = &leaseRead{done: make(chan struct{})}
	}
	rd := g.next
	g.mu.Unlock()
	select {
	case <-rd.done:
		return rd.st, rd.err
	case <-ctx.Done():
		return models.LeaseState{}, context.Cause(ctx)
	}
}

// readLeases makes the reads checks are waiting for, one after another,
// until none is waiting.
func (g *callGuard) readLeases() {
	// The read outlives a job cancelled remotely, as the calls do
	// (callContext); each check stops waiting when its own context ends.
	ctx := context.WithoutCancel(g.ctx)
	for {
		g.mu.Lock()
		rd := g.next
		g.next = nil
		if rd == nil {
			g.reading = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		rd.st, rd.err = g.r.db.LeaseState(ctx, g.runID)
		close(rd.done)
	}
}

// fenceTransport makes the last check, after the request is built and
// right before it is written: the lease, as last confirmed, must not have
// run out since. A process frozen between the database check and the send
// (SIGSTOP, a VM pause: the monotonic clock runs on) fails it on waking.
type fenceTransport struct {
	base http.RoundTripper
	g    *callGuard
}

func (t fenceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.g.sendable(); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &judge.NotSent{Err: err}
	}
	return t.base.RoundTrip(req)
}

// sendable reports whether the lease, as last confirmed, still holds now.
func (g *callGuard) sendable() error {
	if g.owner == "" {
		return nil
	}
	g.mu.Lock()
	until := g.validUntil
	g.mu.Unlock()
	if !time.Now().Before(until) {
		return models.ErrLeaseLost
	}
	return nil
}

// fencedConn is a connection to the judge that checks the lease before
// every write: the very last moment before bytes leave this process, so a
// process frozen anywhere in the HTTP stack (dialling, queued for the
// connection's writer) sends nothing when it wakes after losing its lease.
type fencedConn struct {
	net.Conn
	g *callGuard
}

func (c *fencedConn) Write(p []byte) (int, error) {
	if err := c.g.sendable(); err != nil {
		return 0, &judge.NotSent{Err: err}
	}
	return c.Conn.Write(p)
}

// judgeConnIdle closes a run's idle judge connections after a while (each
// execution has its own transport, see fencedClient).
const judgeConnIdle = 30 * time.Second

// fencedClient is the HTTP client of one execution: the judges' egress
// policy (allowed addresses, no redirects) with the workspace's grant, keep-alive sized to the run's
// concurrency, HTTP/2 where offered, and connections that check the lease
// before every write.
func fencedClient(g *callGuard, concurrency int) *http.Client {
	hc := judge.GrantedClientFor(g.grant, concurrency, func(c net.Conn) net.Conn { return &fencedConn{Conn: c, g: g} })
	if tr, ok := hc.Transport.(interface{ SetIdleConnTimeout(time.Duration) }); ok {
		tr.SetIdleConnTimeout(judgeConnIdle)
	}
	return hc
}

// breaks reports whether a failed attempt counts toward opening the
// breaker: the judge is unreachable, failing or not answering.
func breaks(e *judge.Error) bool {
	switch e.Kind {
	case judge.KindNetwork, judge.KindServer, judge.KindTimeout:
		return true
	}
	return false
}

// after runs after each HTTP attempt.
func (g *callGuard) after(a judge.AttemptInfo) {
	g.r.metrics.observeAttempt(g.judge, a)
	g.budget.observe(a)
	g.countRetry(a)
	if a.Err == nil {
		g.rateGoesOn(true)
	} else {
		g.rateWait(a)
	}
	if g.breaker.Threshold < 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case a.Err == nil || !breaks(a.Err):
		if a.Err == nil || a.Err.Kind != judge.KindCancelled {
			g.fails = 0
		}
		return
	}
	g.fails++
	g.last = a.Err.Error()
	if g.fails < g.breaker.Threshold || g.open != nil {
		return
	}
	g.open = make(chan struct{})
	g.r.metrics.breakerOpened.WithLabelValues(g.judge).Inc()
	g.log.Warn("judge not answering: run waiting for judge", "failures", g.fails, "last_error", g.last)
	go g.probeLoop(g.open, g.last)
}

// countProbe counts a probe that was sent on the run, with the tokens the
// endpoint reported for it (an answer's, or a failure's billed ones). A
// probe is a paid call when answered; it used to be counted nowhere.
func (g *callGuard) countProbe(ctx context.Context, resp judge.Response, je *judge.Error) {
	prompt, completion := resp.PromptTokens, resp.CompletionTokens
	if je != nil {
		prompt, completion = je.PromptTokens, je.CompletionTokens
	}
	if g.spend != nil {
		g.spend.probed(prompt, completion)
	}
	if err := g.r.db.AddRunProbe(ctx, g.runID, prompt, completion); err != nil {
		g.log.Warn("count a probe of the judge", "err", err)
	}
}

// ping sends one probe and reports whether it was sent: it was answered,
// or its request was written out whole (judge.Reached). A probe the egress
// policy refused in the dialer, or that never got a connection, was never
// sent and costs nothing; one sent and then cut short (the execution
// ended) may be billed.
func (g *callGuard) ping(probe *judge.Client) (resp judge.Response, sent bool, err error) {
	resp, err = probe.Ping(g.ctx)
	return resp, err == nil || judge.Reached(err), err
}

// probeLoop runs while the breaker is open: it records the wait on the
// run, probes the judge until it answers, then closes the breaker. It
// also ends (releasing the waiting calls, whose fence then refuses them)
// when the run stops being this execution's.
func (g *callGuard) probeLoop(open chan struct{}, lastErr string) {
	since := time.Now()
	// Writes outlive a cancelled job context: the wait must be recorded
	// as over whatever ends it.
	wctx := context.WithoutCancel(g.ctx)
	if err := g.r.db.SetRunWaiting(wctx, g.runID, &since, lastErr); err != nil {
		g.log.Warn("record that the run waits for its judge", "err", err)
	}
	closeBreakerAt := func(level slog.Level, reason string, attrs ...any) {
		g.mu.Lock()
		g.open, g.fails = nil, 0
		g.mu.Unlock()
		close(open)
		if err := g.r.db.SetRunWaiting(wctx, g.runID, nil, ""); err != nil && !errors.Is(err, models.ErrLeaseLost) {
			g.log.Warn("record that the run goes on", "err", err)
		}
		g.log.Log(wctx, level, reason, append(attrs, "waited", time.Since(since).Round(time.Millisecond))...)
	}
	closeBreaker := func(reason string) { closeBreakerAt(slog.LevelInfo, reason) }
	probe, err := judge.New(g.probeCfg)
	if err != nil {
		closeBreaker("judge client unusable: breaker closed")
		return
	}
	t := time.NewTicker(g.breaker.ProbeInterval)
	defer t.Stop()
	for {
		select {
		case <-g.r.draining:
			closeBreaker("shutting down while waiting for the judge")
			return
		case <-g.ctx.Done():
			closeBreaker("execution ended while waiting for the judge")
			return
		case <-t.C:
		}
		if err := g.fence(wctx); err != nil {
			closeBreaker("run no longer ours while waiting for the judge")
			return
		}
		if g.spend != nil {
			if err := g.spend.admitProbe(); err != nil {
				// Probing on would pass the cap: the calls waiting for
				// the judge are refused with why, and the run stops as
				// for any call the cap refuses.
				g.mu.Lock()
				g.capped = err
				g.mu.Unlock()
				closeBreaker("spending cap reached while waiting for the judge")
				return
			}
		}
		// The client bounds the probe by the judge's timeout and reports it
		// as a timeout. A deadline of our own here, of the same length,
		// ended the probe first as "cancelled", read below as an answer:
		// a judge that hangs closed the breaker at every probe.
		resp, sent, err := g.ping(probe)
		var je *judge.Error
		errors.As(err, &je)
		if sent {
			g.countProbe(wctx, resp, je)
		}
		if je != nil && je.Kind == judge.KindCancelled {
			// The execution ended (the select above says how), or the
			// probe was never sent: neither says the judge answers.
			continue
		}
		if err == nil || (je != nil && !breaks(je)) {
			// Any answer, even a refusal of the tiny probe, means the
			// judge is reachable again. The log says what comes of it: a
			// refusal no call can get past (a 401 or 403, a wrong model
			// or URL: runLevel) stops the run at its next call, which
			// "run goes on" said just before the run failed.
			var unusable *judgeUnusable
			switch {
			case err == nil:
				closeBreaker("judge answers again: run goes on")
			case errors.As(runLevel(je), &unusable):
				closeBreakerAt(slog.LevelWarn, "judge answers again but refuses the run's calls: run stops", "err", err)
			case je.Kind == judge.KindRateLimited:
				closeBreakerAt(slog.LevelInfo, "judge answers again but rate-limits: run goes on as its limit allows", "err", err)
			default:
				closeBreakerAt(slog.LevelInfo, "judge answers again (it refused the probe): run goes on", "err", err)
			}
			return
		}
		g.mu.Lock()
		g.last = err.Error()
		g.mu.Unlock()
		g.log.Info("judge still not answering", "err", err)
		if err := g.r.db.SetRunWaiting(wctx, g.runID, &since, err.Error()); err != nil {
			g.log.Warn("record that the run waits for its judge", "err", err)
		}
	}
}
