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
