package web

import (
	"strings"
	"time"

	"github.com/batcheval/batcheval/models"
)

// runEventTime is how a run's events write a time, on pages as in the
// messages the runner stores (runner.eventTime).
func runEventTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// RunEventText is an event's message as a list of events shows it, just
// after the event's time: without the message's own " at <time>" of that
// moment, which would say the time twice. The stored message keeps it, so
// it reads alone where it is shown alone (the API's events[].message); a
// message without that time is shown as it is.
func RunEventText(ev models.RunEvent) string {
	return strings.Replace(ev.Message, " at "+runEventTime(ev.At), "", 1)
}

// SharedRunEventText is an event as a share link's reader sees it: what
// happened to the run's execution, naming no worker and quoting no error.
// A worker's name holds its server's host name and process id, and a lost
// lease's message may quote the database's error (its address): both are
// the workspace's own, not the report's.
func SharedRunEventText(ev models.RunEvent) string {
	switch ev.Kind {
	case models.RunEventLeaseLost:
		return "A worker lost its hold (lease) on the run and sent no new calls from then on; answers to calls it had already sent were kept."
	case models.RunEventTakenOver:
		return "Another worker took the run over. Batches already answered were not sent again; the calls the previous worker had sent and not yet stored were sent again, each a paid call. Had that worker stopped (a crash), what their first copies cost is not in the run's calls, tokens or cost."
	case models.RunEventResumed:
		return "The same worker took the run on again. Batches already answered were not sent again."
	case models.RunEventRequeued:
		return "The run's place in the queue was lost, so it was queued again. Nothing had been sent to the judge yet."
	case models.RunEventResent:
		// The count is the event's own (its message says it).
		if n := resentCount(ev.Message); n != "" {
			return "Re-sent " + n + " because they took much longer than the run's other calls; the first answer was used. Each re-send is a paid call, counted in the run's calls, tokens and cost."
		}
		return "Re-sent slow judge calls; the first answer was used. Each re-send is a paid call, counted in the run's calls, tokens and cost."
	case models.RunEventLateCount:
		return "A judge call sent before the run ended came back after it ended. It was added to the run's figures then (its calls, tokens and cost, or, for a call answered from the answer cache, a probe of the judge or a failed attempt, those counts; its scores too, when its answer was stored on the run); reports downloaded before then do not include it."
	}
	return "The run moved from one worker to another."
}

// resentCount is "N slow judge calls" as a re-sent event's message says
// it ("Re-sent N slow judge calls ..."), or "" when it does not.
func resentCount(msg string) string {
	rest, ok := strings.CutPrefix(msg, "Re-sent ")
	if !ok {
		return ""
	}
	n, _, ok := strings.Cut(rest, " (")
	if !ok || n == "" || n[0] < '0' || n[0] > '9' {
		return ""
	}
	return n
}
