package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/batcheval/batcheval/models"
)

// leaseLostError is why keepLease stopped an execution's work: its lease
// ran out at at (on this process's clock) and could not be renewed,
// because of err when a renewal failed (nil: the renewal came too late).
type leaseLostError struct {
	at  time.Time
	err error
}

func (e *leaseLostError) Error() string { return errLeaseLost.Error() }
func (e *leaseLostError) Unwrap() error { return errLeaseLost }

// eventTime is how the run's events write a time.
func eventTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// workerName is the worker process of a lease owner ("<worker>/<n>": the
// n-th execution in that process).
func workerName(owner string) string {
	if i := strings.LastIndexByte(owner, '/'); i > 0 {
		return owner[:i]
	}
	return owner
}

// noteLeaseLost records on the run, once its execution has stopped and
// stored what it could, that this worker lost its lease and why. cause is
// the work context's cause, err what the execution returned. It is
// written once the database answers again: tried for DBRetryFor here,
// then, while the database stays down, again in the background for up to
// Config.EventRetryFor (keepNoting), as only this worker knows why it
// lost the lease. The successor's claim records the takeover meanwhile;
// the lost lease, written later, still comes first on the run (by when).
func (r *Runner) noteLeaseLost(ctx context.Context, runID int64, owner string, cause, err error, log *slog.Logger) {
	at := time.Now()
	why := "another worker holds the run now"
	var le *leaseLostError
	switch {
	case errors.As(cause, &le) && le.err != nil:
		at = le.at
		why = fmt.Sprintf("it could not renew it in time (the database did not answer: %v)", le.err)
	case errors.As(cause, &le):
		at = le.at
		why = "its renewal was held up past the lease"
	case errors.Is(err, models.ErrLeaseLost):
		why = "a write found the lease no longer its own"
	}
	msg := fmt.Sprintf("Worker %s lost its lease on the run at %s: %s. It sent no new calls from then on; "+
		"answers to calls it had already sent were kept (they were paid for). The run goes on with the next worker to claim it.",
		workerName(owner), eventTime(at), why)
	ev := models.RunEvent{RunID: runID, At: at, Kind: models.RunEventLeaseLost, Worker: owner, Message: msg}
	if err := r.addEvent(context.WithoutCancel(ctx), ev); err != nil {
		if !models.IsTransient(err) {
			log.Warn("could not record the lost lease on the run", "err", err)
			return
		}
		log.Warn("could not record the lost lease on the run yet; trying again while the database is down", "err", err, "for", r.cfg.EventRetryFor)
		r.keepNoting(ev, log)
	}
}

// DefaultEventRetryFor is how long a lost lease the database would not
// take is still tried (Config.EventRetryFor): longer than any outage a
// run rides out, short enough not to keep a goroutine for ever.
const DefaultEventRetryFor = time.Hour

// addEvent writes a run event (tests stand in for the database).
func (r *Runner) addEvent(ctx context.Context, ev models.RunEvent) error {
	if r.eventWriter != nil {
		return r.eventWriter(ctx, ev)
	}
	return r.db.AddRunEvent(ctx, ev)
}

// keepNoting writes ev in the background, trying again after each
// transient failure (each try itself retried for DBRetryFor), until it is
// written, Config.EventRetryFor has passed, or the runner stops (Stop and
// Kill end it). A try whose commit was written but not acknowledged does
// not write the event twice (AddRunEvent).
func (r *Runner) keepNoting(ev models.RunEvent, log *slog.Logger) {
	r.notes.Add(1)
	go func() {
		defer r.notes.Done()
		deadline := time.Now().Add(r.cfg.EventRetryFor)
		wait := min(time.Second, r.cfg.EventRetryFor/20)
		for {
			t := time.NewTimer(wait)
			select {
			case <-r.notesCtx.Done():
				t.Stop()
				log.Warn("the lost lease was not recorded on the run: the worker stopped before the database answered")
				return
			case <-t.C:
			}
			err := r.addEvent(r.notesCtx, ev)
			if err == nil {
				log.Info("recorded the lost lease on the run once the database answered again")
				return
			}
			if !models.IsTransient(err) || time.Now().After(deadline) {
				log.Warn("gave up recording the lost lease on the run", "err", err)
				return
			}
			wait = min(2*wait, 30*time.Second)
		}
	}()
}

// noteTakeover records, when owner has just claimed the run after another
// execution's lease on it ran out (rather than was given up), who took it
// over from whom and when.
func (r *Runner) noteTakeover(ctx context.Context, runID int64, owner string, prev models.RunLease, log *slog.Logger) {
	if prev.Owner == "" || prev.Owner == owner || !prev.Lapsed {
		return
	}
	// By: the lease in the database may end after the moment its worker
	// lost it (a renewal that came too late is not honoured by the worker).
	ranOut := "its lease had run out"
	if prev.Until != nil {
		ranOut = "its lease had run out by " + eventTime(*prev.Until)
	}
	now := time.Now()
	ev := models.RunEvent{RunID: runID, At: now, Worker: owner}
	if workerName(prev.Owner) == workerName(owner) {
		ev.Kind = models.RunEventResumed
		ev.Message = fmt.Sprintf("Worker %s resumed the run at %s (%s). Batches already answered were not sent again.",
			workerName(owner), eventTime(now), ranOut)
	} else {
		ev.Kind = models.RunEventTakenOver
		// The taker cannot tell a crashed worker from one cut off from the
		// database: only the latter still stores (and counts) the answers
		// to the calls it had out, so the line says what a crash costs.
		ev.Message = fmt.Sprintf("Worker %s took the run over at %s from worker %s (%s). Batches already answered were not sent again; "+
			"the calls worker %s had sent and not yet stored were sent again, each a paid call. Had that worker stopped (a crash), "+
			"what their first copies cost is not in the run's calls, tokens or cost: the judge endpoint's usage page has it.",
			workerName(owner), eventTime(now), workerName(prev.Owner), ranOut, workerName(prev.Owner))
	}
	if err := r.db.AddRunEvent(context.WithoutCancel(ctx), ev); err != nil {
		log.Warn("could not record the takeover on the run", "err", err)
	}
}
