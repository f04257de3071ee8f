package handlers

import (
	"context"
	"fmt"
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
// slots (background.go), once per alignment and process: the request
// answers at once, and the alignment's page says the held-out runs are
// being prepared and reloads itself until they are launched, or says why
// they could not be and offers to launch them again. The copy is written
// in one transaction, so a failure (or the end of the process) leaves no
// part of it; the alignment records the dataset and runs only once made.

// heldOutInlineSamples is the largest held-out part launched in the
// request (a variable so tests can lower it): 10,000 samples take under a
// second on a small server, 50,000 about 4 s (BenchmarkAlignmentAccept).
var heldOutInlineSamples = 10000

// heldOutLaunch is how the last background launch of an alignment's
// held-out runs in this process stands: under way, or failed with the
// error's message (as the page says it).
type heldOutLaunch struct {
	running bool
	failed  string
	at      time.Time
}

// heldOutLaunchOf is how the last background launch of alignment id's
// held-out runs in this process stands; ok is false when there was none.
func (h *Handlers) heldOutLaunchOf(id int64) (heldOutLaunch, bool) {
	rc := h.reports
	rc.mu.Lock()
	defer rc.mu.Unlock()
	l, ok := rc.launches[id]
	return l, ok
}

// launchHeldOutFor launches the held-out runs of accepted alignment a of
// run with the aligned criterion worded as after: in the request when its
// held-out part is small (launchHeldOut, audited), otherwise in the
// background. started says it went to the background; then err is only a
// refusal to start (a launch of the same alignment under way).
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
	if len(a.HeldOutRowIDs) <= heldOutInlineSamples {
		before, afterRun, err = h.launchHeldOut(ctx, ws, &a, run, after)
		if err == nil {
			audit(ctx, before, afterRun)
		}
		return before, afterRun, false, err
	}
	rc := h.reports
	rc.mu.Lock()
	if l := rc.launches[a.ID]; l.running {
		rc.mu.Unlock()
		return before, afterRun, false, models.Errorf(models.EConflict, "the held-out runs of alignment %d are being prepared (since %s): wait for them", a.ID, stampText(l.at))
	}
	rc.launches[a.ID] = heldOutLaunch{running: true, at: time.Now().UTC()}
	rc.mu.Unlock()
	b := h.sharedBuildOf("heldout-launch\x00"+strconv.FormatInt(a.ID, 10), fmt.Sprintf("launching the held-out runs of alignment %d", a.ID))
	b.inBackground(ctx, func(ctx context.Context) (any, error) {
		before, afterRun, err := h.launchHeldOut(ctx, ws, &a, run, after)
		l := heldOutLaunch{at: time.Now().UTC()}
		if err != nil {
			h.Log.Error("launch held-out runs", "alignment", a.ID, "err", err)
			l.failed = errorClause(err)
		} else {
			audit(ctx, before, afterRun)
		}
		rc.mu.Lock()
		rc.launches[a.ID] = l
		rc.mu.Unlock()
		return nil, err
	})
	return before, afterRun, true, nil
}

// preparingHeldOutNote says that alignment a's held-out runs are being
// prepared, or why they could not be (the page then offers to launch them
// again); "" when no background launch of them in this process says
// anything. refresh says the page should reload itself.
func (h *Handlers) preparingHeldOutNote(a models.Alignment) (note string, refresh, failed bool) {
	l, ok := h.heldOutLaunchOf(a.ID)
	switch {
	case !ok:
		return "", false, false
	case l.running:
		return fmt.Sprintf("Preparing the held-out runs: the %s held-out samples are being copied into a dataset of their own (since %s), and both runs are launched on it as soon as it is stored. This page reloads itself every %d seconds.",
			web.Count(len(a.HeldOutRowIDs)), stampText(l.at), preparingRetrySeconds), true, false
	case l.failed != "":
		return fmt.Sprintf("The held-out runs could not be prepared (on %s): %s. Launch them again below.", stampText(l.at), l.failed), false, true
	}
	return "", false, false
}

// errorClause is err's message as a page says it (models.ErrorMessage)
// without its closing full stop, for a sentence that goes on after it:
// "could not be launched: Something went wrong on our side. The details
// are in the server log.. Launch them again" had two.
func errorClause(err error) string {
	return strings.TrimSuffix(models.ErrorMessage(err), ".")
}
