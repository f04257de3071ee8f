package runner

import (
	"container/heap"
	"context"
	"sync"
)

// A run's criteria go through their rounds side by side, each round of a
// criterion starting when its own previous round is done, all under one
// concurrency budget. With a FIFO queue, a criterion held back by a slow
// batch queued its next round behind the batches the criteria ahead of it
// had queued meanwhile, whenever the slots were all taken, and the run's
// end waits for the criterion that is last. The budget's slots therefore
// go to the most urgent waiting call first: the one of the lowest round
// (the criterion furthest behind), first come first served among calls
// of one round. With a free slot it behaves as the channel it replaced.

// roundKey marks the context of a unit's calls with the unit's round.
type roundKey struct{}

// withRound marks ctx, the context of one unit's calls, with its round:
// the calls' priority for a slot of the budget.
func withRound(ctx context.Context, round int) context.Context {
	return context.WithValue(ctx, roundKey{}, round)
}

// roundOf is the round ctx was marked with; calls outside a round (a
// method's setup, made before the criterion's first round) are as urgent
// as the first round.
func roundOf(ctx context.Context) int {
	round, _ := ctx.Value(roundKey{}).(int)
	return round
}

// prioritySlots is a counting semaphore that hands a freed slot to its
// most urgent waiter: the lowest priority value, then the earliest.
type prioritySlots struct {
	mu   sync.Mutex
	free int // slots not held; while anyone waits, none are free
	seq  uint64
	wait slotQueue
}

func newPrioritySlots(n int) *prioritySlots { return &prioritySlots{free: n} }

// slotWaiter is one call waiting for a slot, or a unit waiting for its
// turn (turnGate) and then, without waking in between, for a slot.
type slotWaiter struct {
	prio    int
	seq     uint64
	ready   chan struct{} // closed when the slot (or the turn alone) is granted
	granted bool          // set with ready closed, under the lock
	index   int           // in the queue; -1 once out of it
	// A unit's wait for its turn: gate is the round's turns; inGate while
	// it waits in gate's queue; slot when the turn's grant goes on to a
	// wait for a slot rather than waking the unit.
	gate   *turnGate
	inGate bool
	slot   bool
}

// turnGate is a round's turns (lookahead.go's unitTurns), kept under the
// lock of the run's slots: a unit whose turn comes while every slot is
// held is moved into the slots' queue by the unit that gave the turn
// back, and is woken once, with its turn and its slot. Woken for its
// turn only to queue for a slot at once, it cost a goroutine wake-up
// (a thread's, on an idle core) a call at concurrency 1 with a run's
// criteria side by side (BENCHMARKS.md, "Run speed, eleventh pass").
type turnGate struct {
	n, held int
	queue   []*slotWaiter // first come first served
}

// enterGate claims a turn of g for a unit of priority prio and, when slot
// is set, a slot for its first call along with it. It returns the waiter
// and whether all it asked for is held already; otherwise the caller
// waits for w.ready, or, giving up, calls leaveGate.
func (s *prioritySlots) enterGate(g *turnGate, prio int, slot bool) (w *slotWaiter, now bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w = &slotWaiter{prio: prio, gate: g, slot: slot, index: -1}
	if g.held < g.n {
		g.held++
		if !slot {
			return w, true
		}
		if s.free > 0 {
			s.free--
			return w, true
		}
		w.ready = make(chan struct{})
		s.seq++
		w.seq = s.seq
		heap.Push(&s.wait, w)
		return w, false
	}
	w.ready = make(chan struct{})
	w.inGate = true
	g.queue = append(g.queue, w)
	return w, false
}

// leaveGate takes w, whose wait ended before its grant, out of the
// queues, and says what it holds already: its turn (it was in the slots'
// queue, or granted) and its slot (granted). The caller gives them back.
func (s *prioritySlots) leaveGate(w *slotWaiter) (turn, slot bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case w.inGate:
		q := w.gate.queue
		for i, o := range q {
			if o == w {
				copy(q[i:], q[i+1:])
				q[len(q)-1] = nil
				w.gate.queue = q[:len(q)-1]
				break
			}
		}
		w.inGate = false
		return false, false
	case w.granted:
		return true, w.slot
	default:
		if w.index >= 0 {
			heap.Remove(&s.wait, w.index)
		}
		return true, false
	}
}

// turnDone gives a turn of g back: to the first unit waiting for one,
// which then holds it while it waits for a slot, if it wants one and none
// is free (it is not woken in between).
func (s *prioritySlots) turnDone(g *turnGate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(g.queue) == 0 {
		g.held--
		return
	}
	w := g.queue[0]
	g.queue[0] = nil
	g.queue = g.queue[1:]
	w.inGate = false
	if w.slot && s.free == 0 {
		s.seq++
		w.seq = s.seq
		heap.Push(&s.wait, w)
		return
	}
	if w.slot {
		s.free--
	}
	w.granted = true
	close(w.ready)
}

// acquire takes a slot for a call of priority prio (lower is more urgent),
// waiting for one unless ctx ends or draining is closed first. A call whose
// wait ended takes no slot: the slot stays with, or goes on to, the next
// waiter.
func (s *prioritySlots) acquire(ctx context.Context, prio int, draining <-chan struct{}) error {
	// A call that is already stopped takes no slot even when one is free.
	select {
	case <-draining:
		return errDraining
	case <-ctx.Done():
		return context.Cause(ctx)
	default:
	}
	s.mu.Lock()
	if s.free > 0 {
		s.free--
		s.mu.Unlock()
		return nil
	}
	s.seq++
	w := &slotWaiter{prio: prio, seq: s.seq, ready: make(chan struct{})}
	heap.Push(&s.wait, w)
	s.mu.Unlock()
	return s.await(ctx, w, draining)
}

// await waits for w's grant, or takes w out of the queue when the wait
// ends first.
func (s *prioritySlots) await(ctx context.Context, w *slotWaiter, draining <-chan struct{}) error {
	var err error
	select {
	case <-w.ready:
		return nil
	case <-draining:
		err = errDraining
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	s.mu.Lock()
	if w.granted {
		// The slot came as the wait ended: pass it on rather than use it
		// for a call that is stopped, as above.
		s.mu.Unlock()
		s.release()
		return err
	}
	heap.Remove(&s.wait, w.index)
	s.mu.Unlock()
	return err
}

// waiting is how many calls wait for a slot.
func (s *prioritySlots) waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wait.Len()
}

// release gives a slot back: to the most urgent waiter, if any.
func (s *prioritySlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wait.Len() == 0 {
		s.free++
		return
	}
	w := heap.Pop(&s.wait).(*slotWaiter)
	w.granted = true
	close(w.ready)
}

// slotQueue is a heap of waiters, the most urgent first.
type slotQueue []*slotWaiter

func (q slotQueue) Len() int { return len(q) }

func (q slotQueue) Less(i, j int) bool {
	if q[i].prio != q[j].prio {
		return q[i].prio < q[j].prio
	}
	return q[i].seq < q[j].seq
}

func (q slotQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}

func (q *slotQueue) Push(x any) {
	w := x.(*slotWaiter)
	w.index = len(*q)
	*q = append(*q, w)
}

func (q *slotQueue) Pop() any {
	old := *q
	n := len(old)
	w := old[n-1]
	old[n-1] = nil
	w.index = -1
	*q = old[:n-1]
	return w
}
