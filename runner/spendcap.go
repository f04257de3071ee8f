package runner

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// A run's spending cap is kept by the execution, in this process: it reads
// what the run has spent in earlier executions once, when it starts, and
// adds every answer's cost as the answer arrives, before it is stored. One
// execution holds a run at a time (its lease), so nothing else spends for
// the run meanwhile.
//
// It used to read the run's stored cost before every call. That missed
// the answers received and not stored yet, and the calls under way: with
// a cap below one call's cost, a second unit could call between the first
// unit's answer and its store, and with concurrency c the cap could be
// passed by up to c calls. Now a call goes out only when the cost known so
// far, plus the estimate of every call under way and of this one, stays
// within the cap; when it would not, the call waits for the calls under
// way to answer (their cost is then known), and the run stops only when
// none is under way and the next call would still pass the cap.

// SpendCapError stops a run whose next call would take it past its
// spending cap. The run fails with this message and can be resumed after
// the cap is raised: its unanswered calls are sent then.
type SpendCapError struct {
	CapUSD, SpentUSD, NextUSD float64
	// ProbeUSD is the part of SpentUSD the probes of a judge that was
	// down cost: said apart, since no call's answer came of it.
	ProbeUSD float64
}

func (e *SpendCapError) Error() string {
	var probes string
	if e.ProbeUSD > 0 {
		probes = fmt.Sprintf(" (of which $%s was spent on checks whether the judge was back)", capAmount(e.ProbeUSD))
	}
	// The cap as it was set: %.4f showed a cap below a hundredth of a
	// cent as $0.0000.
	return fmt.Sprintf(spendCapReached+": the run has spent $%s%s of its $%s cap and its next call would cost about $%s; "+
		"no new call was sent (raise the cap and resume the run to finish it)", capAmount(e.SpentUSD), probes, strconv.FormatFloat(e.CapUSD, 'f', -1, 64), capAmount(e.NextUSD))
}

// capAmount writes an amount of the cap's message with four decimals, and
// one too small for them with two significant digits ("0.0000015"), so
// a few micro-dollars spent are not shown as $0.0000.
func capAmount(usd float64) string {
	s := strconv.FormatFloat(usd, 'f', 4, 64)
	if usd <= 0 || s != "0.0000" {
		return s
	}
	digits := 1 - int(math.Floor(math.Log10(usd)))
	return strings.TrimRight(strconv.FormatFloat(usd, 'f', digits, 64), "0")
}

// spendCapReached opens a SpendCapError's message, which is what the run
// stores as its reason when the cap stops it.
const spendCapReached = "spending cap reached"

// SpendCapStop reports whether run failed because its next call would have
// passed its spending cap, so that raising the cap and resuming the run
// finishes it, and why in the cap's own words (the stored reason without
// what wrapped it on its way out of the judge client). The stored reason
// is the only record of why a run stopped, and that message is this
// package's own (SpendCapError).
func SpendCapStop(run models.Run) (why string, stopped bool) {
	if run.Status != models.RunFailed || run.Settings.SpendCapUSD == nil {
		return "", false
	}
	i := strings.Index(run.Error, spendCapReached)
	if i < 0 {
		return "", false
	}
	return run.Error[i:], true
}

// spendCap is one execution's account of its run's spending against the
// run's cap.
type spendCap struct {
	capUSD float64
	prices models.JudgeSnapshot

	mu sync.Mutex
	// spent and calls are the run's cost and calls known so far: stored by
	// earlier executions, and answered in this one.
	spent float64
	calls int
	// out is the calls let through that have not answered yet.
	out int
	// probeSpent is what the run's probes of a judge that was down cost,
	// in earlier executions and this one (models.AddRunProbe): money
	// spent, so bounded by the cap, though not calls, so no part of a
	// call's estimate. dearestProbe is what this execution's dearest probe
	// cost, the next one's estimate (a probe that failed costs nothing, one
	// answered does: the estimate is for the answer).
	probeSpent   float64
	dearestProbe float64
	// answered is closed, and replaced, whenever a call under way answers.
	answered chan struct{}
}

// newSpendCap reads the run's spending so far; it is nil when the run has
// no cap.
func (r *Runner) newSpendCap(ctx context.Context, run models.Run) (*spendCap, error) {
	if run.Settings.SpendCapUSD == nil || Cost(run.JudgeSnapshot, 0, 0) == nil {
		// Without the judge's prices no cost is known: a cap cannot bind.
		return nil, nil
	}
	sp, err := r.db.FindRunSpend(ctx, run.ID)
	if err != nil {
		return nil, fmt.Errorf("read the run's spending: %w", err)
	}
	return spendCapFrom(run.JudgeSnapshot, sp), nil
}

// spendCapFrom is the account of an execution whose run has spent sp so
// far (nil without a cap).
func spendCapFrom(prices models.JudgeSnapshot, sp models.RunSpend) *spendCap {
	if sp.CapUSD == nil {
		return nil
	}
	c := &spendCap{capUSD: *sp.CapUSD, prices: prices, answered: make(chan struct{})}
	if cost := Cost(prices, sp.ProbePromptTokens, sp.ProbeCompletionTokens); cost != nil {
		c.probeSpent = *cost
	}
	if sp.CostUSD != nil && *sp.CostUSD > 0 {
		// The stored calls count the answer cache's too, which cost
		// nothing; failed calls (also counted) still thin the estimate
		// a little. Nothing spent yet is no estimate: the first call
		// goes alone, as in a new run.
		c.spent, c.calls = *sp.CostUSD, max(1, sp.Calls-sp.CachedCalls)
	}
	return c
}

// admit lets one call go when it keeps the run within its cap, waiting for
// calls under way when they decide it. The estimate of a call is the mean
// cost of the run's calls so far (the calls of one run are alike: same
// prompt template, same batch size). Before any call has answered there is
// none: the first call goes alone, and the others wait for its cost. A
// call let through must be given to settle once it has answered.
func (c *spendCap) admit(ctx context.Context, draining <-chan struct{}) error {
	for {
		c.mu.Lock()
		var wait chan struct{}
		switch {
		case c.calls == 0 && c.out == 0:
			// No call's cost is known yet, so the first goes alone,
			// unless the probes of a judge that was down have left less
			// of the cap than one of them cost: a call is no smaller
			// than a probe, and it used to go past the cap then.
			if spent := c.spent + c.probeSpent; spent > 0 && (spent >= c.capUSD || spent+c.dearestProbe > c.capUSD) {
				c.mu.Unlock()
				return &SpendCapError{CapUSD: c.capUSD, SpentUSD: spent, NextUSD: c.dearestProbe, ProbeUSD: c.probeSpent}
			}
		case c.calls == 0:
			wait = c.answered
		default:
			next := c.spent / float64(c.calls)
			if c.spent+c.probeSpent+float64(c.out+1)*next <= c.capUSD {
				break
			}
			if c.out == 0 {
				c.mu.Unlock()
				return &SpendCapError{CapUSD: c.capUSD, SpentUSD: c.spent + c.probeSpent, NextUSD: next, ProbeUSD: c.probeSpent}
			}
			wait = c.answered
		}
		if wait == nil {
			c.out++
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-draining:
			return errDraining
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// settle counts the answer of a call admit let through, with its cost
// from the tokens the judge reported. A call that failed without tokens
// costs nothing the run is charged and is not counted; an answer without
// tokens is (at no cost: an endpoint that reports no usage cannot bind a
// cap, and its calls must not wait for one another for ever).
func (c *spendCap) settle(resp judge.Response, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out--
	if err == nil || resp.PromptTokens > 0 || resp.CompletionTokens > 0 {
		if cost := Cost(c.prices, resp.PromptTokens, resp.CompletionTokens); cost != nil {
			c.spent += *cost
		}
		c.calls++
	}
	close(c.answered)
	c.answered = make(chan struct{})
}

// replayed counts a paid answer the answer cache gave back (a unit cut
// short by a crash, its answer stored but never counted): it was a call
// of this run, with its cost, though not one admit let through.
func (c *spendCap) replayed(resp judge.Response) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cost := Cost(c.prices, resp.PromptTokens, resp.CompletionTokens); cost != nil {
		c.spent += *cost
	}
	c.calls++
	close(c.answered)
	c.answered = make(chan struct{})
}

// assumed counts the cost of a hedged copy that lost, cancelled while it
// was out: settle saw it cost nothing (the endpoint reported no usage), but
// it is counted at the winner's prompt tokens (judge.Hedger), as the run
// counts it. It is not a call of the mean estimate: one was settled.
func (c *spendCap) assumed(promptTokens, completionTokens int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cost := Cost(c.prices, promptTokens, completionTokens); cost != nil {
		c.spent += *cost
	}
}

// admitProbe lets one probe of the judge go (the circuit breaker's, while
// the judge is down) when it keeps the run within its cap: the spending
// known so far, the estimate of every call let through (they wait for the
// judge to answer) and the probe's. A probe's estimate is what this
// execution's dearest probe cost; before one cost anything, a call's mean
// cost (a probe is far smaller, so this errs on the cap's side), or
// nothing before any call has answered. A call waiting for the judge is
// reckoned at no less than a probe: before any call has answered its cost
// is unknown, and the probes used to take the whole cap, the waiting call
// then going out past it once the judge was back. Probes go one at a time.
func (c *spendCap) admitProbe() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var call float64
	if c.calls > 0 {
		call = c.spent / float64(c.calls)
	}
	probe := call
	if c.dearestProbe > 0 {
		probe = c.dearestProbe
	}
	if spent := c.spent + c.probeSpent; spent+float64(c.out)*max(call, probe)+probe > c.capUSD {
		return &SpendCapError{CapUSD: c.capUSD, SpentUSD: spent, NextUSD: probe, ProbeUSD: c.probeSpent}
	}
	return nil
}

// probed counts a probe that was sent, with the tokens the endpoint
// reported for it.
func (c *spendCap) probed(promptTokens, completionTokens int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cost := Cost(c.prices, promptTokens, completionTokens); cost != nil {
		c.dearestProbe = max(c.dearestProbe, *cost)
		c.probeSpent += *cost
	}
}

// capped makes every call of c wait for the spending cap's leave (admit).
type capped struct {
	c   Completer
	cap *spendCap
	r   *Runner
}

func (cc capped) Complete(ctx context.Context, req judge.Request) (judge.Response, error) {
	if err := cc.cap.admit(ctx, cc.r.draining); err != nil {
		return judge.Response{}, &judge.Error{Kind: judge.KindCancelled, Message: err.Error(), Err: err}
	}
	resp, err := cc.c.Complete(ctx, req)
	cc.cap.settle(resp, err)
	return resp, err
}
