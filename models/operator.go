package models

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm"
)

// The operator's account tasks (`batcheval admin list-users, reset-link,
// release-address`): they act on the whole server, not on one workspace,
// for whoever has shell access to it. A web role for them can call the
// same functions.

// OperatorActor is who the audit log says acted for the operator's
// commands.
const OperatorActor = "batcheval admin (command line)"

// Audit actions of the operator's commands.
const (
	// AuditAddressReleased: the operator renamed an account to a
	// placeholder address so that the address can be registered again.
	AuditAddressReleased = "address-released"
	// AuditEmailConfirmed: a link mailed to the account's address was
	// opened (confirm.go).
	AuditEmailConfirmed = "email-confirmed"
)

// AccountSummary is one account as the operator lists it.
type AccountSummary struct {
	User       User
	Workspaces []WorkspaceRole
}

// ListAccounts lists every account of the server by address, with the
// workspaces each belongs to (in the order they joined). Two queries,
// whatever the number of accounts.
func (db *DB) ListAccounts(ctx context.Context) ([]AccountSummary, error) {
	var us []User
	if err := db.Reader(ctx).Order("email, id").Find(&us).Error; err != nil {
		return nil, fmt.Errorf("list the accounts: %w", err)
	}
	var rows []struct {
		Workspace
		UserID int64
		Role   Role
	}
	err := db.Reader(ctx).Table("workspaces").Select("workspaces.*, memberships.user_id, memberships.role").
		Joins("JOIN memberships ON memberships.workspace_id = workspaces.id").Order("memberships.id").Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list the accounts' workspaces: %w", err)
	}
	byUser := make(map[int64][]WorkspaceRole, len(us))
	for _, r := range rows {
		byUser[r.UserID] = append(byUser[r.UserID], WorkspaceRole{Workspace: r.Workspace, Role: r.Role})
	}
	out := make([]AccountSummary, len(us))
	for i, u := range us {
		out[i] = AccountSummary{User: u, Workspaces: byUser[u.ID]}
	}
	return out, nil
}

// normalizeEmail is an address as accounts store it.
func normalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// findAccountByEmail finds the account of an address in tx, with an error
// that names the address when there is none.
func findAccountByEmail(tx *gorm.DB, email string) (User, error) {
	var u User
	err := tx.Where("email = ?", normalizeEmail(email)).First(&u).Error
	return u, notFoundText(err, fmt.Sprintf("no account has the address %q: `batcheval admin list-users` lists them", normalizeEmail(email)))
}

// OperatorPasswordReset issues a reset link for the account of an address,
// whatever workspaces it belongs to (none included): the operator may
// reset any account. The reset is audited in each of its workspaces.
// queue, if given, queues the link's mail in the same transaction.
func (db *DB) OperatorPasswordReset(ctx context.Context, email string, ttl time.Duration, queue ...QueueLinkMail) (User, string, error) {
	token, hash, err := NewLinkToken()
	if err != nil {
		return User{}, "", err
	}
	var u User
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if u, err = findAccountByEmail(tx, email); err != nil {
			return err
		}
		now := time.Now().UTC()
		pr := PasswordReset{UserID: u.ID, TokenHash: hash, CreatedAt: now, ExpiresAt: now.Add(ttl), ByOperator: true}
		if err := tx.Create(&pr).Error; err != nil {
			return fmt.Errorf("store the reset link: %w", err)
		}
		if err := queueIn(ctx, tx, pr.ID, queue); err != nil {
			return err
		}
		detail := "by the operator, valid " + ttl.String()
		if len(queue) > 0 && queue[0] != nil {
			detail += ", mailed to the address"
		}
		return auditAccountTx(tx, u.ID, AuditEvent{Actor: OperatorActor, Action: AuditResetIssued, Target: u.Email, Detail: detail})
	})
	return u, token, err
}

// auditAccountTx writes ev into every workspace of the account, in tx, or,
// for an account in no workspace, into the accounts' audit log
// (AccountAuditEvent).
func auditAccountTx(tx *gorm.DB, userID int64, ev AuditEvent) error {
	var wsIDs []int64
	if err := tx.Model(&Membership{}).Where("user_id = ?", userID).Order("id").Pluck("workspace_id", &wsIDs).Error; err != nil {
		return fmt.Errorf("find the workspaces of user %d: %w", userID, err)
	}
	if len(wsIDs) == 0 {
		// An account in no workspace has no workspace audit log: the
		// operator's reset of it, and its own confirmation or reset, go
		// to the accounts' log (account_audit_events).
		e := AccountAuditEvent{UserID: &userID, Actor: clip(ev.Actor, 300), Action: ev.Action, Target: clip(ev.Target, 300),
			Detail: clip(ev.Detail, 1000), CreatedAt: ev.CreatedAt}
		if e.CreatedAt.IsZero() {
			e.CreatedAt = time.Now().UTC()
		}
		if err := tx.Create(&e).Error; err != nil {
			return auditFailed(e.Action, err)
		}
		return nil
	}
	for _, id := range wsIDs {
		e := ev
		e.WorkspaceID = id
		if err := auditTx(tx, e); err != nil {
			return err
		}
	}
	return nil
}

// AccountAuditEvent is an entry of the accounts' audit log: what was done
// to an account that belonged to no workspace at the time (an operator's
// reset link, a confirmation, a self-service reset, a change of its own
// display name), which no workspace's audit log could hold. UserID is nil once the account is gone.
type AccountAuditEvent struct {
	ID        int64
	UserID    *int64
	Actor     string
	Action    string
	Target    string
	Detail    string
	CreatedAt time.Time
}

// AccountAuditLog is the accounts' audit log of user userID, oldest first.
func (db *DB) AccountAuditLog(ctx context.Context, userID int64) ([]AccountAuditEvent, error) {
	var out []AccountAuditEvent
	if err := db.Gorm.WithContext(ctx).Where("user_id = ?", userID).Order("id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("read the accounts' audit log: %w", err)
	}
	return out, nil
}

// AccountEventsFilter selects entries of the accounts' audit log
// (ListAccountEvents).
type AccountEventsFilter struct {
	// Email, when set, keeps the entries of the account with this address
	// now, or that named it as their target when written (an account
	// since released or deleted); case does not matter.
	Email string
	// Since, when set, keeps the entries written at or after it.
	Since time.Time
	// Limit is how many entries at most, the newest; it must be positive.
	Limit int
}

// AccountEventRow is an entry of the accounts' audit log with the address
// its account has now ("" when the account is gone).
type AccountEventRow struct {
	AccountAuditEvent
	Email string
}

// ListAccountEvents reads the accounts' audit log, newest first.
func (db *DB) ListAccountEvents(ctx context.Context, f AccountEventsFilter) ([]AccountEventRow, error) {
	if f.Limit <= 0 {
		return nil, &Error{Code: EInvalid, Message: "the number of entries to list must be positive"}
	}
	q := db.Reader(ctx).Table("account_audit_events AS e").
		Select("e.id, e.user_id, e.actor, e.action, e.target, e.detail, e.created_at, COALESCE(u.email, '') AS email").
		Joins("LEFT JOIN users AS u ON u.id = e.user_id")
	if email := strings.ToLower(strings.TrimSpace(f.Email)); email != "" {
		q = q.Where("LOWER(u.email) = ? OR LOWER(e.target) = ?", email, email)
	}
	if !f.Since.IsZero() {
		q = q.Where("e.created_at >= ?", f.Since.UTC())
	}
	var out []AccountEventRow
	if err := q.Order("e.created_at DESC, e.id DESC").Limit(f.Limit).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("read the accounts' audit log: %w", err)
	}
	return out, nil
}

// auditTx writes ev into its workspace's audit log, in tx.
func auditTx(tx *gorm.DB, e AuditEvent) error {
	e.ID = 0
	e.Actor, e.Target, e.Detail, e.Address = clip(e.Actor, 300), clip(e.Target, 300), clip(e.Detail, 1000), clip(e.Address, 100)
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now().UTC()
	}
	if err := tx.Create(&e).Error; err != nil {
		return auditFailed(e.Action, err)
	}
	return nil
}

// ReleasedAddress is what ReleaseAddress did.
type ReleasedAddress struct {
	UserID   int64
	Name     string
	Email    string // the address released
	NewEmail string // the placeholder the account now has
	Tokens   int64  // API tokens revoked
	// Shares is how many share links the account made that still opened
	// their report and were revoked.
	Shares int64
	// Workspaces are those the account was taken out of, in the order it
	// joined them.
	Workspaces []string
	// TransferredTo is the account that became owner of the workspaces
	// in Transferred, those the released account was the only owner of.
	TransferredTo string
	Transferred   []string
}

// releasedPassword is the password hash of a released account: it is no
// PHC string, so no password matches it (CheckPassword).
const releasedPassword = "!released"

// ReleasedDomain is the domain of the placeholder addresses that released
// accounts get. .invalid is reserved (RFC 2606): it can never be a real
// address, nor be registered through an invite by someone who receives
// mail there.
const ReleasedDomain = "released.invalid"

// ErrSoleOwner is the cause of the refusal of a release that would leave
// a workspace without an owner; its message names the workspaces and
// says what to do.
var ErrSoleOwner = errors.New("the account is the only owner of a workspace")

// ReleaseAddress frees an address that an account holds without the right
// to (someone registered another person's address): the account is
// renamed to a placeholder address (released-ID-RANDOM@released.invalid),
// its address marked unconfirmed and its password made unusable, every
// session signed out, every API token revoked, the share links it made
// that still open revoked, its open reset and confirmation links ended,
// and it is taken out of every workspace (its ratings and runs stay, as
// those of any former member). A workspace it is the only owner of would
// be left without one: the release is refused (EConflict, ErrSoleOwner,
// naming them) unless transferTo names the account that becomes their
// owner (made a member if it is none). All in one transaction, audited in
// each of its workspaces with the reason.
func (db *DB) ReleaseAddress(ctx context.Context, email, reason, transferTo string) (ReleasedAddress, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return ReleasedAddress{}, err
	}
	var out ReleasedAddress
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, err := findAccountByEmail(tx, email)
		if err != nil {
			return err
		}
		if strings.HasSuffix(u.Email, "@"+ReleasedDomain) {
			return Errorf(EConflict, "%s is already a placeholder address of a released account: nothing to release", u.Email)
		}
		now := time.Now().UTC()
		out = ReleasedAddress{UserID: u.ID, Name: u.Name, Email: u.Email,
			NewEmail: fmt.Sprintf("released-%d-%s@%s", u.ID, hex.EncodeToString(b[:]), ReleasedDomain)}
		// The workspaces it alone owns, their owners held (lockOwners) in
		// workspace order until the end of the transaction.
		var owned []Membership
		if err := tx.Where("user_id = ? AND role = ?", u.ID, RoleOwner).Order("workspace_id").Find(&owned).Error; err != nil {
			return fmt.Errorf("find the workspaces %s owns: %w", u.Email, err)
		}
		var alone []Workspace
		for _, m := range owned {
			n, err := lockOwners(tx, db.Dialect, m.WorkspaceID)
			if err != nil {
				return err
			}
			if n <= 1 {
				var ws Workspace
				if err := tx.First(&ws, m.WorkspaceID).Error; err != nil {
					return notFound(err, "workspace", m.WorkspaceID)
				}
				alone = append(alone, ws)
			}
		}
		var heir User
		if t := strings.TrimSpace(transferTo); t != "" {
			if heir, err = findAccountByEmail(tx, t); err != nil {
				return Errorf(ENotFound, "--transfer-to: %s", ErrorMessage(err))
			}
			switch {
			case heir.ID == u.ID:
				return Errorf(EInvalid, "--transfer-to names the account being released: name another account to own its workspaces")
			case strings.HasSuffix(heir.Email, "@"+ReleasedDomain):
				return Errorf(EInvalid, "--transfer-to %s is a released account: name an account someone signs in with", heir.Email)
			}
		}
		if len(alone) > 0 && heir.ID == 0 {
			names := make([]string, len(alone))
			for i, ws := range alone {
				names[i] = strconv.Quote(ws.Name)
			}
			return &Error{Code: EConflict, Err: ErrSoleOwner, Message: fmt.Sprintf(
				"%s is the only owner of %s, which would be left without one: run the command again with --transfer-to EMAIL (an account that becomes the owner; `batcheval admin list-users` lists them), or have an owner there made first",
				u.Email, strings.Join(names, ", "))}
		}
		res := tx.Model(&User{}).Where("id = ? AND email = ?", u.ID, u.Email).Updates(map[string]any{
			"email": out.NewEmail, "email_confirmed_at": nil, "password_hash": releasedPassword,
			"session_epoch": gorm.Expr("session_epoch + 1"), "updated_at": now,
		})
		if res.Error != nil {
			return fmt.Errorf("rename the account of %s: %w", u.Email, res.Error)
		}
		if res.RowsAffected != 1 {
			return Errorf(EConflict, "the account of %s changed meanwhile: run the command again", u.Email)
		}
		tokens := tx.Model(&APIToken{}).Where("user_id = ? AND revoked_at IS NULL", u.ID).Update("revoked_at", now)
		if tokens.Error != nil {
			return fmt.Errorf("revoke the API tokens of %s: %w", u.Email, tokens.Error)
		}
		out.Tokens = tokens.RowsAffected
		shares := tx.Model(&ShareLink{}).Where("created_by = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)", u.ID, now).
			Update("revoked_at", now)
		if shares.Error != nil {
			return fmt.Errorf("revoke the share links of %s: %w", u.Email, shares.Error)
		}
		out.Shares = shares.RowsAffected
		if err := endResetLinks(tx, u.ID, now); err != nil {
			return err
		}
		if err := tx.Model(&EmailConfirmation{}).Where("(user_id = ? OR email = ?) AND used_at IS NULL", u.ID, u.Email).
			Update("used_at", now).Error; err != nil {
			return fmt.Errorf("end the confirmation links of %s: %w", u.Email, err)
		}
		// The new owner first, audited where it became owner.
		if heir.ID != 0 && len(alone) > 0 {
			out.TransferredTo = heir.Email
			for _, ws := range alone {
				if err := makeOwnerTx(tx, ws.ID, heir.ID, now); err != nil {
					return err
				}
				out.Transferred = append(out.Transferred, ws.Name)
				if err := auditTx(tx, AuditEvent{WorkspaceID: ws.ID, Actor: OperatorActor, Action: AuditMemberRole, Target: heir.Email,
					Detail: fmt.Sprintf("made owner in place of %s, whose address was released", u.Email), CreatedAt: now}); err != nil {
					return err
				}
			}
		}
		wss, err := userWorkspaceNames(tx, u.ID)
		if err != nil {
			return err
		}
		out.Workspaces = wss
		detail := fmt.Sprintf("account %d (%s) renamed to %s, signed out, taken out of the workspace, %d API %s and %d share %s revoked", u.ID, u.Name, out.NewEmail,
			out.Tokens, plural(out.Tokens, "token", "tokens"), out.Shares, plural(out.Shares, "link", "links"))
		if r := strings.TrimSpace(reason); r != "" {
			detail += "; reason: " + r
		}
		// Audited in each workspace while still a member, then taken out.
		if err := auditAccountTx(tx, u.ID, AuditEvent{Actor: OperatorActor, Action: AuditAddressReleased, Target: u.Email, Detail: detail, CreatedAt: now}); err != nil {
			return err
		}
		// Each membership's end is recorded, as a removal by the operator.
		var ended []int64
		if err := tx.Model(&Membership{}).Where("user_id = ?", u.ID).Order("workspace_id").Pluck("workspace_id", &ended).Error; err != nil {
			return fmt.Errorf("find the workspaces of %s: %w", u.Email, err)
		}
		for _, wsID := range ended {
			if err := recordRemoval(tx, wsID, u.ID, nil, OperatorActor, RemovalReleased, now); err != nil {
				return err
			}
		}
		if err := tx.Where("user_id = ?", u.ID).Delete(&Membership{}).Error; err != nil {
			return fmt.Errorf("take %s out of its workspaces: %w", u.Email, err)
		}
		return nil
	})
	return out, err
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// makeOwnerTx makes the user an owner of the workspace in tx: a member's
// role is raised, anyone else joins as owner.
func makeOwnerTx(tx *gorm.DB, wsID, userID int64, now time.Time) error {
	res := tx.Model(&Membership{}).Where("workspace_id = ? AND user_id = ?", wsID, userID).Update("role", RoleOwner)
	if res.Error != nil {
		return fmt.Errorf("make user %d owner of workspace %d: %w", userID, wsID, res.Error)
	}
	if res.RowsAffected > 0 {
		return nil
	}
	if err := tx.Create(&Membership{WorkspaceID: wsID, UserID: userID, Role: RoleOwner, CreatedAt: now}).Error; err != nil {
		return fmt.Errorf("make user %d owner of workspace %d: %w", userID, wsID, err)
	}
	return nil
}

// userWorkspaceNames names the workspaces of an account, in the order it
// joined them.
func userWorkspaceNames(tx *gorm.DB, userID int64) ([]string, error) {
	var names []string
	err := tx.Table("workspaces").Joins("JOIN memberships ON memberships.workspace_id = workspaces.id").
		Where("memberships.user_id = ?", userID).Order("memberships.id").Pluck("workspaces.name", &names).Error
	if err != nil {
		return nil, fmt.Errorf("find the workspaces of user %d: %w", userID, err)
	}
	return names, nil
}
