package runner

import (
	"context"
	"sync"
)

// pending counts work in flight that others wait to see finished, as a
// sync.WaitGroup does, but may be waited on while new work is counted: a
// run can finish (and be counted) at any moment, while a reader waits for
// the statistics of the runs finished before it. A WaitGroup forbids that
// (an Add racing the return of a Wait panics with "WaitGroup is reused
// before previous Wait has returned", which crashed a test process).
// A wait ends at the first moment nothing is pending.
type pending struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil while n is 0
}

// add counts one more piece of work.
func (p *pending) add() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		p.idle = make(chan struct{})
	}
	p.n++
}

// done counts one piece of work finished.
func (p *pending) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n <= 0 {
		panic("runner: pending.done without add")
	}
	p.n--
	if p.n == 0 {
		close(p.idle)
		p.idle = nil
	}
}

// wait returns once nothing is pending, or when ctx ends.
func (p *pending) wait(ctx context.Context) {
	p.mu.Lock()
	idle := p.idle
	p.mu.Unlock()
	if idle == nil {
		return
	}
	select {
	case <-idle:
	case <-ctx.Done():
	}
}
