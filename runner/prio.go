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

// slotWaiter is one call waiting for a slot.
type slotWaiter struct {
	prio    int
	seq     uint64
	ready   chan struct{} // closed when the slot is granted
	granted bool          // set with ready closed, under the lock
	index   int           // in the queue; -1 once out of it
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
