package runner

import (
	"container/heap"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// eventually polls cond until it holds, failing the test after 30 s: the
// states awaited take milliseconds, but the whole suite on 2 cores with
// PostgreSQL once took TestLaggardGetsSlotsFirst past 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// freeSlots reads how many slots are not held.
func (s *prioritySlots) freeSlots() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.free
}

// TestPrioritySlotsOrder: with every slot held, waiters are granted the
// freed slots lowest priority value first, in arrival order among equals.
func TestPrioritySlotsOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		prios []int // in arrival order
		want  []int // indexes into prios, in the order of their grants
	}{
		{"fifo among equals", []int{0, 0, 0}, []int{0, 1, 2}},
		{"lowest first", []int{3, 1, 2, 0}, []int{3, 1, 2, 0}},
		{"mixed", []int{2, 0, 1, 0, 2, 1}, []int{1, 3, 2, 5, 0, 4}},
		{"late laggard overtakes", []int{4, 4, 4, 1}, []int{3, 0, 1, 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newPrioritySlots(1)
			if err := s.acquire(context.Background(), 0, nil); err != nil {
				t.Fatal(err)
			}
			granted := make(chan int, len(tc.prios))
			for i, p := range tc.prios {
				go func() {
					if err := s.acquire(context.Background(), p, nil); err != nil {
						t.Error(err)
						return
					}
					granted <- i
				}()
				// One waiter at a time, so that arrival order is known.
				eventually(t, "the waiter to queue", func() bool { return s.waiting() == i+1 })
			}
			var got []int
			for range tc.prios {
				s.release()
				got = append(got, <-granted)
				// Nothing else was granted: the slot went to one waiter.
				select {
				case extra := <-granted:
					t.Fatalf("waiter %d granted too, with one slot", extra)
				default:
				}
			}
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Fatalf("grant order %v, want %v", got, tc.want)
				}
			}
			s.release()
			if f := s.freeSlots(); f != 1 {
				t.Errorf("%d free slots at the end, want 1", f)
			}
		})
	}
}

// TestPrioritySlotsStoppedWaiter: a waiter whose context ends or whose
// process drains leaves the queue with its error and takes no slot; the
// slots still go to the other waiters and none is lost or granted twice.
func TestPrioritySlotsStoppedWaiter(t *testing.T) {
	t.Parallel()
	cause := errors.New("run cancelled")
	tests := []struct {
		name    string
		drain   bool
		wantErr error
	}{
		{"context cancelled", false, cause},
		{"draining", true, errDraining},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newPrioritySlots(2)
			for range 2 {
				if err := s.acquire(context.Background(), 0, nil); err != nil {
					t.Fatal(err)
				}
			}
			draining := make(chan struct{})
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			stopped := make(chan error, 1)
			go func() { stopped <- s.acquire(ctx, 0, draining) }()
			eventually(t, "the first waiter to queue", func() bool { return s.waiting() == 1 })
			other := make(chan error, 1)
			go func() { other <- s.acquire(context.Background(), 5, nil) }()
			eventually(t, "the second waiter to queue", func() bool { return s.waiting() == 2 })

			if tc.drain {
				close(draining)
			} else {
				cancel(cause)
			}
			if err := <-stopped; !errors.Is(err, tc.wantErr) {
				t.Fatalf("stopped waiter got %v, want %v", err, tc.wantErr)
			}
			if n := s.waiting(); n != 1 {
				t.Fatalf("%d waiting after one waiter stopped, want 1", n)
			}
			// The most urgent waiter left: the freed slot goes to the other.
			s.release()
			if err := <-other; err != nil {
				t.Fatal(err)
			}
			s.release()
			s.release()
			if f := s.freeSlots(); f != 2 {
				t.Errorf("%d free slots at the end, want 2", f)
			}
		})
	}
}

// TestPrioritySlotsAlreadyStopped: a call stopped before it asks takes no
// slot, even a free one.
func TestPrioritySlotsAlreadyStopped(t *testing.T) {
	t.Parallel()
	cause := errors.New("lease lost")
	cancelled, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	drained := make(chan struct{})
	close(drained)
	tests := []struct {
		name     string
		ctx      context.Context
		draining chan struct{}
		want     error
	}{
		{"cancelled", cancelled, nil, cause},
		{"draining", context.Background(), drained, errDraining},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newPrioritySlots(1)
			if err := s.acquire(tc.ctx, 0, tc.draining); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if f := s.freeSlots(); f != 1 {
				t.Errorf("%d free slots, want 1", f)
			}
		})
	}
}

// TestPrioritySlotsGrantedAsStopped: a slot handed to a waiter just as its
// wait ends is either used (the call proceeds) or passed on to the next
// waiter, never lost. The waiter's select sees both cases ready and picks
// one at random, so the test tries many times and checks the invariant.
func TestPrioritySlotsGrantedAsStopped(t *testing.T) {
	t.Parallel()
	for range 200 {
		s := newPrioritySlots(1)
		if err := s.acquire(context.Background(), 0, nil); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		// Queue the stopped waiter by hand so that its slot is granted
		// before it looks at its context.
		s.mu.Lock()
		s.seq++
		w := &slotWaiter{prio: 0, seq: s.seq, ready: make(chan struct{})}
		heap.Push(&s.wait, w)
		s.mu.Unlock()
		other := make(chan error, 1)
		go func() { other <- s.acquire(context.Background(), 1, nil) }()
		eventually(t, "the second waiter to queue", func() bool { return s.waiting() == 2 })
		s.release() // granted to w
		err := s.await(ctx, w, nil)
		if err == nil {
			// w proceeds with the slot: the other still waits.
			if n := s.waiting(); n != 1 {
				t.Fatalf("w holds the slot and %d wait, want 1", n)
			}
			s.release()
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("w got %v, want nil or context.Canceled", err)
		}
		if err := <-other; err != nil {
			t.Fatal(err)
		}
		s.release()
		if f := s.freeSlots(); f != 1 {
			t.Fatalf("%d free slots at the end, want 1", f)
		}
	}
}

// TestPrioritySlotsReleaseWithoutWaiter: a slot released with nobody
// waiting is free for the next call at once.
func TestPrioritySlotsReleaseWithoutWaiter(t *testing.T) {
	t.Parallel()
	s := newPrioritySlots(3)
	for range 3 {
		if err := s.acquire(context.Background(), 7, nil); err != nil {
			t.Fatal(err)
		}
	}
	if f := s.freeSlots(); f != 0 {
		t.Fatalf("%d free slots with all held, want 0", f)
	}
	s.release()
	if f := s.freeSlots(); f != 1 {
		t.Fatalf("%d free slots after a release, want 1", f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.acquire(ctx, 9, nil); err != nil {
		t.Fatalf("a free slot was not granted: %v", err)
	}
}

// TestPrioritySlotsStress: many calls of random priorities, some stopped
// while they wait, never hold more slots than there are, and every slot
// is free again at the end (run with -race).
func TestPrioritySlotsStress(t *testing.T) {
	t.Parallel()
	const slots, calls = 3, 400
	s := newPrioritySlots(slots)
	var holding, most atomic.Int64
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			if i%5 == 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(rand.N(200))*time.Microsecond)
				defer cancel()
			}
			if err := s.acquire(ctx, rand.N(4), nil); err != nil {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Error(err)
				}
				return
			}
			n := holding.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(time.Duration(rand.N(50)) * time.Microsecond)
			holding.Add(-1)
			s.release()
		}()
	}
	wg.Wait()
	if m := most.Load(); m > slots {
		t.Errorf("%d calls held slots at once, want at most %d", m, slots)
	}
	if f, n := s.freeSlots(), s.waiting(); f != slots || n != 0 {
		t.Errorf("at the end %d free slots and %d waiting, want %d and 0", f, n, slots)
	}
}

// TestScheduleFloor: the benchmark's floor at the figures (4
// criteria, 5 rounds, 52 calls a round, 500 ms, slow 2.5 s), worked by hand.
func TestScheduleFloor(t *testing.T) {
	t.Parallel()
	const ms = time.Millisecond
	tests := []struct {
		c    int
		slow time.Duration
		want time.Duration
	}{
		{1, 0, 130000 * ms},         // 260 calls one after another
		{1, 2500 * ms, 140000 * ms}, // and 5 x 2 s more
		{4, 2500 * ms, 35000 * ms},  // work: 140 s over 4 slots
		{16, 0, 8125 * ms},          // work: 130 s over 16 slots
		{32, 0, 4062500 * time.Microsecond},
		// One criterion has 2 of the 5 slow rounds: 2 x 2.5 s + 3 x 0.5 s.
		{32, 2500 * ms, 6500 * ms},
	}
	for _, tc := range tests {
		if got := scheduleFloor(5, 4, 52, tc.c, 500*ms, tc.slow); got != tc.want {
			t.Errorf("C=%d slow %s: floor %s, want %s", tc.c, tc.slow, got, tc.want)
		}
	}
}
