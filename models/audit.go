package models

import (
	"context"
	"strings"
	"time"
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
