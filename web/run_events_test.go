package web

import (
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// Every kind of event the runner records has its own words on a share
// link; an unknown kind falls back to a general sentence. A new kind added
// without words here would read as "moved from one worker to another",
// which for a requeued run (no worker ever held it) is wrong.
func TestSharedRunEventTextNamesEveryKind(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	fallback := SharedRunEventText(models.RunEvent{Kind: "something-new", At: at})
	seen := map[string]string{}
	for _, kind := range []string{models.RunEventLeaseLost, models.RunEventTakenOver, models.RunEventResumed, models.RunEventRequeued, models.RunEventLateCount, models.RunEventResent} {
		ev := models.RunEvent{Kind: kind, At: at, Message: "worker host-1:42 at " + runEventTime(at) + ": dial tcp 10.0.0.5:5432"}
		got := SharedRunEventText(ev)
		if got == fallback {
			t.Errorf("%s: shared text is the fallback %q", kind, got)
		}
		if strings.Contains(got, "host-1") || strings.Contains(got, "10.0.0.5") {
			t.Errorf("%s: shared text quotes the stored message: %q", kind, got)
		}
		if other, ok := seen[got]; ok {
			t.Errorf("%s and %s share the words %q", kind, other, got)
		}
		seen[got] = kind
	}
	if !strings.Contains(SharedRunEventText(models.RunEvent{Kind: models.RunEventRequeued}), "queued again") {
		t.Errorf("requeued event does not say the run was queued again")
	}
}

// TestSharedResentEventSaysHowMany: a share link's reader learns how many
// slow calls the run re-sent (the count, from the runner's message), and
// that each was paid for; a message without a count reads without one.
func TestSharedResentEventSaysHowMany(t *testing.T) {
	ev := models.RunEvent{Kind: models.RunEventResent, Worker: "host-1:42/3",
		Message: `Re-sent 5 slow judge calls (the run's setting "Re-send slow judge calls"): each went out a second time.`}
	got := SharedRunEventText(ev)
	if !strings.HasPrefix(got, "Re-sent 5 slow judge calls because") || !strings.Contains(got, "paid call") || strings.Contains(got, "host-1") {
		t.Errorf("shared text %q, want the count of 5 re-sent calls, that each is paid, and no worker", got)
	}
	ev.Message = "<b>5</b> calls (whatever)"
	if got := SharedRunEventText(ev); strings.Contains(got, "<b>") || !strings.HasPrefix(got, "Re-sent slow judge calls;") {
		t.Errorf("shared text of a message without a count: %q", got)
	}
}
