package runner

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// closed says whether ch is closed, without waiting.
func closed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestTurnHandedOnWithoutWaking: at concurrency 1 with two criteria side
// by side, the next unit of a criterion whose turn comes while the other
// criterion's call holds the only slot is not woken for its turn: it is
// moved into the slots' queue, and woken once, when it holds both. Before,
// it was woken for the turn and went straight back to sleep waiting for
// the slot: one goroutine wake-up a call (BENCHMARKS.md, "Run speed,
// eleventh pass").
func TestTurnHandedOnWithoutWaking(t *testing.T) {
	t.Parallel()
	s := newPrioritySlots(1)
	first, second := &turnGate{n: 1}, &turnGate{n: 1}
	a1, now := s.enterGate(first, 0, true)
	if !now {
		t.Fatal("the first unit of the first criterion waits, with a free turn and a free slot")
	}
	b1, now := s.enterGate(second, 0, true)
	if now || closed(b1.ready) {
		t.Fatal("the second criterion's unit got the only slot while the first held it")
	}
	a2, now := s.enterGate(first, 0, true)
	if now || closed(a2.ready) || !a2.inGate {
		t.Fatalf("the first criterion's second unit holds something while its turn is taken (in its queue: %v)", a2.inGate)
	}
	_ = a1
	// The first unit's call ends: the slot goes to the other criterion.
	s.release()
	if !closed(b1.ready) {
		t.Fatal("the freed slot did not go to the waiting criterion")
	}
	// The first unit ends: its turn goes on to the second unit, which the
	// slot it still needs keeps asleep.
	s.turnDone(first)
	if closed(a2.ready) {
		t.Fatal("the unit was woken for its turn while every slot was held: one wake-up too many")
	}
	if a2.inGate || s.waiting() != 1 || first.held != 1 {
		t.Fatalf("after the turn passed: in the turns' queue %v, %d waiting for a slot, %d turns held; want false, 1, 1", a2.inGate, s.waiting(), first.held)
	}
	// The other criterion's call ends: now it is woken, with both.
	s.release()
	if !closed(a2.ready) || s.freeSlots() != 0 {
		t.Fatalf("the unit holding its turn was not granted the freed slot (woken %v, %d free)", closed(a2.ready), s.freeSlots())
	}
	s.release()
	s.turnDone(first)
	s.turnDone(second)
	if s.freeSlots() != 1 || first.held != 0 || second.held != 0 {
		t.Errorf("at the end %d free slots, %d and %d turns held; want 1, 0, 0", s.freeSlots(), first.held, second.held)
	}
}

// TestTurnGateGiveBackEveryState: a unit whose wait ends gives back what
// it holds, whatever it held: nothing (still waiting for its turn), its
// turn (waiting for a slot), or both (granted as it stopped).
func TestTurnGateGiveBackEveryState(t *testing.T) {
	t.Parallel()
	s := newPrioritySlots(1)
	g := &turnGate{n: 1}
	holder, _ := s.enterGate(g, 0, true)
	_ = holder
	w, _ := s.enterGate(g, 0, true)
	if turn, slot := s.leaveGate(w); turn || slot || len(g.queue) != 0 {
		t.Fatalf("left while waiting for its turn: holds turn %v, slot %v, %d still queued; want none", turn, slot, len(g.queue))
	}
	// Waiting for a slot with its turn: leaves holding the turn.
	other := &turnGate{n: 1}
	w, _ = s.enterGate(other, 0, true)
	if turn, slot := s.leaveGate(w); !turn || slot || s.waiting() != 0 {
		t.Fatalf("left while waiting for a slot: holds turn %v, slot %v, %d waiting; want the turn only", turn, slot, s.waiting())
	}
	s.turnDone(other)
	// Granted as it stopped: holds both.
	w, _ = s.enterGate(other, 0, true)
	s.release()
	if turn, slot := s.leaveGate(w); !turn || !slot {
		t.Fatalf("left once granted: holds turn %v, slot %v; want both", turn, slot)
	}
	s.release()
	s.turnDone(other)
	s.turnDone(g)
	if s.freeSlots() != 1 || g.held != 0 || other.held != 0 || s.waiting() != 0 {
		t.Errorf("at the end %d free, turns held %d and %d, %d waiting; want 1, 0, 0, 0", s.freeSlots(), g.held, other.held, s.waiting())
	}
}

// TestTurnsAndSlotsStress: units of three rounds (two turns each) share
// three slots, some stopping while they wait, some calling twice (a
// follow-up call with the turn kept): never more turns or slots held than
// there are, and every one free at the end.
func TestTurnsAndSlotsStress(t *testing.T) {
	t.Parallel()
	const slots, turnsEach, units = 3, 2, 300
	s := newPrioritySlots(slots)
	r := &Runner{draining: make(chan struct{})}
	rounds := make([]*unitTurns, 3)
	for i := range rounds {
		rounds[i] = newUnitTurns(turnsEach, context.Background(), r)
	}
	var calling, mostCalls atomic.Int64
	turnsHeld := make([]atomic.Int64, len(rounds))
	var mostTurns atomic.Int64
	peak := func(p *atomic.Int64, n int64) {
		for m := p.Load(); n > m && !p.CompareAndSwap(m, n); m = p.Load() {
		}
	}
	call := func() {
		peak(&mostCalls, calling.Add(1))
		time.Sleep(time.Duration(rand.N(40)) * time.Microsecond)
		calling.Add(-1)
		s.release()
	}
	var wg sync.WaitGroup
	for i := range units {
		wg.Go(func() {
			round := i % len(rounds)
			ctx := withRound(context.Background(), round)
			if i%7 == 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(rand.N(300))*time.Microsecond)
				defer cancel()
			}
			tn := &turn{turns: rounds[round]}
			defer tn.done()
			withSlot, err := tn.take(ctx, s, i%3 != 0)
			if err != nil {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Error(err)
				}
				return
			}
			peak(&mostTurns, turnsHeld[round].Add(1))
			defer turnsHeld[round].Add(-1)
			if !withSlot {
				if err := s.acquire(ctx, round, nil); err != nil {
					return
				}
			}
			call()
			if i%2 == 0 {
				// A follow-up call, with the turn kept.
				if again, err := tn.take(ctx, s, true); err != nil || again {
					t.Errorf("the unit's second take: slot %v, err %v; want neither (it holds its turn)", again, err)
				}
				if err := s.acquire(ctx, round, nil); err == nil {
					call()
				}
			}
		})
	}
	wg.Wait()
	if m := mostCalls.Load(); m > slots {
		t.Errorf("%d calls held slots at once, want at most %d", m, slots)
	}
	if m := mostTurns.Load(); m > turnsEach {
		t.Errorf("%d units of one round held turns at once, want at most %d", m, turnsEach)
	}
	if f, n := s.freeSlots(), s.waiting(); f != slots || n != 0 {
		t.Errorf("at the end %d free slots and %d waiting, want %d and 0", f, n, slots)
	}
	for i, u := range rounds {
		if u.gate.held != 0 || len(u.gate.queue) != 0 {
			t.Errorf("round %d: %d turns held and %d units waiting at the end, want none", i, u.gate.held, len(u.gate.queue))
		}
	}
}
