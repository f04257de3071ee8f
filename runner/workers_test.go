package runner

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestUnitGroupKeepsGoroutines: a group's units run at most limit at once;
// once they end, their goroutines wait for the next units, which run on
// them rather than on new ones; close ends the idle ones.
func TestUnitGroupKeepsGoroutines(t *testing.T) {
	t.Parallel()
	w := &unitWorkers{}
	idle := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.idle)
	}
	for pass := range 2 {
		g, _ := w.group(context.Background(), 3)
		var running, peak atomic.Int32
		for range 10 {
			g.Go(func() error {
				n := running.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(2 * time.Millisecond)
				running.Add(-1)
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			t.Fatal(err)
		}
		if p := peak.Load(); p != 3 {
			t.Errorf("pass %d: at most %d units ran at once, want the limit 3", pass, p)
		}
		// A unit's goroutine goes idle just after Wait sees the unit end.
		eventually(t, "the goroutines to go idle", func() bool { return idle() >= 3 })
		if n := idle(); n > 3 {
			t.Errorf("pass %d: %d idle goroutines for a limit of 3: the units did not reuse them", pass, n)
		}
	}
	w.close()
	if n := idle(); n != 0 {
		t.Errorf("%d idle goroutines after close", n)
	}
	// A closed set of workers still runs what it is given, on a new
	// goroutine that it does not keep.
	done := make(chan struct{})
	w.run(func() { close(done) }, nil)
	<-done
	time.Sleep(5 * time.Millisecond)
	if n := idle(); n != 0 {
		t.Errorf("%d idle goroutines kept after close", n)
	}
}

// TestUnitGroupFirstError: the first unit to fail cancels the group's
// context with its error, the others still end, and Wait returns that
// first error after all of them.
func TestUnitGroupFirstError(t *testing.T) {
	t.Parallel()
	w := &unitWorkers{}
	defer w.close()
	g, gctx := w.group(context.Background(), 4)
	first := errors.New("the first failure")
	var ended atomic.Int32
	g.Go(func() error {
		defer ended.Add(1)
		return first
	})
	for range 3 {
		g.Go(func() error {
			defer ended.Add(1)
			<-gctx.Done()
			return errors.New("a later failure")
		})
	}
	if err := g.Wait(); !errors.Is(err, first) {
		t.Fatalf("Wait: %v, want the first failure", err)
	}
	if n := ended.Load(); n != 4 {
		t.Errorf("Wait returned with %d of 4 units ended", n)
	}
	if cause := context.Cause(gctx); !errors.Is(cause, first) {
		t.Errorf("the group's context ended with %v, want the first failure", cause)
	}

	// A group whose units all succeed ends its context at Wait, as
	// errgroup's does, without an error.
	g, gctx = w.group(context.Background(), 1)
	g.Go(func() error { return nil })
	if err := g.Wait(); err != nil || gctx.Err() == nil {
		t.Errorf("Wait: %v, context %v; want nil and a context ended", err, gctx.Err())
	}
}
