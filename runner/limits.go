package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// This file is the budget of calls an execution may make to its judge:
//   - the run's own concurrency (its judge snapshot's MaxConcurrency), one
//     budget for every criterion of the run, whose rounds run side by side;
//   - the judge's shared limits (models.JudgeLimits), kept in the database
//     so that every worker on one API key keeps them together: requests
//     and tokens per minute as token buckets, and a shared concurrency as
//     slots leased with an expiry, adapted to the judge (AIMD: halved on a
//     429 or an answer slower than the judge's threshold, one more after
//     as many successes in a row as the limit).
// Every call of the run, setup calls included, goes through budget.wrap.

// Slot leases: a worker that dies holding slots gives them back when their
// lease runs out; live ones renew theirs. Their expiry, like the buckets'
// refills, is kept by the database's clock (models.AcquireJudgeSlot), so
// workers whose clocks disagree still share one limit.
const (
	slotLease      = 30 * time.Second
	slotRenewEvery = slotLease / 3
	// slotPollMax is the longest wait between two tries for a slot held by
	// another worker (slots freed in this process wake waiters at once).
	slotPollMax = 100 * time.Millisecond
	// defaultAnswerTokens estimates an answer's tokens before it is known,
	// when the request sets no cap.
	defaultAnswerTokens = 256
)

// budget limits one execution's calls to its judge.
type budget struct {
	r     *Runner
	sem   *prioritySlots // the run's own concurrency, laggards first (prio.go)
	judge int64          // the judge whose shared limits apply; 0: none
	lim   models.JudgeLimits
	owner string
	// sends is the name the run's requests cap the answer under: a
	// reasoning judge's cap is sent 25,000 tokens higher
	// (judge.TokenLimit.SentCap), and the tokens per minute reserve that.
	sends judge.TokenLimit
	// effort is the reasoning effort the run's requests ask for ("" for
	// none): such a judge reasons with no cap sent too (AnswerGuess).
	effort judge.ReasoningEffort

	seq  atomic.Int64
	mu   sync.Mutex
	held map[string]struct{} // slot holders of this execution, renewed
	stop chan struct{}
	done chan struct{}
}

// budgetFor makes the budget of one execution of run.
func (r *Runner) budgetFor(ctx context.Context, run models.Run) (*budget, error) {
	b := &budget{r: r, sem: newPrioritySlots(max(1, run.JudgeSnapshot.MaxConcurrency)),
		owner: fmt.Sprintf("%s/run%d", models.LeaseOwnerFrom(ctx), run.ID), held: map[string]struct{}{},
		sends: run.JudgeSnapshot.SendsTokenLimitAs(), effort: run.JudgeSnapshot.SendsReasoningEffort()}
	if run.JudgeID != nil && !run.JudgeSnapshot.Simulated {
		lim, err := r.db.FindJudgeLimits(ctx, *run.JudgeID)
		if err != nil {
			return nil, fmt.Errorf("read the judge's limits: %w", err)
		}
		if lim.Any() {
			b.judge, b.lim = *run.JudgeID, lim
		}
	}
	if r.onBudget != nil {
		r.onBudget(b)
	}
	if b.judge != 0 && b.lim.MaxConcurrency > 0 {
		b.stop, b.done = make(chan struct{}), make(chan struct{})
		go b.renew()
	}
	return b, nil
}

// close stops renewing slot leases (every call has ended by then).
func (b *budget) close() {
	if b.stop != nil {
		close(b.stop)
		<-b.done
	}
}

// renew keeps the slots this execution holds leased.
func (b *budget) renew() {
	defer close(b.done)
	t := time.NewTicker(slotRenewEvery)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		b.mu.Lock()
		holders := make([]string, 0, len(b.held))
		for h := range b.held {
			holders = append(holders, h)
		}
		b.mu.Unlock()
		if err := b.r.db.RenewJudgeSlots(context.Background(), b.judge, holders, slotLease); err != nil {
			b.r.log.Warn("renew judge slots", "judge", b.judge, "err", err)
		}
	}
}

// wrap returns c with every call going through the budget.
func (b *budget) wrap(c Completer) Completer { return budgeted{c: c, b: b} }

type budgeted struct {
	c Completer
	b *budget
}

func (bc budgeted) Complete(ctx context.Context, req judge.Request) (judge.Response, error) {
	release, est, err := bc.b.acquire(ctx, req)
	if err != nil {
		return judge.Response{}, &judge.Error{Kind: judge.KindCancelled, Message: err.Error(), Err: err}
	}
	resp, cerr := bc.c.Complete(ctx, req)
	release()
	if bc.b.judge != 0 && bc.b.lim.TokensPerMinute > 0 && cerr == nil {
		if err := bc.b.r.db.ChargeJudgeTokens(context.WithoutCancel(ctx), bc.b.judge, resp.PromptTokens+resp.CompletionTokens-est); err != nil {
			bc.b.r.log.Warn("charge judge tokens", "judge", bc.b.judge, "err", err)
		}
	}
	return resp, cerr
}

// estimateTokens guesses a request's tokens before sending it: about four
// characters a token, plus the answer's cap as sent under the judge's
// token limit (sends): a reasoning judge may use the 25,000 tokens added
// for its hidden reasoning, and a shared tokens-per-minute limit that
// reserved only the run's cap let such calls past it (429s). A call with
// no cap reserves defaultAnswerTokens, plus that room for a reasoning
// judge, whose reasoning is billed all the same.
func estimateTokens(req judge.Request, sends judge.TokenLimit, effort judge.ReasoningEffort) int {
	chars := 0
	for _, m := range req.Messages {
		chars += len(m.Content)
	}
	// A call with no cap is guessed a plain answer's size, and for a
	// reasoning judge its hidden reasoning's room too (AnswerGuess).
	answer := sends.AnswerGuess(req.MaxTokens, defaultAnswerTokens, effort)
	return chars/4 + answer*max(1, req.N)
}

// acquire waits for room in every limit; release gives the slots back.
func (b *budget) acquire(ctx context.Context, req judge.Request) (release func(), est int, err error) {
	// Waiting for room stops when the process starts shutting down: no
	// new call would be sent then anyway. A free slot goes to the call of
	// the criterion furthest behind (prio.go). A unit's first call may
	// hold one already, taken with its turn (lookahead.go).
	if !claimHeldSlot(ctx) {
		if err := b.sem.acquire(ctx, roundOf(ctx), b.r.draining); err != nil {
			return nil, 0, err
		}
	}
	local := b.sem.release
	if b.judge == 0 {
		return local, 0, nil
	}
	if b.lim.RequestsPerMinute > 0 || b.lim.TokensPerMinute > 0 {
		est = estimateTokens(req, b.sends, b.effort)
		for {
			wait, err := b.r.db.TakeJudgeBudget(ctx, b.judge, est)
			if err != nil {
				local()
				return nil, 0, fmt.Errorf("take from the judge's rate limit: %w", err)
			}
			if wait == 0 {
				break
			}
			if err := sleepCtx(ctx, wait); err != nil {
				local()
				return nil, 0, err
			}
		}
	}
	if b.lim.MaxConcurrency <= 0 {
		return local, est, nil
	}
	holder := fmt.Sprintf("%s/%d", b.owner, b.seq.Add(1))
	pause := 2 * time.Millisecond
	for {
		ok, err := b.r.db.AcquireJudgeSlot(ctx, b.judge, holder, slotLease)
		if err != nil {
			local()
			return nil, 0, fmt.Errorf("lease a slot of the judge's concurrency: %w", err)
		}
		if ok {
			break
		}
		// Wait for a slot freed here (at once) or elsewhere (by polling).
		wake := b.r.slotFreed(b.judge)
		jittered := pause/2 + rand.N(pause/2+1)
		select {
		case <-wake:
		case <-time.After(jittered):
		case <-b.r.draining:
			local()
			return nil, 0, errDraining
		case <-ctx.Done():
			local()
			return nil, 0, context.Cause(ctx)
		}
		pause = min(pause*2, slotPollMax)
	}
	b.mu.Lock()
	b.held[holder] = struct{}{}
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.held, holder)
		b.mu.Unlock()
		if err := b.r.db.ReleaseJudgeSlot(context.Background(), b.judge, holder); err != nil {
			b.r.log.Warn("release judge slot (it frees itself when its lease ends)", "judge", b.judge, "err", err)
		}
		b.r.notifySlotFreed(b.judge)
		local()
	}, est, nil
}

// observe adapts the judge's shared concurrency to one attempt's outcome
// (called by the guard after every HTTP attempt).
func (b *budget) observe(a judge.AttemptInfo) {
	if b == nil || b.judge == 0 || b.lim.MaxConcurrency <= 0 {
		return
	}
	ctx := context.Background()
	var err error
	switch {
	case a.Err != nil && a.Err.Kind == judge.KindRateLimited,
		a.Err == nil && b.lim.SlowMS > 0 && a.Latency.Milliseconds() > b.lim.SlowMS:
		err = b.r.db.CutJudgeConcurrency(ctx, b.judge)
	case a.Err == nil:
		err = b.r.db.GrowJudgeConcurrency(ctx, b.judge)
	}
	if err != nil {
		b.r.log.Warn("adapt judge concurrency", "judge", b.judge, "err", err)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// slotWaits wakes this process's waiters for a judge's slot when one of
// its own calls frees one.
type slotWaits struct {
	mu sync.Mutex
	ch map[int64]chan struct{}
}

func (r *Runner) slotFreed(judgeID int64) <-chan struct{} {
	r.slots.mu.Lock()
	defer r.slots.mu.Unlock()
	if r.slots.ch == nil {
		r.slots.ch = map[int64]chan struct{}{}
	}
	c, ok := r.slots.ch[judgeID]
	if !ok {
		c = make(chan struct{})
		r.slots.ch[judgeID] = c
	}
	return c
}

func (r *Runner) notifySlotFreed(judgeID int64) {
	r.slots.mu.Lock()
	defer r.slots.mu.Unlock()
	if c, ok := r.slots.ch[judgeID]; ok {
		close(c)
		delete(r.slots.ch, judgeID)
	}
}
