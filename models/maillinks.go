package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Mailed links are sent by a background job (runner/mail.go) that holds
// only the kind and id of the link's row: a token is never stored in
// clear, not even in the job. The job makes the link's token when it runs
// (RemintLink), stores its hash in place of the one before, and mails it.
// An attempt that failed may have delivered its mail all the same (the
// SMTP server took the message but its reply was lost), so the hash of a
// token mailed before is kept (MailedToken): every link a job mailed
// opens the same row, single use as ever, until it is used, ends, or its
// owner is shown a new one instead.

// MailedToken is a token (its hash) a mail job sent before its last
// attempt: the link it was in keeps opening its row.
type MailedToken struct {
	ID int64 `gorm:"primaryKey"`
	// Kind is LinkInvite, LinkReset or LinkConfirm; LinkID the row.
	Kind      string
	LinkID    int64
	TokenHash string
	CreatedAt time.Time
}

// linkToken matches the row of link kind that a token (its hash) opens:
// the row's token, or one mailed before its last mail (MailedToken).
func linkToken(kind, hash string) clause.Expr {
	return gorm.Expr("(token_hash = ? OR id IN (SELECT mailed_tokens.link_id FROM mailed_tokens WHERE mailed_tokens.kind = ? AND mailed_tokens.token_hash = ?))", hash, kind, hash)
}

// keepMailedToken keeps the hash a link's row holds before the next
// attempt replaces it, when that hash was mailed.
func keepMailedToken(tx *gorm.DB, kind string, id int64, hash string) error {
	if err := tx.Create(&MailedToken{Kind: kind, LinkID: id, TokenHash: hash, CreatedAt: time.Now().UTC()}).Error; err != nil {
		return fmt.Errorf("keep the %s link mailed before: %w", kind, err)
	}
	return nil
}

// QueueLinkMail queues, in tx (the transaction that makes the link's
// row), the mail of the link whose row has id: a row is never stored
// without its mail queued, nor a mail queued for a row not stored.
type QueueLinkMail func(ctx context.Context, tx *sql.Tx, id int64) error

// queueIn calls the first of queue, if any, with the row's id in tx.
func queueIn(ctx context.Context, tx *gorm.DB, id int64, queue []QueueLinkMail) error {
	if len(queue) == 0 || queue[0] == nil {
		return nil
	}
	stx, err := SQLTx(tx)
	if err != nil {
		return err
	}
	if err := queue[0](ctx, stx, id); err != nil {
		return fmt.Errorf("queue the link's mail: %w", err)
	}
	return nil
}

// Kinds of mailed links.
const (
	LinkInvite  = "invite"
	LinkReset   = "reset"
	LinkConfirm = "confirm"
)

// MailLink is a link about to be mailed and what its mail says.
type MailLink struct {
	Kind string
	// To is the address the link is mailed to.
	To string
	// Path is the link's path, with its new token ("/invites/TOKEN").
	Path string
	// Workspace, Role and Inviter describe an invite (Workspace also the
	// workspace a confirmation link joins, "" for none).
	Workspace, Role, Inviter string
	// Name is the account's name (reset).
	Name string
}

// RemintLink gives the open link kind/id a new token for the mail about
// to be sent; ok is false when the link no longer works (used, revoked,
// expired, or its account's address released): nothing is to be sent.
// mailed says the token it holds was mailed by an earlier attempt, which
// may have been delivered: that token keeps working beside the new one.
func (db *DB) RemintLink(ctx context.Context, kind string, id int64, mailed bool) (l MailLink, ok bool, err error) {
	token, hash, err := NewLinkToken()
	if err != nil {
		return MailLink{}, false, err
	}
	now := time.Now().UTC()
	l.Kind = kind
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var res *gorm.DB
		switch kind {
		case LinkInvite:
			var inv Invite
			// Not one kept for the account that answered it (its link is
			// in use), nor one whose link the owner was shown instead.
			if err := tx.Where("id = ? AND used_at IS NULL AND expires_at > ? AND claimed_by IS NULL AND mail_stopped = ?", id, now, false).
				Where(inviteMakerOwns).Limit(1).Find(&inv).Error; err != nil || inv.ID == 0 {
				return err
			}
			var ws Workspace
			if err := tx.First(&ws, inv.WorkspaceID).Error; err != nil {
				return notFound(err, "workspace", inv.WorkspaceID)
			}
			if inv.CreatedBy != nil {
				var by User
				if err := tx.Limit(1).Find(&by, *inv.CreatedBy).Error; err != nil {
					return err
				}
				l.Inviter = by.Name
			}
			l.To, l.Path, l.Workspace, l.Role = inv.Email, "/invites/"+token, ws.Name, string(inv.Role)
			if mailed {
				if err := keepMailedToken(tx, kind, id, inv.TokenHash); err != nil {
					return err
				}
			}
			res = tx.Model(&Invite{}).Where("id = ? AND token_hash = ? AND used_at IS NULL AND claimed_by IS NULL AND mail_stopped = ?", id, inv.TokenHash, false).
				Update("token_hash", hash)
		case LinkReset:
			var pr PasswordReset
			if err := tx.Where("id = ? AND used_at IS NULL AND expires_at > ?", id, now).Limit(1).Find(&pr).Error; err != nil || pr.ID == 0 {
				return err
			}
			var u User
			if err := tx.Limit(1).Find(&u, pr.UserID).Error; err != nil || u.ID == 0 || strings.HasSuffix(u.Email, "@"+ReleasedDomain) {
				return err
			}
			l.To, l.Path, l.Name = u.Email, "/reset/"+token, u.Name
			if mailed {
				if err := keepMailedToken(tx, kind, id, pr.TokenHash); err != nil {
					return err
				}
			}
			res = tx.Model(&PasswordReset{}).Where("id = ? AND token_hash = ? AND used_at IS NULL", id, pr.TokenHash).Update("token_hash", hash)
		case LinkConfirm:
			var ec EmailConfirmation
			if err := tx.Where("id = ? AND used_at IS NULL AND expires_at > ?", id, now).Limit(1).Find(&ec).Error; err != nil || ec.ID == 0 {
				return err
			}
			if ec.InviteID != nil {
				var inv Invite
				if err := tx.Limit(1).Find(&inv, *ec.InviteID).Error; err != nil {
					return err
				}
				var ws Workspace
				if err := tx.Limit(1).Find(&ws, inv.WorkspaceID).Error; err != nil {
					return err
				}
				l.Workspace = ws.Name
			}
			l.To, l.Path = ec.Email, "/confirm/"+token
			if mailed {
				if err := keepMailedToken(tx, kind, id, ec.TokenHash); err != nil {
					return err
				}
			}
			res = tx.Model(&EmailConfirmation{}).Where("id = ? AND token_hash = ? AND used_at IS NULL", id, ec.TokenHash).Update("token_hash", hash)
		default:
			return fmt.Errorf("no link is of kind %q", kind)
		}
		if res.Error != nil {
			return fmt.Errorf("store the %s link's new token: %w", kind, res.Error)
		}
		if res.RowsAffected != 1 {
			// The link changed since it was read: used, or (an invite) its
			// link shown to the owner instead, whose token must stay the
			// one that works. Nothing is sent, and the token kept above
			// is not kept.
			return errLinkChanged
		}
		ok = true
		return nil
	})
	if errors.Is(err, errLinkChanged) {
		return MailLink{}, false, nil
	}
	return l, ok && err == nil, err
}

// errLinkChanged rolls back RemintLink's transaction when the link's row
// changed between its read and its new token's write. The write is made
// on the token read: on PostgreSQL an owner's "show the link" committed in
// between (ShowInviteLink) had its token replaced by the retried mail's,
// and the link the owner handed over stopped working.
var errLinkChanged = errors.New("the link changed while its mail was prepared")

// RecordInviteMail records why mailing an invite's link failed ("": it
// was delivered).
func (db *DB) RecordInviteMail(ctx context.Context, id int64, problem string) error {
	return db.RecordLinkMail(ctx, LinkInvite, id, problem)
}

// RecordLinkMail records why mailing the link kind/id failed ("": it was
// delivered).
func (db *DB) RecordLinkMail(ctx context.Context, kind string, id int64, problem string) error {
	var m any
	switch kind {
	case LinkInvite:
		m = &Invite{}
	case LinkReset:
		m = &PasswordReset{}
	case LinkConfirm:
		m = &EmailConfirmation{}
	default:
		return fmt.Errorf("no link is of kind %q", kind)
	}
	return db.Gorm.WithContext(ctx).Model(m).Where("id = ?", id).Update("mail_problem", clip(problem, 1000)).Error
}

// UndeliveredMail is a reset or confirmation link of an account whose
// mail could not be delivered (yet).
type UndeliveredMail struct {
	// Kind is LinkReset or LinkConfirm; To the address mailed.
	Kind, To string
	// Problem is the SMTP server's reason and whether it is tried again.
	Problem string
}

// What names the mail ("password reset mail").
func (u UndeliveredMail) What() string {
	if u.Kind == LinkReset {
		return "password reset mail"
	}
	return "confirmation mail"
}

// UndeliveredMails finds, for each account of userIDs (all accounts when
// nil), its newest open reset or confirmation link when its mail could not
// be delivered: a newer link, or one used or ended, leaves nothing to say.
func (db *DB) UndeliveredMails(ctx context.Context, userIDs []int64) (map[int64]UndeliveredMail, error) {
	type row struct {
		ID          int64
		UserID      int64
		Kind        string
		Addr        string
		MailProblem string
		CreatedAt   time.Time
	}
	now := time.Now().UTC()
	var resets, confirms []row
	q := db.Reader(ctx).Table("password_resets").Select("password_resets.id, password_resets.user_id, 'reset' AS kind, users.email AS addr, password_resets.mail_problem, password_resets.created_at").
		Joins("JOIN users ON users.id = password_resets.user_id").
		Where("password_resets.used_at IS NULL AND password_resets.expires_at > ?", now)
	if userIDs != nil {
		q = q.Where("password_resets.user_id IN ?", userIDs)
	}
	if err := q.Scan(&resets).Error; err != nil {
		return nil, fmt.Errorf("find undelivered reset mails: %w", err)
	}
	q = db.Reader(ctx).Table("email_confirmations").Select("id, user_id, 'confirm' AS kind, email AS addr, mail_problem, created_at").
		Where("user_id IS NOT NULL AND used_at IS NULL AND expires_at > ?", now)
	if userIDs != nil {
		q = q.Where("user_id IN ?", userIDs)
	}
	if err := q.Scan(&confirms).Error; err != nil {
		return nil, fmt.Errorf("find undelivered confirmation mails: %w", err)
	}
	newest := map[int64]row{}
	for _, r := range append(resets, confirms...) {
		if n, ok := newest[r.UserID]; !ok || r.CreatedAt.After(n.CreatedAt) || (r.CreatedAt.Equal(n.CreatedAt) && r.ID > n.ID) {
			newest[r.UserID] = r
		}
	}
	out := map[int64]UndeliveredMail{}
	for id, r := range newest {
		if r.MailProblem != "" {
			out[id] = UndeliveredMail{Kind: r.Kind, To: r.Addr, Problem: r.MailProblem}
		}
	}
	return out, nil
}

// ShowInviteLink gives an open invite of the workspace a new token, for
// its owner to hand over when its mail could not be delivered; the link
// mailed before, if any, stops working, and a mail still being retried is
// not sent. Given an audit (described with the invite), its entry is
// written in the same transaction.
func (db *DB) ShowInviteLink(ctx context.Context, wsID, id int64, audit ...Audit[Invite]) (Invite, string, error) {
	token, hash, err := NewLinkToken()
	if err != nil {
		return Invite{}, "", err
	}
	var inv Invite
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("workspace_id = ? AND id = ? AND used_at IS NULL AND expires_at > ?", wsID, id, time.Now().UTC()).
			Where(inviteMakerOwns).First(&inv).Error; err != nil {
			return notFoundText(err, fmt.Sprintf("invite %d does not exist, was already used, or has already ended", id))
		}
		// The links mailed before stop working too.
		if err := tx.Where("kind = ? AND link_id = ?", LinkInvite, id).Delete(&MailedToken{}).Error; err != nil {
			return fmt.Errorf("end the links mailed before: %w", err)
		}
		if err := tx.Model(&Invite{}).Where("id = ?", id).Updates(map[string]any{"token_hash": hash, "mail_problem": "", "mail_stopped": true}).Error; err != nil {
			return err
		}
		return recordAudits(tx, audit, inv)
	})
	return inv, token, err
}

// ResendInviteAnswerMails queues again, for an owner of the workspace, the
// confirmation mails of an open invite's answers whose last mail could not
// be delivered (Invite.Answers with a MailProblem), each to the address it
// was answered with, and returns those addresses. Their problem is cleared
// until the new attempt's outcome is recorded. Only a mail that failed can
// be sent again, so the button is no way to mail an address at will. A nil
// queue (a server without mail) is refused once the invite is found.
//
// Given an audit (described with the addresses), its entry is written in
// the same transaction.
func (db *DB) ResendInviteAnswerMails(ctx context.Context, wsID, inviteID int64, queue QueueLinkMail, audit ...Audit[[]string]) ([]string, error) {
	var sent []string
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := time.Now().UTC()
		var inv Invite
		if err := tx.Where("workspace_id = ? AND id = ? AND used_at IS NULL AND expires_at > ?", wsID, inviteID, now).
			Where(inviteMakerOwns).First(&inv).Error; err != nil {
			return notFoundText(err, fmt.Sprintf("invite %d does not exist, was already used, or has already ended", inviteID))
		}
		if queue == nil {
			return Errorf(EInvalid, "this server sends no mail, so nothing can be sent again: the operator can set BATCHEVAL_SMTP_URL")
		}
		is := []Invite{inv}
		if err := withInviteAnswers(tx, is); err != nil {
			return err
		}
		stx, err := SQLTx(tx)
		if err != nil {
			return err
		}
		for _, a := range is[0].Answers {
			if a.MailProblem == "" {
				continue
			}
			if err := tx.Model(&EmailConfirmation{}).Where("id = ?", a.ConfirmationID).Update("mail_problem", "").Error; err != nil {
				return err
			}
			if err := queue(ctx, stx, a.ConfirmationID); err != nil {
				return fmt.Errorf("queue the confirmation mail to %s: %w", a.Email, err)
			}
			sent = append(sent, a.Email)
		}
		if len(sent) == 0 {
			return Errorf(EConflict, "no confirmation mail of invite %d failed: there is nothing to send again", inviteID)
		}
		return recordAudits(tx, audit, sent)
	})
	return sent, err
}

// AuditSelfReset: the account's holder asked for a reset link on the
// sign-in page, and it was mailed to the account's confirmed address.
const AuditSelfReset = "reset-requested"

// RequestOwnReset makes a reset link for the account of an address whose
// address is confirmed, for its holder who forgot the password ("Forgot
// password?"), audited in the account's workspaces; ok is false (and
// nothing is made) when no such account exists. queue queues the link's
// mail in the same transaction (its token is made when the mail is sent:
// RemintLink).
func (db *DB) RequestOwnReset(ctx context.Context, email, from string, queue func(ctx context.Context, tx *sql.Tx, resetID int64) error) (ok bool, err error) {
	_, hash, err := NewLinkToken()
	if err != nil {
		return false, err
	}
	var u User
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Where("email = ? AND email_confirmed_at IS NOT NULL", normalizeEmail(email)).First(&u).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		now := time.Now().UTC()
		pr := PasswordReset{UserID: u.ID, TokenHash: hash, CreatedAt: now, ExpiresAt: now.Add(ResetTTL), BySelf: true}
		if err := tx.Create(&pr).Error; err != nil {
			return fmt.Errorf("store the reset link: %w", err)
		}
		stx, err := SQLTx(tx)
		if err != nil {
			return err
		}
		if err := queue(ctx, stx, pr.ID); err != nil {
			return fmt.Errorf("queue the reset link's mail: %w", err)
		}
		ok = true
		return auditAccountTx(tx, u.ID, AuditEvent{Actor: u.Email, Action: AuditSelfReset, Target: u.Email,
			Detail: "on the sign-in page (Forgot password?); link mailed to the address, valid " + ResetTTL.String(), Address: from})
	})
	return ok && err == nil, err
}
