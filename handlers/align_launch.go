package handlers

import (
	"context"
	"crypto/rand"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// Launching an alignment's held-out runs copies its held-out samples into
// a dataset of their own (one transaction: all of them or none) and reads
// the source run's human rating of each when it reads browser ratings:
// seconds at 100,000 samples, tens of seconds at a million. A held-out part
// of up to heldOutInlineSamples samples (10,000) is copied and launched in the
// request (accept, launch again), which redirects to the alignment's page
// with its runs; a larger one in the background, in one of the background
// slots (background.go): the request answers at once, and the alignment's
// page says the held-out runs are being prepared and reloads itself until
// they are launched, or says why they could not be and offers to launch
// them again. The copy is written in one transaction, so a failure (or the
// end of the process) leaves no part of it; the alignment records the
// dataset and runs only once made.
//
// Either way the launch is first claimed in the database
// (models.ClaimHeldOutLaunch), not in this process's memory: every server
// process sharing the database shows "Preparing" while any of them
// prepares, and refuses a second launch rather than making a second copy.
// The claim is a lease renewed while the launch works; a launch whose
// process ended (a crash, a restart) is not resumed (its copy was rolled
// back with its transaction, and its requester is gone): once its lease
// lapses, at most heldOutLease after its last renewal, every page says it
// stopped and offers to launch the runs again. On a SQLite file the
// launch also holds a lock of the operating system's, which its process's
// end lets go (models' heldoutlock.go): there a lapsed lease counts only
// once that lock is free too, since a copy holding SQLite's write lock
// longer than the lease keeps the renewals from being written.

// heldOutInlineSamples is the largest held-out part launched in the
// request (Handlers.heldOutInline, which tests lower): 10,000 samples take
// under a second on a small server, 50,000 about 4 s
// (BenchmarkAlignmentAccept).
const heldOutInlineSamples = 10000

// defaultHeldOutLease is how long a launch's claim lives unrenewed: it is
// renewed every quarter of it, so a live launch misses three renewals
// before it looks stopped (on SQLite a renewal waits for the copy's write
// transaction, 11 s at a million samples, and may fail once), and a launch
// whose process ended is said to have stopped two minutes at most after
// its last renewal.
const defaultHeldOutLease = 2 * time.Minute

// heldOutLeaseLength is the lease a launch of held-out runs claims.
func (h *Handlers) heldOutLeaseLength() time.Duration {
	if h.heldOutLease > 0 {
		return h.heldOutLease
	}
	return defaultHeldOutLease
}

// launchHeldOutFor launches the held-out runs of accepted alignment a of
// run with the aligned criterion worded as after: in the request when its
// held-out part is small (launchHeldOut, audited), otherwise in the
// background. started says it went to the background; then err is only a
// refusal to start. A launch of the same alignment under way, in this
// process or another, is refused (EConflict, models.ErrHeldOutPreparing).
func (h *Handlers) launchHeldOutFor(c echo.Context, a models.Alignment, run models.Run, after evaluator.Criterion, version int) (before, afterRun models.Run, started bool, err error) {
	ctx := c.Request().Context()
	ws := h.workspaceID(c)
	p := principalOf(ctx)
	address := c.RealIP()
	audit := func(ctx context.Context, before, afterRun models.Run) {
		for _, r := range []struct {
			run     models.Run
			version int
		}{{before, a.BaseVersion}, {afterRun, version}} {
			err := h.DB.RecordAudit(ctx, models.AuditEvent{WorkspaceID: ws, ActorUserID: p.userID(), Actor: p.ActorLabel(), Action: models.AuditRunLaunched,
				Target: runTarget(r.run), Detail: fmt.Sprintf("held-out run of alignment %d, rubric version %d", a.ID, r.version), Address: address})
			if err != nil {
				h.Log.Error("write audit log", "action", models.AuditRunLaunched, "err", err)
			}
		}
	}
	owner, lease := rand.Text(), h.heldOutLeaseLength()
	if err := h.DB.ClaimHeldOutLaunch(ctx, a, owner, lease); err != nil {
		return before, afterRun, false, err
	}
	inline := len(a.HeldOutRowIDs) <= h.heldOutInline
	if !inline {
		// The background launch outlives the request.
		ctx = context.WithoutCancel(ctx)
	}
	// Renewed from now on, while the launch waits for a background slot too.
	wctx, stop := h.keepHeldOutLease(ctx, a.ID, owner, lease)
	// launch launches them under the claim and ends it saying how it went
	// (a panic too: the claim would otherwise be renewed for ever).
	launch := func() (before, afterRun models.Run, err error) {
		defer func() {
			if p := recover(); p != nil {
				h.Log.Error("launching held-out runs panicked", "alignment", a.ID, "panic", p, "stack", string(debug.Stack()))
				err = fmt.Errorf("launching the held-out runs of alignment %d panicked: %v", a.ID, p)
			}
			stop()
			failed := ""
			if err != nil {
				h.Log.Error("launch held-out runs", "alignment", a.ID, "err", err)
				failed = errorClause(err)
			} else {
				audit(ctx, before, afterRun)
			}
			if eerr := h.DB.EndHeldOutLaunch(context.WithoutCancel(ctx), a.ID, owner, failed); eerr != nil {
				// Its lease then lapses, and the pages say it stopped.
				h.Log.Error("end the held-out launch", "alignment", a.ID, "err", eerr)
			}
		}()
		return h.launchHeldOut(wctx, ws, &a, run, after, owner)
	}
	if inline {
		before, afterRun, err = launch()
		return before, afterRun, false, err
	}
	// A flight of its own: the claim, not the flight, keeps one launch of
	// the alignment at a time.
	b := h.sharedBuildOf("heldout-launch\x00"+strconv.FormatInt(a.ID, 10)+"\x00"+owner, fmt.Sprintf("launching the held-out runs of alignment %d", a.ID))
	b.inBackground(ctx, func(context.Context) (any, error) {
		_, _, err := launch()
		return nil, err
	})
	return before, afterRun, true, nil
}

// errHeldOutClaimLost stops a launch whose claim another took over (its
// lease lapsed unrenewed, and another launch claimed the alignment).
var errHeldOutClaimLost = models.Errorf(models.EConflict, "another launch of these held-out runs took over while this one was not heard from")

// keepHeldOutLease renews owner's claim on alignment id's launch every
// quarter of lease until stop is called; the context it returns ends when
// the claim is lost, so that a launch another took over stops (its copy
// rolled back) rather than making a second one. A renewal that fails (on
// SQLite, the copy's own write transaction holds the database) is tried
// again at the next.
func (h *Handlers) keepHeldOutLease(ctx context.Context, id int64, owner string, lease time.Duration) (context.Context, func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(lease / 4)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			held, err := h.DB.RenewHeldOutLaunch(context.WithoutCancel(ctx), id, owner, lease)
			switch {
			case err != nil:
				h.Log.Warn("renew the held-out launch", "alignment", id, "err", err)
			case !held:
				cancel(errHeldOutClaimLost)
				return
			}
		}
	}()
	return wctx, func() {
		close(done)
		<-ended
		cancel(nil)
	}
}

// preparingHeldOutNote says that alignment a's held-out runs are being
// prepared (in this process or another), or why they could not be, or
// that their preparation stopped with its process (the page then offers
// to launch them again); "" when no launch of them says anything. refresh
// says the page should reload itself.
func (h *Handlers) preparingHeldOutNote(ctx context.Context, a models.Alignment) (note string, refresh, failed bool, err error) {
	l, ok, err := h.DB.FindHeldOutLaunch(ctx, a.ID)
	switch {
	case err != nil || !ok:
		return "", false, false, err
	case l.Preparing():
		return fmt.Sprintf("Preparing the held-out runs: the %s held-out samples are being copied into a dataset of their own (since %s), and both runs are launched on it as soon as it is stored. This page reloads itself every %d seconds.",
			web.Count(len(a.HeldOutRowIDs)), stampText(l.StartedAt), preparingRetrySeconds), true, false, nil
	case l.Stopped():
		return fmt.Sprintf("The preparation of the held-out runs started on %s stopped before they were launched: the server process preparing them ended (its claim lapsed unrenewed at %s), and nothing of its copy was kept. Launch them again below.",
			stampText(l.StartedAt), stampText(*l.LeaseUntil)), false, true, nil
	case l.Failed != "":
		at := l.StartedAt
		if l.EndedAt != nil {
			at = *l.EndedAt
		}
		return fmt.Sprintf("The held-out runs could not be prepared (on %s): %s. Launch them again below.", stampText(at), l.Failed), false, true, nil
	}
	return "", false, false, nil
}

// errorClause is err's message as a page says it (models.ErrorMessage)
// without its closing full stop, for a sentence that goes on after it:
// "could not be launched: Something went wrong on our side. The details
// are in the server log.. Launch them again" had two.
func errorClause(err error) string {
	return strings.TrimSuffix(models.ErrorMessage(err), ".")
}
