package runner

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

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
//
// The turns are kept under the lock of the run's slots (turnGate,
// prio.go): a unit waits for its turn and its first call's slot as one
// wait, and is woken once it holds both.
type unitTurns struct {
	gate turnGate
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

// newUnitTurns makes a round's turns: n at once.
func newUnitTurns(n int, stop context.Context, r *Runner) *unitTurns {
	return &unitTurns{gate: turnGate{n: n}, stop: stop, r: r, halted: make(chan struct{})}
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
	slots *prioritySlots // whose lock keeps the turns, once held
}

type turnKey struct{}

// withTurn marks ctx, the context of one unit's calls, with its turn.
func withTurn(ctx context.Context, t *turn) context.Context {
	return context.WithValue(ctx, turnKey{}, t)
}

// take waits for the unit's turn, once, under the lock of s, the run's
// slots; with slot set, a slot for the call that takes the turn comes
// with it (withSlot), granted without waking the unit in between. A unit
// whose turn came after the round was stopped gives it back and fails, as
// a unit not yet started did when the round had only as many goroutines
// as turns.
func (t *turn) take(ctx context.Context, s *prioritySlots, slot bool) (withSlot bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		return false, nil
	}
	u := t.turns
	w, now := s.enterGate(&u.gate, roundOf(ctx), slot)
	giveBack := func(turn, slotHeld bool) {
		if slotHeld {
			s.release()
		}
		if turn {
			s.turnDone(&u.gate)
		}
	}
	if !now {
		select {
		case <-w.ready:
		case <-u.stop.Done():
			err = context.Cause(u.stop)
		case <-u.halted:
			err = errRoundHalted
		case <-u.r.draining:
			err = errDraining
		case <-ctx.Done():
			err = context.Cause(ctx)
		}
		if err != nil {
			giveBack(s.leaveGate(w))
			return false, err
		}
	}
	select {
	case <-u.halted:
		giveBack(true, slot)
		return false, errRoundHalted
	default:
	}
	if err := u.r.stopping(u.stop); err != nil {
		giveBack(true, slot)
		return false, err
	}
	if err := context.Cause(ctx); err != nil {
		giveBack(true, slot)
		return false, err
	}
	t.held, t.slots = true, s
	return slot, nil
}

// done gives the turn back when the unit ends.
func (t *turn) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		t.held = false
		t.slots.turnDone(&t.turns.gate)
	}
}

// heldSlot is a slot of the run's budget taken with a unit's turn, for
// the call that took the turn: the budget takes it instead of waiting for
// one (budget.acquire), once.
type heldSlot struct{ taken atomic.Bool }

type heldSlotKey struct{}

// claimHeldSlot says whether ctx carries a slot taken with its unit's
// turn and not yet used; the caller then holds it.
func claimHeldSlot(ctx context.Context) bool {
	h, ok := ctx.Value(heldSlotKey{}).(*heldSlot)
	return ok && h.taken.CompareAndSwap(false, true)
}

// turnTaking makes every call of a unit wait for the unit's turn (see
// unitTurns); calls outside a round's units (a method's setup) pass.
// With withSlot set (nothing between it and the budget waits: no
// spending cap), the first call's slot of sem is taken with the turn.
type turnTaking struct {
	c        Completer
	sem      *prioritySlots
	withSlot bool
}

func (tc turnTaking) Complete(ctx context.Context, req judge.Request) (judge.Response, error) {
	t, ok := ctx.Value(turnKey{}).(*turn)
	if !ok {
		return tc.c.Complete(ctx, req)
	}
	gotSlot, err := t.take(ctx, tc.sem, tc.withSlot)
	if err != nil {
		return judge.Response{}, &judge.Error{Kind: judge.KindCancelled, Message: err.Error(), Err: err}
	}
	if !gotSlot {
		return tc.c.Complete(ctx, req)
	}
	h := &heldSlot{}
	resp, err := tc.c.Complete(context.WithValue(ctx, heldSlotKey{}, h), req)
	if h.taken.CompareAndSwap(false, true) {
		// Not used (the call stopped before the budget): given back.
		tc.sem.release()
	}
	return resp, err
}
