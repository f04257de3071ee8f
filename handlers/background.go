package handlers

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"golang.org/x/sync/singleflight"
)

// sharedBuild is the bookkeeping of a computation that requests start and
// share rather than own: a finished run's summary (summaries.go) and the
// paired comparison of two large runs (reports.go). It is done once per
// flight and process, the requests needing it at once sharing that one
// run; detached from the request that started it, so that a reader who
// leaves stops nothing others wait for; a panic fails it instead of ending
// the process; a failure is noted, so that readers do not start it again
// for failedBuildPause; and the report cache's settle count holds it until
// it ends, for tests to wait on.
type sharedBuild struct {
	h      *Handlers
	flight string
	// what names the computation in the log and in a panic's error.
	what string
	// failed says the flight's previous attempt failed, at failedAt.
	failedAt time.Time
	failed   bool
}

// sharedBuildOf is flight's build, with how its previous attempt ended:
// read before this request starts another, which may end (and clear the
// mark) before the page is drawn, when the page must still say why it is
// preparing again.
func (h *Handlers) sharedBuildOf(flight, what string) sharedBuild {
	rc := h.reports
	rc.mu.Lock()
	failedAt, failed := rc.failedBuilds[flight]
	rc.mu.Unlock()
	return sharedBuild{h: h, flight: flight, what: what, failedAt: failedAt, failed: failed}
}

// paused says the previous attempt failed less than failedBuildPause ago:
// it is not started again at every reload of a page (every few seconds),
// a background build being seconds of a core and one of the slots.
func (b sharedBuild) paused() bool {
	return b.failed && time.Since(b.failedAt) < failedBuildPause
}

// inBackground starts work, or joins the run of it under way, and does not
// wait for it: it waits for one of the background slots, which bound the
// large computations done at once.
func (b sharedBuild) inBackground(ctx context.Context, work func(ctx context.Context) (any, error)) {
	ch := b.start(ctx, true, work)
	go func() {
		<-ch
		b.h.reports.settling.Done()
	}()
}

// await starts work, or joins the run of it under way, and waits for its
// result, or for ctx to end (the work then goes on for the others).
func (b sharedBuild) await(ctx context.Context, work func(ctx context.Context) (any, error)) (any, error) {
	defer b.h.reports.settling.Done()
	select {
	case res := <-b.start(ctx, false, work):
		return res.Val, res.Err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// start runs work once per flight, detached from ctx, in a background slot
// when slot is set; the settle count holds it until the caller sees it end.
func (b sharedBuild) start(ctx context.Context, slot bool, work func(ctx context.Context) (any, error)) <-chan singleflight.Result {
	rc := b.h.reports
	bctx := context.WithoutCancel(ctx)
	rc.settling.Add(1)
	return rc.flights.DoChan(b.flight, func() (val any, err error) {
		if slot {
			rc.slots <- struct{}{}
			defer func() { <-rc.slots }()
		}
		defer func() {
			if p := recover(); p != nil {
				b.h.Log.Error(b.what+" panicked", "flight", b.flight, "panic", p, "stack", string(debug.Stack()))
				val, err = nil, fmt.Errorf("%s panicked: %v", b.what, p)
			}
			rc.noteBuild(b.flight, err)
		}()
		return work(bctx)
	})
}
