package models

import (
	"context"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"gorm.io/gorm"
)

// EmailConfirmation is a link mailed to an address: whoever opens it
// receives that address's mail. It answers an invite with a new account
// (InviteID, no UserID: the account is made only when the link is opened,
// so an address nobody confirmed is never taken), or confirms an existing
// account's address (UserID, and InviteID when it joins a workspace too).
// Only the hash of its token is stored.
type EmailConfirmation struct {
	ID        int64
	Email     string
	TokenHash string `json:"-"`
	UserID    *int64
	InviteID  *int64
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
	// MailProblem is why the last attempt at mailing the link failed
	// ("": delivered, or no attempt failed yet).
	MailProblem string
}

// ConfirmTTL is how long a mailed confirmation link works: mail can be
// slow or read the next morning.
const ConfirmTTL = 48 * time.Hour

// MaxAnswersPerInvite bounds the confirmation mails one invite link can
// send: each answer mails the address typed, and the holder of a link
// should not be able to send mail to address after address with it.
const MaxAnswersPerInvite = 5

var errConfirmUnusable = Errorf(ENotFound, "this confirmation link is not valid: it was already used, it expired, or a newer one replaced it. Ask for a new one")

// checkAddress normalizes an address typed in a form and checks it.
func checkAddress(email string) (string, error) {
	email = normalizeEmail(email)
	if _, err := mail.ParseAddress(email); err != nil || strings.ContainsAny(email, "<> ") || len(email) > 254 {
		return email, Errorf(EInvalid, "%q is not an email address", email)
	}
	if strings.HasSuffix(email, "@"+ReleasedDomain) {
		return email, Errorf(EInvalid, "%s is a placeholder address, not one that receives mail", email)
	}
	return email, nil
}

// AnswerInviteByMail answers an invite, for a visitor who is not signed in,
// with an address to mail a confirmation link to; the caller mails it.
// Nothing else changes: no account is made and the invite stays open until
// the link is opened (ConfirmSignup, ConfirmAddress), and the answer is the
// same whether the address has an account or not. An invite answered
// MaxAnswersPerInvite times is refused.
// queue, if given, queues the link's mail in the same transaction.
func (db *DB) AnswerInviteByMail(ctx context.Context, inviteToken, email string, queue ...QueueLinkMail) (EmailConfirmation, string, error) {
	email, err := checkAddress(email)
	if err != nil {
		return EmailConfirmation{}, "", err
	}
	token, hash, err := NewLinkToken()
	if err != nil {
		return EmailConfirmation{}, "", err
	}
	var ec EmailConfirmation
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var inv Invite
		err := tx.Where(linkToken(LinkInvite, HashLinkToken(inviteToken))).Where("used_at IS NULL AND claimed_by IS NULL AND expires_at > ?", time.Now().UTC()).
			Where(inviteMakerOwns).First(&inv).Error
		if err != nil {
			return notFoundText(err, errLinkUnusable.Message)
		}
		var n int64
		if err := tx.Model(&EmailConfirmation{}).Where("invite_id = ?", inv.ID).Count(&n).Error; err != nil {
			return err
		}
		if n >= MaxAnswersPerInvite {
			return Errorf(EConflict, "this invite link was answered %d times, the most it may be: no mail was sent. Ask the owner who invited you for a new link", MaxAnswersPerInvite)
		}
		now := time.Now().UTC()
		ec = EmailConfirmation{Email: email, TokenHash: hash, InviteID: &inv.ID, CreatedAt: now, ExpiresAt: now.Add(ConfirmTTL)}
		if err := tx.Create(&ec).Error; err != nil {
			return err
		}
		return queueIn(ctx, tx, ec.ID, queue)
	})
	return ec, token, err
}

// ConfirmationsPerHour is how many confirmation links one account may have
// mailed to its address in an hour. The address is the account's own, yet
// not shown to be: an account made before mail (an address squatted
// through an invite, or mistyped by the operator) could otherwise mail the
// address's real owner once a click, through the team's relay.
const ConfirmationsPerHour = 5

// ConfirmLimitError refuses a confirmation link over ConfirmationsPerHour;
// RetryAt is when the account may ask for the next.
type ConfirmLimitError struct {
	RetryAt time.Time
}

func (e *ConfirmLimitError) Error() string {
	return fmt.Sprintf("%d confirmation links were mailed to this address in the last hour, the most an account may ask for: no mail was sent. "+
		"Open the newest one (look in the spam folder too), or ask again after %s UTC.", ConfirmationsPerHour, e.RetryAt.UTC().Format("15:04"))
}

// RequestAddressConfirmation makes a link that confirms the address of the
// account userID, and joins the invite's workspace too when inviteToken is
// not "" (a signed-in account with an unconfirmed address answering an
// invite); the caller mails it to the account's address. The account's
// older open confirmation links end. An account that asked for
// ConfirmationsPerHour links in the last hour is refused with a
// *ConfirmLimitError.
// queue, if given, queues the link's mail in the same transaction.
func (db *DB) RequestAddressConfirmation(ctx context.Context, userID int64, inviteToken string, queue ...QueueLinkMail) (EmailConfirmation, string, error) {
	token, hash, err := NewLinkToken()
	if err != nil {
		return EmailConfirmation{}, "", err
	}
	var ec EmailConfirmation
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var u User
		if err := tx.First(&u, userID).Error; err != nil {
			return notFound(err, "user", userID)
		}
		if strings.HasSuffix(u.Email, "@"+ReleasedDomain) {
			return Errorf(EInvalid, "this account's address was released by the operator: it receives no mail")
		}
		now := time.Now().UTC()
		if db.Dialect == Postgres {
			// Requests at the same moment count each other.
			if err := tx.Exec("SELECT id FROM users WHERE id = ? FOR UPDATE", userID).Error; err != nil {
				return fmt.Errorf("lock user %d: %w", userID, err)
			}
		}
		var sent []time.Time
		if err := tx.Model(&EmailConfirmation{}).Where("user_id = ? AND created_at > ?", userID, now.Add(-time.Hour)).
			Order("created_at").Pluck("created_at", &sent).Error; err != nil {
			return fmt.Errorf("count the confirmation links of user %d: %w", userID, err)
		}
		if len(sent) >= ConfirmationsPerHour {
			return &ConfirmLimitError{RetryAt: sent[len(sent)-ConfirmationsPerHour].Add(time.Hour)}
		}
		ec = EmailConfirmation{Email: u.Email, TokenHash: hash, UserID: &u.ID, CreatedAt: now, ExpiresAt: now.Add(ConfirmTTL)}
		if inviteToken != "" {
			var inv Invite
			err := tx.Where(linkToken(LinkInvite, HashLinkToken(inviteToken))).Where("used_at IS NULL AND expires_at > ?", now).
				Where("claimed_by IS NULL OR claimed_by = ?", userID).Where(inviteMakerOwns).First(&inv).Error
			if err != nil {
				return notFoundText(err, errLinkUnusable.Message)
			}
			ec.InviteID = &inv.ID
		}
		if err := tx.Model(&EmailConfirmation{}).Where("user_id = ? AND used_at IS NULL", userID).Update("used_at", now).Error; err != nil {
			return fmt.Errorf("end the older confirmation links: %w", err)
		}
		if err := tx.Create(&ec).Error; err != nil {
			return err
		}
		return queueIn(ctx, tx, ec.ID, queue)
	})
	return ec, token, err
}

// ConfirmationTarget is what an open confirmation link leads to.
type ConfirmationTarget struct {
	Confirmation EmailConfirmation
	// Account is the account that has the link's address (nil: none yet).
	Account *User
	// Invite and Workspace are set when the link joins a workspace.
	Invite    *Invite
	Workspace Workspace
}

// FindOpenConfirmation finds what an unused, unexpired confirmation link
// leads to. A link to join a workspace whose invite no longer works is
// refused with the invite's reason.
func (db *DB) FindOpenConfirmation(ctx context.Context, token string) (ConfirmationTarget, error) {
	var t ConfirmationTarget
	q := db.Reader(ctx)
	if err := q.Where(linkToken(LinkConfirm, HashLinkToken(token))).Where("used_at IS NULL AND expires_at > ?", time.Now().UTC()).
		First(&t.Confirmation).Error; err != nil {
		return t, notFoundText(err, errConfirmUnusable.Message)
	}
	var us []User
	if err := q.Where("email = ?", t.Confirmation.Email).Limit(1).Find(&us).Error; err != nil {
		return t, err
	}
	if len(us) == 1 {
		t.Account = &us[0]
	}
	if id := t.Confirmation.UserID; id != nil && (t.Account == nil || t.Account.ID != *id) {
		// The account's address changed since (released).
		return t, errConfirmUnusable
	}
	if t.Confirmation.InviteID == nil {
		if t.Account == nil {
			return t, errConfirmUnusable
		}
		return t, nil
	}
	var inv Invite
	if err := q.Where("id = ? AND used_at IS NULL AND expires_at > ?", *t.Confirmation.InviteID, time.Now().UTC()).First(&inv).Error; err != nil {
		return t, notFoundText(err, errLinkUnusable.Message)
	}
	var n int64
	if err := q.Model(&Invite{}).Where("id = ?", inv.ID).Where(inviteMakerOwns).Count(&n).Error; err != nil {
		return t, err
	}
	if n == 0 {
		return t, errInviteMakerNotOwner
	}
	t.Invite = &inv
	if err := q.First(&t.Workspace, inv.WorkspaceID).Error; err != nil {
		return t, notFound(err, "workspace", inv.WorkspaceID)
	}
	return t, nil
}

// useConfirmation marks an open confirmation link used, once.
func useConfirmation(tx *gorm.DB, token string, now time.Time) (EmailConfirmation, error) {
	var ec EmailConfirmation
	if err := tx.Where(linkToken(LinkConfirm, HashLinkToken(token))).First(&ec).Error; err != nil {
		return ec, notFoundText(err, errConfirmUnusable.Message)
	}
	res := tx.Model(&EmailConfirmation{}).Where("id = ? AND used_at IS NULL AND expires_at > ?", ec.ID, now).Update("used_at", now)
	if res.Error != nil {
		return ec, res.Error
	}
	if res.RowsAffected != 1 {
		return ec, errConfirmUnusable
	}
	return ec, nil
}

// joinByConfirmation consumes the invite of a confirmation link for
// userID and adds the membership.
func joinByConfirmation(tx *gorm.DB, inviteID, userID int64) (Invite, error) {
	var inv Invite
	if err := tx.First(&inv, inviteID).Error; err != nil {
		return inv, notFoundText(err, errLinkUnusable.Message)
	}
	inv, err := consumeInviteHash(tx, inv.TokenHash, userID)
	if err != nil {
		return inv, err
	}
	var n int64
	if err := tx.Model(&Membership{}).Where("workspace_id = ? AND user_id = ?", inv.WorkspaceID, userID).Count(&n).Error; err != nil {
		return inv, err
	}
	if n > 0 {
		return inv, Errorf(EConflict, "you are already a member of this workspace")
	}
	return inv, tx.Create(&Membership{WorkspaceID: inv.WorkspaceID, UserID: userID, Role: inv.Role, CreatedAt: time.Now().UTC()}).Error
}

// ConfirmSignup opens a link that answered an invite with an address that
// has no account: it makes the account, its address confirmed, with the
// name and password typed now (not when the invite was answered: whoever
// answered may not be whoever receives the mail), and adds it to the
// invite's workspace, in one transaction. Given an audit, its entry of
// the account joining is written in the same transaction (joinedBy).
func (db *DB) ConfirmSignup(ctx context.Context, token, name, password string, audit ...Audit[Invite]) (User, Invite, error) {
	var u User
	var inv Invite
	// The password is hashed before the transaction (see NewUser.hash); a
	// password too weak to keep is refused inside it by normalize, after the
	// link's own checks, as before.
	pre := NewUser{Password: password}
	if CheckPasswordStrength(password) == nil {
		if err := pre.hashFirst(); err != nil {
			return u, inv, err
		}
	}
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := time.Now().UTC()
		ec, err := useConfirmation(tx, token, now)
		if err != nil {
			return err
		}
		if ec.InviteID == nil || ec.UserID != nil {
			return errConfirmUnusable
		}
		n := NewUser{Email: ec.Email, Name: name, Password: password, hash: pre.hash}
		if err := n.normalize(); err != nil {
			return err
		}
		if u, err = createUserTx(tx, n); err != nil {
			if ErrorCode(err) == EConflict {
				return Errorf(EConflict, "%s has an account here already: sign in with it and open this link again", ec.Email)
			}
			return err
		}
		if err := tx.Model(&u).Update("email_confirmed_at", now).Error; err != nil {
			return err
		}
		if inv, err = joinByConfirmation(tx, *ec.InviteID, u.ID); err != nil {
			return err
		}
		if err := recordAudits(tx, joinedBy(audit, u, inv), inv); err != nil {
			return err
		}
		return auditAccountTx(tx, u.ID, AuditEvent{ActorUserID: &u.ID, Actor: u.Name + " <" + u.Email + ">", Action: AuditEmailConfirmed,
			Target: u.Email, Detail: "by a mailed link, answering an invite", CreatedAt: now})
	})
	return u, inv, err
}

// ConfirmAddress opens a confirmation link for the signed-in account
// userID, which must have the address it was mailed to: the address is
// marked confirmed and, when the link answered an invite, the account
// joins its workspace, in one transaction. inv is nil when it joined none.
// Given an audit, its entry of the account joining, if it joined, is
// written in the same transaction (joinedBy).
func (db *DB) ConfirmAddress(ctx context.Context, token string, userID int64, audit ...Audit[Invite]) (User, *Invite, error) {
	var u User
	var joined *Invite
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := time.Now().UTC()
		ec, err := useConfirmation(tx, token, now)
		if err != nil {
			return err
		}
		if err := tx.First(&u, userID).Error; err != nil {
			return notFound(err, "user", userID)
		}
		if u.Email != ec.Email || (ec.UserID != nil && *ec.UserID != u.ID) {
			return Errorf(EUnauthorized, "this link was mailed to %s, and you are signed in as %s: sign out and sign in as %s to use it", ec.Email, u.Email, ec.Email)
		}
		if err := tx.Model(&u).Update("email_confirmed_at", now).Error; err != nil {
			return err
		}
		detail := "by a mailed link"
		if ec.InviteID != nil {
			inv, err := joinByConfirmation(tx, *ec.InviteID, u.ID)
			if err != nil {
				return err
			}
			joined = &inv
			detail += ", answering an invite"
			if err := recordAudits(tx, joinedBy(audit, u, inv), inv); err != nil {
				return err
			}
		}
		return auditAccountTx(tx, u.ID, AuditEvent{ActorUserID: &u.ID, Actor: u.Name + " <" + u.Email + ">", Action: AuditEmailConfirmed,
			Target: u.Email, Detail: detail, CreatedAt: now})
	})
	return u, joined, err
}
