package runner

import (
	"context"
	"sync"
)

// An execution's units run on goroutines it keeps from one unit to the
// next, rather than on a new goroutine each. A unit's goroutine ends by
// storing the answer, deep inside SQLite (the C code made Go has frames of
// kilobytes), so its stack grows to tens of kilobytes, copied at every
// doubling: at concurrency 1 that copying was about 6% of the CPU of a
// judge call. A kept goroutine has its stack grown already (the garbage
// collector shrinks the stacks of those left idle for long).
//
// Why not a goroutine-pool library: the well-known ones keep their workers
// either for one batch of tasks (a round here, whose units all start at
// once) or with a ticker that purges idle workers, which would wake an idle
// server; the errgroup semantics the rounds need are not theirs either.

// unitWorkers keeps an execution's idle unit goroutines.
type unitWorkers struct {
	mu     sync.Mutex
	idle   []chan task
	closed bool
}

// run runs f on an idle goroutine, or a new one that is kept afterwards;
// then after, once the goroutine is back among the idle ones.
func (w *unitWorkers) run(f func(), after func()) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 && !w.closed {
		next := w.idle[n-1]
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		next <- task{f, after}
		return
	}
	w.mu.Unlock()
	go w.work(make(chan task, 1), task{f, after})
}

// task is a unit to run, and what to do once its goroutine is idle again
// (or ends): a group lets go of its slot only then, so that the next unit
// finds this goroutine idle rather than start another.
type task struct{ f, after func() }

// work runs f, then whatever run hands it next, until the workers close.
func (w *unitWorkers) work(next chan task, t task) {
	for {
		t.f()
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			if t.after != nil {
				t.after()
			}
			return
		}
		// Back on the idle list before the group's slot is let go, so
		// the unit that takes the slot finds this goroutine.
		w.idle = append(w.idle, next)
		w.mu.Unlock()
		if t.after != nil {
			t.after()
		}
		// Not holding on to the unit's closure while idle.
		t = task{}
		var ok bool
		if t, ok = <-next; !ok {
			return
		}
	}
}

// close ends the idle goroutines, and the busy ones once their unit ends.
func (w *unitWorkers) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for _, next := range w.idle {
		close(next)
	}
	w.idle = nil
}

// unitGroup is errgroup.Group with a limit, on an execution's kept
// goroutines: the first unit to fail cancels the group's context with its
// error, and Wait returns that error once every unit has ended.
type unitGroup struct {
	workers *unitWorkers
	limit   chan struct{}
	wg      sync.WaitGroup
	cancel  context.CancelCauseFunc
	once    sync.Once
	err     error
}

// group starts a group of at most limit units at once, whose context is
// ctx's until a unit fails.
func (w *unitWorkers) group(ctx context.Context, limit int) (*unitGroup, context.Context) {
	gctx, cancel := context.WithCancelCause(ctx)
	return &unitGroup{workers: w, limit: make(chan struct{}, limit), cancel: cancel}, gctx
}

// Go runs f once fewer than the limit of the group's units are running.
func (g *unitGroup) Go(f func() error) {
	g.limit <- struct{}{}
	g.wg.Add(1)
	g.workers.run(func() {
		if err := f(); err != nil {
			g.once.Do(func() {
				g.err = err
				g.cancel(err)
			})
		}
	}, func() {
		<-g.limit
		g.wg.Done()
	})
}

// Wait waits for every unit and returns the first error.
func (g *unitGroup) Wait() error {
	g.wg.Wait()
	g.cancel(g.err)
	return g.err
}
