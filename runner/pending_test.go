package runner

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestPendingWaitsWhileWorkIsCounted: waiting on finished runs' statistics
// while other runs finish and are counted (regression: with a
// sync.WaitGroup, a run counted as a waiter was being released panicked
// with "WaitGroup is reused before previous Wait has returned" and took
// the test process down). Every wait ends once nothing is pending, and not
// before.
func TestPendingWaitsWhileWorkIsCounted(t *testing.T) {
	var p pending
	p.wait(t.Context()) // nothing pending: at once

	p.add()
	waited := make(chan struct{})
	go func() {
		p.wait(context.Background())
		close(waited)
	}()
	select {
	case <-waited:
		t.Fatal("the wait ended with work pending")
	case <-time.After(20 * time.Millisecond):
	}
	p.done()
	select {
	case <-waited:
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not end when the work was done")
	}

	// A wait ends with its context.
	p.add()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	p.wait(ctx)
	p.done()

	// Work counted and finished by many goroutines while others wait, as
	// runs finishing while pages and tests wait for statistics.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				p.add()
				p.done()
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				p.wait(context.Background())
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	p.wait(t.Context())
}
