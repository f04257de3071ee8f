package runner

import (
	"context"
	"errors"
	"sync"

	"github.com/batcheval/batcheval/evaluator/judge"
)

// unitLookahead is how many of a round's units may start beyond the
// run's concurrency: they build their requests and look them up in the
// answer cache at once (calls that start together share one lookup
// query, judge.Cache), then wait for their turn to call the judge. Why
// 64: a FED round (13 batches a criterion) starts whole, so it makes one
// or two lookup queries instead of 13; each waiting unit holds only its
// prompt, so memory stays small for any size of round.
const unitLookahead = 64

// unitTurns are a round's turns to call the judge: at most the run's
// concurrency of its units are calling at once, as when only that many
// were started. A unit takes its turn at its first call that is not
// answered from the cache, and keeps it until it ends; a unit answered
// wholly from the cache never takes one.
//
// Why a unit keeps its turn to its end, though the budget's slots already
// bound the calls: its follow-up calls (a repair, G-Eval's and
// CloserLook's top-ups) then go right after its first answer. Without the
// turns they queued behind the first calls of every other unit of the
// round, so a round that stopped (a rate limit, a cancel) refused them and
// stored those units with gaps no resume fills, and the slot a
// rate-limited call freed went to another unit's call before the round had
// stopped (TestRepairFollowsItsAnswer).
type unitTurns struct {
	slots chan struct{}
	// stop ends the round's waiting units (a unit failed the round, the
	// run is cancelled or its lease lost); r.draining does too.
	stop context.Context
	r    *Runner
	// halted is closed by halt: a unit met a stop of the run and is about
	// to give its turn back, before the round's context knows (the group
	// cancels it only once the unit has returned).
	halted   chan struct{}
	haltOnce sync.Once
}

// halt gives no more turns: a unit met a stop of the whole run (a long
// rate limit, the spending cap, bad credentials). Without it, the turn the
// unit gives back could go to a waiting unit, whose call would be sent
// after the judge had said to wait.
func (u *unitTurns) halt() { u.haltOnce.Do(func() { close(u.halted) }) }

// errRoundHalted is what a unit waiting for its turn gets when another
// unit of its round met a stop of the run (unitTurns.halt).
var errRoundHalted = errors.New("the round stopped: another call met a stop of the run")

// turn is one unit's claim on a turn.
type turn struct {
	turns *unitTurns
	mu    sync.Mutex
	held  bool
}

type turnKey struct{}

// withTurn marks ctx, the context of one unit's calls, with its turn.
func withTurn(ctx context.Context, t *turn) context.Context {
	return context.WithValue(ctx, turnKey{}, t)
}

// take waits for the unit's turn, once; a unit whose turn came after the
// round was stopped gives it back and fails, as a unit not yet started
// did when the round had only as many goroutines as turns.
func (t *turn) take(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		return nil
	}
	u := t.turns
	select {
	case u.slots <- struct{}{}:
	case <-u.stop.Done():
		return context.Cause(u.stop)
	case <-u.halted:
		return errRoundHalted
	case <-u.r.draining:
		return errDraining
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	select {
	case <-u.halted:
		<-u.slots
		return errRoundHalted
	default:
	}
	if err := u.r.stopping(u.stop); err != nil {
		<-u.slots
		return err
	}
	t.held = true
	return nil
}

// done gives the turn back when the unit ends.
func (t *turn) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		t.held = false
		<-t.turns.slots
	}
}

// turnTaking makes every call of a unit wait for the unit's turn (see
// unitTurns); calls outside a round's units (a method's setup) pass.
type turnTaking struct{ c Completer }

func (tc turnTaking) Complete(ctx context.Context, req judge.Request) (judge.Response, error) {
	if t, ok := ctx.Value(turnKey{}).(*turn); ok {
		if err := t.take(ctx); err != nil {
			return judge.Response{}, &judge.Error{Kind: judge.KindCancelled, Message: err.Error(), Err: err}
		}
	}
	return tc.c.Complete(ctx, req)
}
