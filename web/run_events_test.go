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
	for _, kind := range []string{models.RunEventLeaseLost, models.RunEventTakenOver, models.RunEventResumed, models.RunEventRequeued, models.RunEventLateCount} {
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
