package judge

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Hedged calls: a run that asked for it (Settings.HedgeSlowCalls) sends a
// second copy of a call that has been out much longer than the run's
// typical answer, and takes whichever copy answers first ("The Tail at
// Scale", Dean and Barroso). A FED run's criterion waits for its slowest
// batch before its next round, so one answer five times slower than the
// others holds that criterion's whole next round; a copy sent after twice
// the typical wait usually comes back long before the slow one.
//
// The copy is a paid call: the endpoint bills it even when its answer is
// not used. The Cache logs the copy that lost as a failed paid call of
// the unit (PaidCall.Failed, never replayed) with the tokens it was
// billed when it finished with usage, and otherwise with the prompt
// tokens of the winner (the same request; a provider may bill the prompt
// of a request cancelled while it was being answered) and no completion
// tokens. It folds that call into what it returns (Response.ExtraCalls,
// Error.ExtraCalls and the tokens), so the unit's counts, the run's calls,
// tokens and cost, count it once.

// hedgeFactor: a copy is sent once a call has been out this many times the
// median answer of the run. Why 2: the calls of one run are alike (same
// prompt template, same batch size), so their answers take about as long;
// one out twice the median is in the tail, not the bulk, and a lower
// factor would re-send ordinary calls and pay for them (at 20 ms, where
// the runner's own CPU makes ordinary calls vary, 2x already re-sends
// 8-10 calls of 260 at C = 32: BENCHMARKS.md, "Hedged slow calls"). A
// higher one helps less: the copy, answering in about one median, ends
// the call near (factor + 1) medians, against the 5x slow answer of the
// issue's benchmark, so at 2x it ends near 3x.
const hedgeFactor = 2

// HedgeMinDelay is the shortest time a call is out before its copy is
// sent, whatever the median. Why 1 s: re-sending is on by default, and a
// judge that answers in tens of milliseconds (a local server, a test's
// fake) gains nothing worth a paid copy from it, while a busy machine's
// scheduling makes its ordinary calls vary by more than twice their
// median (at 20 ms, 8-10 copies of 260 calls at C = 32 with no gain:
// BENCHMARKS.md, "Hedged slow calls"). The judges whose tails a copy
// does cut, remote models under load, answer a batch in seconds, where
// twice the median is past 1 s anyway (the 500 ms judge: 1 s).
const HedgeMinDelay = time.Second

// hedgeMinAnswers is how many answers the run must have had before any
// call is hedged: a median of fewer says little about the judge.
const hedgeMinAnswers = 10

// hedgeRecord is how many of the latest answers the median is taken over:
// enough to be steady, few enough to follow a judge that slows down.
const hedgeRecord = 100

// hedgeEvery caps the copies: at most one per hedgeEvery calls the run has
// sent so far, plus one, so a run whose every call is slow (the judge as a
// whole slowed down) does not double its bill. A copy never sent (its
// original answered while it waited for a slot) does not count.
const hedgeEvery = 20

// MaxResends is the most copies a run of calls judge calls can send
// (hedgeEvery's cap): what re-sending slow calls may add to its bill.
func MaxResends(calls int) int {
	return calls/hedgeEvery + 1
}

// Hedger sends a copy of a slow call; one serves one execution of a run
// (its Cache). It is safe for concurrent use.
type Hedger struct {
	mu sync.Mutex
	// lat holds the latencies of the latest answers (a ring of
	// hedgeRecord); n counts every answer recorded.
	lat [hedgeRecord]time.Duration
	n   int
	// waiting are the calls sent before the record had hedgeMinAnswers:
	// their timers are set once it has (record), rather than polling.
	waiting map[*hedgeCall]struct{}
	// capped are the calls out whose copy the cap refused: a place given
	// back (a copy that ended unsent) goes to one of them.
	capped map[*hedgeCall]struct{}
	// minDelay is the floor of the threshold (HedgeMinDelay unless a
	// test sets another with WithMinDelay).
	minDelay time.Duration
	// sent counts the calls whose first attempt went out, launched the
	// copies started, less those that ended without being sent (the cap
	// counts these).
	sent, launched int
	resent         atomic.Int64
}

// NewHedger returns a Hedger with an empty record.
func NewHedger() *Hedger {
	return &Hedger{waiting: map[*hedgeCall]struct{}{}, capped: map[*hedgeCall]struct{}{}, minDelay: HedgeMinDelay}
}

// WithMinDelay sets the threshold's floor (HedgeMinDelay by default) and
// returns h: tests whose fake judges answer in milliseconds use a lower
// one, to see a copy sent without waiting a second for each.
func (h *Hedger) WithMinDelay(d time.Duration) *Hedger {
	h.minDelay = d
	return h
}

// Resent is how many copies were sent: an HTTP attempt made that wrote
// its request out (a copy stopped while its connection was being opened
// reached no endpoint).
func (h *Hedger) Resent() int {
	if h == nil {
		return 0
	}
	return int(h.resent.Load())
}

// thresholdLocked is how long a call may be out before its copy is sent
// (twice the median answer, and never under minDelay), and false while
// the record has too few answers. h.mu is held.
func (h *Hedger) thresholdLocked() (time.Duration, bool) {
	k := min(h.n, hedgeRecord)
	if k < hedgeMinAnswers {
		return 0, false
	}
	var buf [hedgeRecord]time.Duration
	s := buf[:k]
	copy(s, h.lat[:k])
	slices.Sort(s)
	med := s[k/2]
	if k%2 == 0 {
		med = (s[k/2-1] + s[k/2]) / 2
	}
	return max(hedgeFactor*med, h.minDelay), true
}

// record adds an answer's latency; when the record reaches
// hedgeMinAnswers, the calls waiting for it get their timers.
func (h *Hedger) record(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lat[h.n%hedgeRecord] = d
	h.n++
	if h.n != hedgeMinAnswers || len(h.waiting) == 0 {
		return
	}
	t, _ := h.thresholdLocked()
	for hc := range h.waiting {
		hc.mu.Lock()
		if !hc.origDone && hc.inAttempt {
			hc.timer = time.AfterFunc(max(t-time.Since(hc.started), 0), hc.fire)
		}
		hc.mu.Unlock()
	}
	clear(h.waiting)
}

// hedgeCall is one call that may be hedged.
type hedgeCall struct {
	h      *Hedger
	inner  completer
	req    Request
	outer  context.Context
	cancel context.CancelFunc // the original's

	mu sync.Mutex
	// counted: the call's first attempt went out (Hedger.sent counts it).
	counted bool
	// started is when the original's attempt under way began, and
	// inAttempt whether one is under way: between attempts (a back-off,
	// a 429's Retry-After) no copy is sent.
	started   time.Time
	inAttempt bool
	origDone  bool
	origOK    bool // the original answered (origDone)
	timer     *time.Timer
	launched  bool
	copyWon   bool // the copy answered before the original
	// copyRes is the copy's outcome, set before copyDone is closed.
	copyRes    hedgeResult
	copyDone   chan struct{}
	cancelCopy context.CancelFunc
}

type hedgeResult struct {
	resp Response
	err  error
}

// attemptHook is told of every HTTP attempt of a call made under its
// context (Client.complete), just before it is sent; an error stops the
// call without sending it.
type attemptHook func() error

type attemptHookKey struct{}

func withAttemptHook(ctx context.Context, f attemptHook) context.Context {
	return context.WithValue(ctx, attemptHookKey{}, f)
}

// attemptStarting tells ctx's hook, if any, that an attempt is about to be
// sent, and returns its veto.
func attemptStarting(ctx context.Context) error {
	if f, ok := ctx.Value(attemptHookKey{}).(attemptHook); ok {
		return f()
	}
	return nil
}

// attemptEndKey holds a func() told that an HTTP attempt of a call made
// under the context has ended, whatever its outcome (Client.complete).
type attemptEndKey struct{}

func withAttemptEnd(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, attemptEndKey{}, f)
}

// attemptEnded tells ctx's end hook, if any, that an attempt has ended.
func attemptEnded(ctx context.Context) {
	if f, ok := ctx.Value(attemptEndKey{}).(func()); ok {
		f()
	}
}

// errHedgeNotNeeded stops a copy whose original answered while the copy
// waited for its slot: it is not sent.
var errHedgeNotNeeded = errors.New("the original call answered before its copy was sent")

// sent starts the call's clock at each of its attempts: the wait for a
// slot or a turn is not the judge's slowness, and a copy would wait as
// long; nor is a wait between attempts, which the judge asked for (a 429's
// or 503's Retry-After) or the back-off chose: a copy sent then would be
// one more request to a judge that said it had too many. Re-sending is on
// by default, so a rate-limited run must not answer a 429 with copies.
func (hc *hedgeCall) sent() error {
	h := hc.h
	h.mu.Lock()
	defer h.mu.Unlock()
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if !hc.counted {
		hc.counted = true
		h.sent++
	}
	hc.started, hc.inAttempt = time.Now(), true
	if hc.origDone || hc.launched {
		return nil
	}
	if t, ok := h.thresholdLocked(); ok {
		hc.timer = time.AfterFunc(t, hc.fire)
	} else {
		h.waiting[hc] = struct{}{}
	}
	return nil
}

// attemptOver stops the clock of the original's attempt that ended: if
// the call goes on, its next attempt starts it again from zero.
func (hc *hedgeCall) attemptOver() {
	h := hc.h
	h.mu.Lock()
	defer h.mu.Unlock()
	hc.mu.Lock()
	defer hc.mu.Unlock()
	hc.inAttempt = false
	if hc.timer != nil {
		hc.timer.Stop()
		hc.timer = nil
	}
	delete(h.waiting, hc)
	delete(h.capped, hc)
}

// fire sends the copy, unless the original is back or the cap is reached.
func (hc *hedgeCall) fire() {
	h := hc.h
	h.mu.Lock()
	hc.mu.Lock()
	if hc.origDone || hc.launched || !hc.inAttempt || h.launched >= MaxResends(h.sent) {
		if !hc.origDone && !hc.launched && hc.inAttempt {
			h.capped[hc] = struct{}{}
		}
		hc.mu.Unlock()
		h.mu.Unlock()
		return
	}
	h.launched++
	hc.launched = true
	h.mu.Unlock()
	// The copy carries the caller's context values (its unit, its turn),
	// not the original's own cancellation: it goes through the run's
	// limits as a call of its own (a slot, the rate limits, the spending
	// cap, which may refuse it).
	ctx, cancel := context.WithCancel(hc.outer)
	ctx = withAttemptHook(ctx, hc.copySent())
	hc.cancelCopy = cancel
	hc.copyDone = make(chan struct{})
	hc.mu.Unlock()
	go func() {
		resp, err := hc.inner.Complete(ctx, hc.req)
		if err == nil || (AttemptsOf(err) > 0 && !NeverSentOf(err)) {
			// Counted once the endpoint has seen it: not when it
			// was stopped before its request went out.
			h.resent.Add(1)
		} else {
			// Never sent, so never paid: its place under the cap is
			// given back. Kept, a copy stopped while it waited for a
			// slot (its original answered meanwhile) left a later slow
			// call of a small run without one.
			h.mu.Lock()
			h.launched--
			var next *hedgeCall
			for c := range h.capped {
				next = c
				delete(h.capped, c)
				break
			}
			h.mu.Unlock()
			if next != nil {
				// Refused by the cap while this copy waited: its turn
				// now (fire looks again whether it is still out).
				go next.fire()
			}
		}
		hc.mu.Lock()
		hc.copyRes = hedgeResult{resp, err}
		if err == nil && !hc.origDone {
			// The copy answered first: the original is cancelled.
			hc.copyWon = true
			hc.cancel()
		}
		hc.mu.Unlock()
		close(hc.copyDone)
	}()
}

// copySent stops the copy at its first attempt when the original has
// answered meanwhile (its slot came as the original's was freed): then
// the copy is not sent at all.
func (hc *hedgeCall) copySent() attemptHook {
	var once sync.Once
	return func() error {
		hc.mu.Lock()
		// A copy of an original that failed is still sent: it is the
		// call's last chance of an answer.
		done := hc.origDone && hc.origOK && !hc.copyWon
		hc.mu.Unlock()
		var err error
		once.Do(func() {
			if done {
				err = errHedgeNotNeeded
			}
		})
		return err
	}
}

// complete makes the call of r, hedged: the result is the answer that came
// first (or the original's error when both failed), and lost the paid
// call the other copy was, to be logged and counted with the answer (nil
// when there was no copy, or it was never sent, or it is not counted).
func (h *Hedger) complete(ctx context.Context, inner completer, r Request) (resp Response, err error, lost *lostCall) {
	octx, cancel := context.WithCancel(ctx)
	defer cancel()
	hc := &hedgeCall{h: h, inner: inner, req: r, outer: ctx, cancel: cancel}
	resp, err = inner.Complete(withAttemptEnd(withAttemptHook(octx, hc.sent), hc.attemptOver), r)

	h.mu.Lock()
	delete(h.waiting, hc)
	delete(h.capped, hc)
	hc.mu.Lock()
	hc.origDone, hc.origOK = true, err == nil
	if hc.timer != nil {
		hc.timer.Stop()
	}
	launched, copyWon := hc.launched, hc.copyWon
	h.mu.Unlock()
	hc.mu.Unlock()
	if !launched {
		if err == nil {
			h.record(resp.Latency)
		}
		return resp, err, nil
	}
	orig := hedgeResult{resp, err}
	if err == nil && !copyWon {
		// The original answered first: the copy is cancelled, and its
		// slot freed as it returns.
		hc.cancelCopy()
		<-hc.copyDone
		h.record(resp.Latency)
		return resp, nil, loserCall(ctx, hc.copyRes, resp, true)
	}
	// The copy answered first, or the original failed: a hedge never
	// turns a success into a failure, so the copy is waited for.
	<-hc.copyDone
	hc.cancelCopy()
	cp := hc.copyRes
	if cp.err == nil {
		h.record(cp.resp.Latency)
		// The original was cancelled by the copy's answer when copyWon;
		// otherwise it failed on its own.
		return cp.resp, nil, loserCall(ctx, orig, cp.resp, copyWon)
	}
	return Response{}, err, loserCall(ctx, cp, Response{}, false)
}

// loserCall is the paid call of the copy that lost (l), or nil when it is
// not one: never sent (no HTTP attempt: cancelled while it waited for a
// slot, refused by the spending cap; or attempts whose request was never
// written out: cancelled while its connection was being opened). A copy that finished with usage
// (an answer, or a billed failure) counts what it was billed. One we
// cancelled (cancelledByUs) while it was out counts the winner's prompt
// tokens: the same request, whose prompt a provider may bill though the
// answer was cut off. One that failed on its own follows the rule of any
// failed call (sentFailure): billed tokens, and not counted when rate
// limited or abandoned because the caller's context ended.
func loserCall(ctx context.Context, l hedgeResult, winner Response, cancelledByUs bool) *lostCall {
	if l.err == nil {
		return &lostCall{PaidCall: PaidCall{ID: newPaidID(), PromptTokens: l.resp.PromptTokens, CompletionTokens: l.resp.CompletionTokens, Failed: true},
			attempts: l.resp.Attempts}
	}
	n := AttemptsOf(l.err)
	if n == 0 || NeverSentOf(l.err) {
		// Never sent, or sent nowhere: cancelled while it waited for a
		// slot, or while its connection was being opened.
		return nil
	}
	if p, c := BilledOf(l.err); p+c > 0 {
		return &lostCall{PaidCall: PaidCall{ID: newPaidID(), PromptTokens: p, CompletionTokens: c, Failed: true}, attempts: n}
	}
	if cancelledByUs && ctx.Err() == nil {
		return &lostCall{PaidCall: PaidCall{ID: newPaidID(), PromptTokens: winner.PromptTokens, Failed: true}, attempts: n, assumed: true}
	}
	var log PaidLog
	sentFailure(ctx, Unit{Paid: &log}, l.err)
	if calls := log.Calls(); len(calls) == 1 {
		return &lostCall{PaidCall: calls[0], attempts: n}
	}
	return nil
}

// lostCall is the paid call of a hedged copy that lost: its attempts,
// and whether its tokens are assumed (the winner's prompt) rather than
// reported by the endpoint.
type lostCall struct {
	PaidCall
	attempts int
	assumed  bool
}
