package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Audit actions. Share links, deletions and API tokens are named here so
// the features that add them write the same vocabulary.
const (
	AuditSignIn        = "sign-in"
	AuditSignInFailed  = "sign-in-failed"
	AuditSignOut       = "sign-out"
	AuditSetup         = "setup"
	AuditInviteCreated = "invite-created"
	AuditInviteRevoked = "invite-revoked"
	// AuditInviteMailResent: an owner sent again the confirmation mails of
	// an invite's answers that could not be delivered.
	AuditInviteMailResent = "invite-mail-resent"
	AuditMemberJoined     = "member-joined"
	AuditMemberRole       = "member-role-changed"
	AuditMemberRemoved    = "member-removed"
	AuditResetIssued      = "password-reset-issued"
	AuditPasswordReset    = "password-reset"
	AuditJudgeCreated     = "judge-created"
	AuditJudgeUpdated     = "judge-updated"
	AuditKeyChanged       = "judge-key-changed"
	AuditRunLaunched      = "run-launched"
	AuditRunCancelled     = "run-cancelled"
	AuditRunResumed       = "run-resumed"
	AuditRunPaused        = "run-paused"
	AuditRunContinued     = "run-continued"
	AuditExperiment       = "experiment-launched"
	AuditDeleted          = "deleted"
	AuditRenamed          = "renamed"
	AuditArchived         = "archived"
	AuditUnarchived       = "unarchived"
	AuditRestored         = "restored"
	AuditPurged           = "purged"
	AuditShareCreated     = "share-link-created"
	AuditShareRevoked     = "share-link-revoked"
	AuditWorkspaceCreate  = "workspace-created"
	// AuditRatingsExcluded and AuditRatingsCounted: an owner left a
	// person's browser ratings out of the human ratings, or counted them
	// again (models.SetRatingsExcluded).
	AuditRatingsExcluded = "ratings-excluded"
	AuditRatingsCounted  = "ratings-counted-again"
)

// Audit actions of a person's own account page: their password changed, a
// wrong current password typed there, and "sign out my other sessions".
const (
	AuditPasswordChanged      = "password-changed"
	AuditPasswordChangeFailed = "password-change-failed"
	AuditOtherSessionsEnded   = "other-sessions-signed-out"
	// AuditNameChanged: a person changed their own display name
	// (RenameUser); the detail holds the old and the new name.
	AuditNameChanged = "display-name-changed"
)

// AuditEvent is one line of a workspace's audit log.
type AuditEvent struct {
	ID          int64
	WorkspaceID int64
	ActorUserID *int64
	// Actor is who acted as shown at the time ("Ada <ada@example.com>",
	// "local user", or the address typed in a failed sign-in).
	Actor     string
	Action    string
	Target    string
	Detail    string
	Address   string
	CreatedAt time.Time
}

// clip keeps audit fields bounded whatever a form sent.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// RecordAudit appends an event to a workspace's audit log.
func (db *DB) RecordAudit(ctx context.Context, ev AuditEvent) error {
	ev.ID = 0
	ev.Actor = clip(ev.Actor, 300)
	ev.Target = clip(ev.Target, 300)
	ev.Detail = clip(ev.Detail, 1000)
	ev.Address = clip(ev.Address, 100)
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = time.Now().UTC()
	}
	return db.Gorm.WithContext(ctx).Create(&ev).Error
}

// RecordFailedSignIn writes the audit entry of a failed sign-in with the
// address typed (email, as the sign-in form normalized it) into the log of
// every workspace of the account that has that address, and nothing when
// no account has it. ev gives who acted, from where and when; its
// workspace, action, target and detail are set here.
//
// It is one statement, the same whether or not the address belongs to an
// account (an INSERT that selects the account's workspaces, inserting none
// for an unknown address), so that the database work of a failed sign-in
// does not tell a registered address from another (account enumeration
// by timing or by counting statements).
func (db *DB) RecordFailedSignIn(ctx context.Context, email string, ev AuditEvent) error {
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = time.Now()
	}
	// PostgreSQL types a parameter in a SELECT list as text, which
	// created_at is not; SQLite stores the time as the driver binds it.
	at := "?"
	if db.Dialect == Postgres {
		at = "CAST(? AS TIMESTAMPTZ)"
	}
	q := `INSERT INTO audit_events (workspace_id, actor, action, target, detail, address, created_at)
SELECT memberships.workspace_id, CAST(? AS TEXT), CAST(? AS TEXT), users.email, CAST(? AS TEXT) || users.email, CAST(? AS TEXT), ` + at + `
FROM memberships JOIN users ON users.id = memberships.user_id
WHERE users.email = ? ORDER BY memberships.id`
	return db.Gorm.WithContext(ctx).Exec(q, clip(ev.Actor, 300), AuditSignInFailed, FailedSignInDetail, clip(ev.Address, 100),
		ev.CreatedAt.UTC(), strings.ToLower(strings.TrimSpace(email))).Error
}

// FailedSignInDetail starts the detail of a failed sign-in's audit entry,
// the account's address following it.
const FailedSignInDetail = "wrong password for "

// ListAudit returns a workspace's events newest first, limit at a time,
// older than beforeID when it is not 0.
func (db *DB) ListAudit(ctx context.Context, wsID int64, beforeID int64, limit int) ([]AuditEvent, error) {
	var evs []AuditEvent
	q := db.Reader(ctx).Where("workspace_id = ?", wsID)
	if beforeID > 0 {
		q = q.Where("id < ?", beforeID)
	}
	err := q.Order("id DESC").Limit(limit).Find(&evs).Error
	return evs, err
}

// Audit is the audit-log entry of a write, recorded by the write itself in
// its own transaction: the action and its entry are stored together or not
// at all, so a team's log never misses a role change, a token or a
// revoked link that did happen. Event says who acted, from which address
// and in which workspace (the handlers build it from the request, in one
// place); Describe, called inside the transaction once the write has done
// its work, says what was done (action, target, detail) from the write's
// result, which may name what only the write knew (a new token's prefix, a
// link's id). A write given no Audit records nothing: the operator's
// command line and the tests that are not about the log.
type Audit[T any] struct {
	Event    AuditEvent
	Describe func(T) AuditNote
}

// AuditNote is what an audited write did: Action is one of the Audit
// constants; an empty Action records nothing (a write that changed
// nothing).
type AuditNote struct {
	Action, Target, Detail string
}

// ErrAuditNotWritten is the cause of an action refused because its audit
// entry could not be written (errors.Is finds it under the *Error).
var ErrAuditNotWritten = errors.New("audit log not written")

// recordAudits writes the entries of audits for result v, in tx (the
// write's own transaction). An entry with no workspace is not written, as
// before: there is no workspace log to hold it.
func recordAudits[T any](tx *gorm.DB, audits []Audit[T], v T) error {
	for _, a := range audits {
		if a.Describe == nil || a.Event.WorkspaceID == 0 {
			continue
		}
		n := a.Describe(v)
		if n.Action == "" {
			continue
		}
		e := a.Event
		e.Action, e.Target, e.Detail = n.Action, n.Target, n.Detail
		if err := auditTx(tx, e); err != nil {
			return err
		}
	}
	return nil
}

// recordAccountAudits writes the entries of audits for result v, in tx,
// as auditAccountTx does: into the log of every workspace of account
// userID (Event's workspace is not used), or the accounts' log for an
// account in no workspace. For what is done to an account rather than in
// one workspace (its password changed or reset, its sessions ended).
func recordAccountAudits[T any](tx *gorm.DB, userID int64, audits []Audit[T], v T) error {
	for _, a := range audits {
		if a.Describe == nil {
			continue
		}
		n := a.Describe(v)
		if n.Action == "" {
			continue
		}
		e := a.Event
		e.WorkspaceID, e.Action, e.Target, e.Detail = 0, n.Action, n.Target, n.Detail
		if err := auditAccountTx(tx, userID, e); err != nil {
			return err
		}
	}
	return nil
}

// joinedBy makes audits the entries of account u joining inv's workspace:
// written in that workspace's log, with u as the actor (an account made
// in the same transaction had no id when the caller built the event).
func joinedBy(audits []Audit[Invite], u User, inv Invite) []Audit[Invite] {
	out := make([]Audit[Invite], len(audits))
	for i, a := range audits {
		id := u.ID
		a.Event.WorkspaceID, a.Event.ActorUserID, a.Event.Actor = inv.WorkspaceID, &id, u.Name+" <"+u.Email+">"
		out[i] = a
	}
	return out
}

// auditFailed is the error of a write whose audit entry could not be
// written: its transaction is rolled back, so nothing was changed, and the
// person is told so and to try again.
func auditFailed(action string, err error) error {
	return &Error{Code: EInternal, Err: fmt.Errorf("%w (%s): %w", ErrAuditNotWritten, action, err),
		Message: "Nothing was changed: the audit log could not record this action, and an action is only done together with its entry. " +
			"Try again in a moment; if it keeps failing, tell the server's operator (the cause is in the server log)."}
}
