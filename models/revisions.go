package models

import (
	"fmt"
	"strconv"
	"time"
)

// A revision names one stored state of an editable object (a rubric, a
// judge): every save gives the object a new one, so a writer can ask that
// its save apply only to the state it read (optimistic concurrency; the API
// sends revisions as ETags and takes them back in If-Match).
//
// It is built from what every save already writes: updated_at (set on each
// save and rename, to the database's precision: what is read back, never
// the writer's clock reading) and, for a rubric, its version.

// Revision names the rubric's stored state.
func (r Rubric) Revision() string {
	return "rubric-" + strconv.Itoa(r.Version) + "-" + revisionTime(r.UpdatedAt)
}

// Revision names the judge's stored state, its shared limits included
// (SetJudgeLimits and SaveJudgeWithLimitsIf move updated_at with them). A
// "Test connection" is no change of settings and keeps it
// (RecordJudgeTest leaves updated_at), as does the adaptive concurrency
// the workers keep in judge_limits.
func (j Judge) Revision() string {
	return "judge-" + revisionTime(j.UpdatedAt)
}

// NoWebhookRevision is the revision of a workspace without a webhook: a
// form opened then expects that none was set meanwhile.
const NoWebhookRevision = "webhook-none"

// Revision names the webhook's stored settings. A delivery is no change
// of settings and keeps it (RecordWebhookDelivery leaves updated_at).
func (w Webhook) Revision() string {
	return "webhook-" + revisionTime(w.UpdatedAt)
}

// revisionTime writes a stored time in UTC nanoseconds.
func revisionTime(t time.Time) string {
	return strconv.FormatInt(t.UTC().UnixNano(), 36)
}

// Expectation says whether the stored state, named by its revision, is
// the one a conditional save expects. Saves check it in the transaction
// that writes, with the row locked: nil expects nothing (saves over any
// state).
type Expectation func(revision string) bool

func (e Expectation) met(revision string) bool { return e == nil || e(revision) }

// changedError is the error of a conditional save that found the object
// changed since its writer read it.
func changedError(what string, id int64) error {
	return &Error{Code: EChanged, Message: fmt.Sprintf("%s %d was changed since it was read (another save came first); nothing was saved", what, id)}
}
