package models

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// Invite is a single-use link that adds a person to a workspace with a
// role. Only the hash of its token is stored.
type Invite struct {
	ID          int64
	WorkspaceID int64
	Role        Role
	TokenHash   string `json:"-"`
	CreatedBy   *int64
	CreatedAt   time.Time
	ExpiresAt   time.Time
	UsedAt      *time.Time
	UsedBy      *int64
	// ClaimedBy is the account the invite is kept for: someone answered it,
	// without signing in, with that account's address (AnswerInvite). Only
	// that account may then join with it, once signed in.
	ClaimedBy *int64
	// Email is the address the link was mailed to ("" for a link the
	// owner handed over).
	Email string
	// ClaimedEmail is the address of the ClaimedBy account (filled by
	// ListOpenInvites): the address that was typed to answer the invite.
	ClaimedEmail string `gorm:"-" json:"-"`
	// MailProblem is why the last attempt at mailing the link failed (""
	// when none did, or it was delivered since): Members shows it.
	MailProblem string
	// MailStopped: the owner was shown the link instead; a mail still
	// being retried is not sent (it would end the link handed over).
	MailStopped bool
	// Answers are the addresses the invite was answered with by mail
	// (AnswerInviteByMail) whose confirmation link is still open, newest
	// first, one per address (filled by ListOpenInvites): the invite
	// stays open until one is opened, and Members shows whether each
	// mail was delivered.
	Answers []InviteAnswer `gorm:"-" json:"-"`
	// AnswersLeft is how many more times the invite can be answered by
	// mail (MaxAnswersPerInvite less those made; filled by ListOpenInvites).
	AnswersLeft int `gorm:"-" json:"-"`
}

// InviteAnswer is an address an invite was answered with, whose mailed
// confirmation link is still open.
type InviteAnswer struct {
	// ConfirmationID is the confirmation link's row.
	ConfirmationID int64
	// Email is the address typed by whoever answered (untrusted text).
	Email     string
	CreatedAt time.Time
	// MailProblem is why the confirmation mail was not delivered ("":
	// delivered, or not tried yet).
	MailProblem string
}

// PasswordReset is a single-use link, issued by an owner, that sets a new
// password for one account.
type PasswordReset struct {
	ID        int64
	UserID    int64
	TokenHash string `json:"-"`
	CreatedBy *int64
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
	// ByOperator marks a link issued with `batcheval admin reset-link`:
	// the operator may reset any account, so no issuing owner is checked.
	ByOperator bool
	// BySelf marks a link the account's holder asked for on the sign-in
	// page, mailed to the account's confirmed address.
	BySelf bool
	// MailProblem is why the last attempt at mailing the link failed
	// ("": delivered, not mailed, or no attempt failed yet).
	MailProblem string
}

// Link lifetimes: an invite waits a week for someone back from holiday; a
// password reset is handed over at once, so a day is plenty.
const (
	InviteTTL = 7 * 24 * time.Hour
	ResetTTL  = 24 * time.Hour
)

// InvitesPerHour is how many invite links one workspace may make in an
// hour (InviteWindow). Each invite can be answered once, and how an answer
// ends (a new member, or the invite kept for an account) tells its maker
// whether the address typed had an account: without a bound, an owner
// could make links and answer them with address after address to learn
// which have accounts here. A team joining at once fits in the bound; a
// larger one waits for the hour to pass.
const InvitesPerHour = 30

// InviteWindow is the time over which InvitesPerHour is counted.
const InviteWindow = time.Hour

// InviteLimitError refuses an invite over InvitesPerHour; RetryAt is when
// the workspace (or, with Account, the account that asked) may make the
// next one.
type InviteLimitError struct {
	RetryAt time.Time
	// Account: the account asking made InvitesPerHour invites in the last
	// hour across all its workspaces. Anyone signed in can make workspaces
	// at will, so a bound per workspace alone bounded nothing: each new
	// workspace brought 30 more links (30 more addresses to test, or, with
	// mail, 30 more invite mails to any address, with a workspace name of
	// the sender's choosing).
	Account bool
}

func (e *InviteLimitError) Error() string {
	wait := time.Until(e.RetryAt)
	minutes := int((wait + time.Minute - 1) / time.Minute)
	if minutes < 1 {
		minutes = 1
	}
	unit := "minutes"
	if minutes == 1 {
		unit = "minute"
	}
	who := "This workspace"
	if e.Account {
		who = "You"
	}
	where := ", the most it may"
	if e.Account {
		where = " across your workspaces, the most one account may"
	}
	return fmt.Sprintf("%s made %d invite links in the last hour%s: no link was made. "+
		"Try again in %d %s (after %s UTC). Revoked invites count too.",
		who, InvitesPerHour, where, minutes, unit, e.RetryAt.UTC().Format("15:04"))
}

// CreateInvite stores an invite and returns it with its token (the only
// time the token exists outside the visitor's browser). A workspace that
// made InvitesPerHour invites in the last InviteWindow (revoked ones
// included: a revoked invite keeps its row), or whose maker by made as many
// across all its workspaces, is refused with an *InviteLimitError. The
// counts and the write happen under the workspace's and the maker's locks,
// so invites asked for at the same moment count each other.
func (db *DB) CreateInvite(ctx context.Context, wsID int64, role Role, by int64, ttl time.Duration) (Invite, string, error) {
	return db.CreateInviteFor(ctx, wsID, role, by, ttl, "", Audit[Invite]{})
}

// CreateInviteFor is CreateInvite for a link mailed to an address (""
// for one handed over), which Members then shows with the invite.
//
// audit's entry (described with the invite made) is written, and queue,
// if given, queues the invite's mail, in the same transaction.
func (db *DB) CreateInviteFor(ctx context.Context, wsID int64, role Role, by int64, ttl time.Duration, email string, audit Audit[Invite], queue ...QueueLinkMail) (Invite, string, error) {
	if email != "" {
		var err error
		if email, err = checkAddress(email); err != nil {
			return Invite{}, "", err
		}
	}
	if role.Rank() == 0 {
		return Invite{}, "", Errorf(EInvalid, "%q is not a role", role)
	}
	token, hash, err := NewLinkToken()
	if err != nil {
		return Invite{}, "", err
	}
	var inv Invite
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := lockWorkspace(tx, db.Dialect, wsID); err != nil {
			return err
		}
		now := time.Now().UTC()
		var made []time.Time
		if err := tx.Model(&Invite{}).Where("workspace_id = ? AND created_at > ?", wsID, now.Add(-InviteWindow)).
			Order("created_at").Pluck("created_at", &made).Error; err != nil {
			return fmt.Errorf("count the invites of workspace %d: %w", wsID, err)
		}
		if len(made) >= InvitesPerHour {
			// Room for one more when all but InvitesPerHour-1 of them
			// have left the window.
			return &InviteLimitError{RetryAt: made[len(made)-InvitesPerHour].Add(InviteWindow)}
		}
		if by != 0 {
			// The same bound for the account, across its workspaces.
			if db.Dialect == Postgres {
				if err := tx.Exec("SELECT id FROM users WHERE id = ? FOR UPDATE", by).Error; err != nil {
					return fmt.Errorf("lock user %d: %w", by, err)
				}
			}
			var byAccount []time.Time
			if err := tx.Model(&Invite{}).Where("created_by = ? AND created_at > ?", by, now.Add(-InviteWindow)).
				Order("created_at").Pluck("created_at", &byAccount).Error; err != nil {
				return fmt.Errorf("count the invites of user %d: %w", by, err)
			}
			if len(byAccount) >= InvitesPerHour {
				return &InviteLimitError{RetryAt: byAccount[len(byAccount)-InvitesPerHour].Add(InviteWindow), Account: true}
			}
		}
		inv = Invite{WorkspaceID: wsID, Role: role, TokenHash: hash, CreatedAt: now, ExpiresAt: now.Add(ttl), Email: email}
		if by != 0 {
			inv.CreatedBy = &by
		}
		if err := tx.Create(&inv).Error; err != nil {
			return err
		}
		if err := queueIn(ctx, tx, inv.ID, queue); err != nil {
			return err
		}
		return recordAudits(tx, []Audit[Invite]{audit}, inv)
	})
	if err != nil {
		return Invite{}, "", err
	}
	return inv, token, nil
}

// inviteMakerOwns is the condition, on a row of invites, that whoever made
// the invite is still an owner of its workspace (or it was made by the
// local user, who has no account). An invite is the right to add a member,
// which only owners have: an owner demoted or removed may no longer add
// anyone, so neither may the invites they made. It is checked when an
// invite is listed, opened and used, so it holds however the maker lost
// the role; should they be made owner again before the invite expires,
// it works again, as one they could make anew.
var inviteMakerOwns = `(invites.created_by IS NULL OR EXISTS (SELECT 1 FROM memberships mk
	WHERE mk.workspace_id = invites.workspace_id AND mk.user_id = invites.created_by AND mk.role = '` + string(RoleOwner) + `'))`

// ListOpenInvites lists a workspace's unused, unexpired invites whose maker
// is still an owner (the others no longer work). An invite answered with
// the address of an existing account (ClaimedBy) is listed with that
// address (ClaimedEmail): it waits for that account to sign in and join,
// and opens for nobody else.
func (db *DB) ListOpenInvites(ctx context.Context, wsID int64) ([]Invite, error) {
	var is []Invite
	err := db.Reader(ctx).Where("workspace_id = ? AND used_at IS NULL AND expires_at > ?", wsID, time.Now().UTC()).
		Where(inviteMakerOwns).Order("id DESC").Find(&is).Error
	if err != nil {
		return nil, err
	}
	if err := withInviteAnswers(db.Reader(ctx), is); err != nil {
		return nil, fmt.Errorf("read the answers to the invites of workspace %d: %w", wsID, err)
	}
	var ids []int64
	for _, inv := range is {
		if inv.ClaimedBy != nil {
			ids = append(ids, *inv.ClaimedBy)
		}
	}
	if len(ids) == 0 {
		return is, nil
	}
	var us []User
	if err := db.Reader(ctx).Where("id IN ?", ids).Find(&us).Error; err != nil {
		return nil, fmt.Errorf("read who answered the invites of workspace %d: %w", wsID, err)
	}
	emails := make(map[int64]string, len(us))
	for _, u := range us {
		emails[u.ID] = u.Email
	}
	for i, inv := range is {
		if inv.ClaimedBy != nil {
			is[i].ClaimedEmail = emails[*inv.ClaimedBy]
		}
	}
	return is, nil
}

// withInviteAnswers fills each invite's Answers and AnswersLeft: a
// confirmation mail that bounced is otherwise seen by nobody (no account
// exists yet to show it to), and the owner who made the invite waits for
// someone who never got the link.
// q reads (a transaction's, or the reader's).
func withInviteAnswers(q *gorm.DB, is []Invite) error {
	if len(is) == 0 {
		return nil
	}
	ids := make([]int64, len(is))
	for i, inv := range is {
		ids[i] = inv.ID
	}
	var ecs []EmailConfirmation
	if err := q.Where("invite_id IN ?", ids).Order("id DESC").Find(&ecs).Error; err != nil {
		return err
	}
	now := time.Now().UTC()
	made := map[int64]int{}
	seen := map[int64]map[string]bool{}
	answers := map[int64][]InviteAnswer{}
	for _, ec := range ecs {
		id := *ec.InviteID
		made[id]++
		if ec.UsedAt != nil || !ec.ExpiresAt.After(now) || seen[id][ec.Email] {
			continue
		}
		if seen[id] == nil {
			seen[id] = map[string]bool{}
		}
		// Only the newest link per address: an older one's bounce is
		// moot once the same address was mailed again.
		seen[id][ec.Email] = true
		answers[id] = append(answers[id], InviteAnswer{ConfirmationID: ec.ID, Email: ec.Email, CreatedAt: ec.CreatedAt, MailProblem: ec.MailProblem})
	}
	for i, inv := range is {
		is[i].Answers = answers[inv.ID]
		is[i].AnswersLeft = max(MaxAnswersPerInvite-made[inv.ID], 0)
	}
	return nil
}

// CountOpenInvitesBy counts the open invites a member made in a workspace
// (those that stop working when they stop being an owner).
func (db *DB) CountOpenInvitesBy(ctx context.Context, wsID, userID int64) (int64, error) {
	var n int64
	err := db.Reader(ctx).Model(&Invite{}).Where("workspace_id = ? AND created_by = ? AND used_at IS NULL AND expires_at > ?",
		wsID, userID, time.Now().UTC()).Count(&n).Error
	return n, err
}

// RevokeInvite ends an open invite of the workspace: it expires now. Its
// row is kept so that it still counts toward InvitesPerHour (deleted, a
// revoked invite would make room for another, and making, answering and
// revoking links would have no bound). Given an audit, its entry is
// written in the same transaction.
func (db *DB) RevokeInvite(ctx context.Context, wsID, id int64, audit ...Audit[struct{}]) error {
	now := time.Now().UTC()
	return db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&Invite{}).Where("workspace_id = ? AND id = ? AND used_at IS NULL AND expires_at > ?", wsID, id, now).
			Update("expires_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return Errorf(ENotFound, "invite %d does not exist, was already used, or has already ended", id)
		}
		return recordAudits(tx, audit, struct{}{})
	})
}

var errLinkUnusable = Errorf(ENotFound, "this link is not valid: it was already used, it expired, or it was revoked. Ask an owner for a new one")

var errInviteMakerNotOwner = Errorf(ENotFound, "this invite no longer works: whoever made it is no longer an owner of the workspace, so their invites ended. Ask an owner for a new one")

// FindOpenInvite finds the invite a token opens, with its workspace, for
// the account userID (0: a visitor not signed in). An invite kept for an
// account (ClaimedBy) opens only for that account; for anyone else it is
// as unusable as a used one, with the same words.
func (db *DB) FindOpenInvite(ctx context.Context, token string, userID int64) (Invite, Workspace, error) {
	var inv Invite
	var ws Workspace
	q := db.Reader(ctx).Where(linkToken(LinkInvite, HashLinkToken(token))).Where("used_at IS NULL AND expires_at > ?", time.Now().UTC()).
		Where("claimed_by IS NULL OR claimed_by = ?", userID)
	if err := q.First(&inv).Error; err != nil {
		return inv, ws, notFoundText(err, errLinkUnusable.Message)
	}
	var n int64
	if err := db.Reader(ctx).Model(&Invite{}).Where("id = ?", inv.ID).Where(inviteMakerOwns).Count(&n).Error; err != nil {
		return inv, ws, err
	}
	if n == 0 {
		return inv, ws, errInviteMakerNotOwner
	}
	err := db.Reader(ctx).First(&ws, inv.WorkspaceID).Error
	return inv, ws, notFound(err, "workspace", inv.WorkspaceID)
}

// InviteAnswerEmail is the address an invite was answered with, read from
// the account it made (UsedBy) or is kept for (ClaimedBy), so that the
// sign-in page the answer leads to can show it; "" when the token opens no
// invite or nobody answered it yet.
func (db *DB) InviteAnswerEmail(ctx context.Context, token string) (string, error) {
	var invs []Invite
	if err := db.Reader(ctx).Where(linkToken(LinkInvite, HashLinkToken(token))).Limit(1).Find(&invs).Error; err != nil || len(invs) == 0 {
		return "", err
	}
	id := invs[0].ClaimedBy
	if invs[0].UsedBy != nil {
		id = invs[0].UsedBy
	}
	if id == nil {
		return "", nil
	}
	var users []User
	if err := db.Reader(ctx).Where("id = ?", *id).Limit(1).Find(&users).Error; err != nil || len(users) == 0 {
		return "", err
	}
	return users[0].Email, nil
}

// FindInviteJoinedBy finds the invite a token opened for userID, who joined
// its workspace with it and is still a member: an account made by
// answering the invite joins at once, and the person then signs in and
// comes back to the link. found is false otherwise.
func (db *DB) FindInviteJoinedBy(ctx context.Context, token string, userID int64) (inv Invite, ws Workspace, found bool, err error) {
	if userID == 0 {
		return inv, ws, false, nil
	}
	var invs []Invite
	err = db.Reader(ctx).Where(linkToken(LinkInvite, HashLinkToken(token))).Where("used_by = ?", userID).
		Where("EXISTS (SELECT 1 FROM memberships m WHERE m.workspace_id = invites.workspace_id AND m.user_id = ?)", userID).
		Limit(1).Find(&invs).Error
	if err != nil || len(invs) == 0 {
		return inv, ws, false, err
	}
	inv = invs[0]
	if err = db.Reader(ctx).First(&ws, inv.WorkspaceID).Error; err != nil {
		return inv, ws, false, notFound(err, "workspace", inv.WorkspaceID)
	}
	return inv, ws, true, nil
}

// consumeInvite marks the invite used, once, while its maker is still an
// owner, by userID (an invite kept for an account only by that account): a
// second use (or a race with one) affects no row and is refused.
func consumeInvite(tx *gorm.DB, token string, userID int64) (Invite, error) {
	return consumeInviteHash(tx, HashLinkToken(token), userID)
}

// consumeInviteHash is consumeInvite for the invite whose token hashes to
// hash.
func consumeInviteHash(tx *gorm.DB, hash string, userID int64) (Invite, error) {
	var inv Invite
	now := time.Now().UTC()
	res := tx.Model(&Invite{}).Where(linkToken(LinkInvite, hash)).Where("used_at IS NULL AND expires_at > ?", now).
		Where("claimed_by IS NULL OR claimed_by = ?", userID).Where(inviteMakerOwns).Updates(map[string]any{"used_at": now, "used_by": userID})
	if res.Error != nil {
		return inv, res.Error
	}
	if res.RowsAffected != 1 {
		return inv, errLinkUnusable
	}
	err := tx.Where(linkToken(LinkInvite, hash)).First(&inv).Error
	return inv, err
}

// AcceptInvite adds an existing account to the invite's workspace. Given
// an audit (described with the invite), its entry is written in the same
// transaction.
func (db *DB) AcceptInvite(ctx context.Context, token string, userID int64, audit ...Audit[Invite]) (Invite, error) {
	var inv Invite
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if inv, err = consumeInvite(tx, token, userID); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&Membership{}).Where("workspace_id = ? AND user_id = ?", inv.WorkspaceID, userID).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return Errorf(EConflict, "you are already a member of this workspace")
		}
		if err := tx.Create(&Membership{WorkspaceID: inv.WorkspaceID, UserID: userID, Role: inv.Role, CreatedAt: time.Now().UTC()}).Error; err != nil {
			return err
		}
		return recordAudits(tx, audit, inv)
	})
	return inv, err
}

// AnswerInvite answers an invite for a visitor who is not signed in and
// typed an address, a name and a password. When the address has no
// account, it makes one and adds it to the invite's workspace, in one
// transaction, and returns it. When the address already has an account,
// nothing about that account changes and nothing is returned: the invite
// is kept for that account (ClaimedBy), which joins by signing in and
// opening the link again. Either way the invite no longer opens for anyone
// else, and the work done (the password hashed, the invite taken) is the
// same, so that the answer cannot tell the holder of a link which
// addresses have accounts. An invite that cannot be used is refused with
// the same error in both cases.
//
// Given an audit, the account made and joined is written to the log in
// the same transaction (joinedBy); an answer for an address with an
// account records nothing.
func (db *DB) AnswerInvite(ctx context.Context, token string, n NewUser, audit ...Audit[Invite]) (made User, inv Invite, err error) {
	if err := n.prepare(); err != nil {
		return User{}, Invite{}, err
	}
	var taken bool
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if made, err = createUserTx(tx, n); err != nil {
			taken = ErrorCode(err) == EConflict
			return err
		}
		if inv, err = consumeInvite(tx, token, made.ID); err != nil {
			return err
		}
		if err := tx.Create(&Membership{WorkspaceID: inv.WorkspaceID, UserID: made.ID, Role: inv.Role, CreatedAt: time.Now().UTC()}).Error; err != nil {
			return err
		}
		return recordAudits(tx, joinedBy(audit, made, inv), inv)
	})
	if !taken {
		return made, inv, err
	}
	// The address has an account (seen in the transaction above, which a
	// unique violation may have ended on PostgreSQL: a new one claims).
	made = User{}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var owner User
		if err := tx.Where("email = ?", n.Email).First(&owner).Error; err != nil {
			return notFoundText(err, errLinkUnusable.Message)
		}
		res := tx.Model(&Invite{}).Where(linkToken(LinkInvite, HashLinkToken(token))).Where("used_at IS NULL AND claimed_by IS NULL AND expires_at > ?", time.Now().UTC()).
			Where(inviteMakerOwns).Update("claimed_by", owner.ID)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errLinkUnusable
		}
		return tx.Where(linkToken(LinkInvite, HashLinkToken(token))).First(&inv).Error
	})
	return made, inv, err
}

// resetBlocker names a workspace of the account that the issuer does not
// own ("" when they own every one), and says whether the account belongs
// to any workspace. A reset is allowed only when the account belongs to
// some workspace and the issuer owns each: otherwise an owner of one
// workspace could take over an account that owns another. It is checked
// when the link is issued and again when it is used, since the account may
// have joined or made a workspace in between (and the issuer may have
// stopped being an owner).
func resetBlocker(q *gorm.DB, issuerID, userID int64) (blocker string, member bool, err error) {
	var rows []struct {
		Name    string
		IsOwner bool
	}
	err = q.Raw(`SELECT w.name AS name, EXISTS (SELECT 1 FROM memberships o
			WHERE o.workspace_id = m.workspace_id AND o.user_id = ? AND o.role = ?) AS is_owner
		FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
		WHERE m.user_id = ? ORDER BY m.id`, issuerID, RoleOwner, userID).Scan(&rows).Error
	if err != nil {
		return "", false, fmt.Errorf("check who may reset user %d: %w", userID, err)
	}
	for _, r := range rows {
		if !r.IsOwner {
			return r.Name, true, nil
		}
	}
	return "", len(rows) > 0, nil
}

// CreatePasswordReset issues a reset link for a member. The issuer must be
// an owner of every workspace the member belongs to (resetBlocker).
//
// queue, if given, queues the link's mail in the same transaction.
func (db *DB) CreatePasswordReset(ctx context.Context, issuerID, userID int64, ttl time.Duration, queue ...QueueLinkMail) (PasswordReset, string, error) {
	return db.IssuePasswordReset(ctx, issuerID, userID, ttl, Audit[PasswordReset]{}, queue...)
}

// IssuePasswordReset is CreatePasswordReset as an owner asks for it: the
// audit's entry (described with the reset made) is written in the same
// transaction as the link and its mail.
func (db *DB) IssuePasswordReset(ctx context.Context, issuerID, userID int64, ttl time.Duration, audit Audit[PasswordReset], queue ...QueueLinkMail) (PasswordReset, string, error) {
	blocker, member, err := resetBlocker(db.Reader(ctx), issuerID, userID)
	if err != nil {
		return PasswordReset{}, "", err
	}
	if !member {
		return PasswordReset{}, "", Errorf(ENotFound, "user %d does not exist", userID)
	}
	if blocker != "" {
		return PasswordReset{}, "", Errorf(EUnauthorized, "this person also belongs to a workspace you do not own (%s): an owner of every workspace they are in must issue the reset", blocker)
	}
	token, hash, err := NewLinkToken()
	if err != nil {
		return PasswordReset{}, "", err
	}
	now := time.Now().UTC()
	pr := PasswordReset{UserID: userID, TokenHash: hash, CreatedBy: &issuerID, CreatedAt: now, ExpiresAt: now.Add(ttl)}
	return pr, token, db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&pr).Error; err != nil {
			return err
		}
		if err := queueIn(ctx, tx, pr.ID, queue); err != nil {
			return err
		}
		return recordAudits(tx, []Audit[PasswordReset]{audit}, pr)
	})
}

// checkResetStillAllowed refuses a reset link whose issuer no longer owns
// every workspace of the account (it joined or made one since, or the
// issuer was demoted or removed).
func checkResetStillAllowed(q *gorm.DB, pr PasswordReset) error {
	if pr.ByOperator || pr.BySelf {
		return nil
	}
	if pr.CreatedBy == nil {
		return errResetIssuerGone
	}
	blocker, member, err := resetBlocker(q, *pr.CreatedBy, pr.UserID)
	if err != nil {
		return err
	}
	if blocker != "" || !member {
		return errResetIssuerGone
	}
	return nil
}

var errResetIssuerGone = Errorf(ENotFound, "this link no longer works: whoever issued it no longer owns every workspace this account belongs to. Ask an owner of each of them for a new one")

// FindOpenPasswordReset finds the reset a token opens, with its account.
func (db *DB) FindOpenPasswordReset(ctx context.Context, token string) (PasswordReset, User, error) {
	var pr PasswordReset
	err := db.Reader(ctx).Where(linkToken(LinkReset, HashLinkToken(token))).Where("used_at IS NULL AND expires_at > ?", time.Now().UTC()).First(&pr).Error
	if err != nil {
		return pr, User{}, notFoundText(err, errLinkUnusable.Message)
	}
	if err := checkResetStillAllowed(db.Reader(ctx), pr); err != nil {
		return pr, User{}, err
	}
	u, err := db.FindUser(ctx, pr.UserID)
	return pr, u, err
}

// ResetPassword uses a reset link once: it sets the new password, signs
// out every existing session of the account and ends its other reset
// links, in one transaction. Given an audit (described with the account),
// its entry is written in the same transaction into every workspace of
// the account (recordAccountAudits).
func (db *DB) ResetPassword(ctx context.Context, token, password string, audit ...Audit[User]) (User, error) {
	if err := CheckPasswordStrength(password); err != nil {
		return User{}, err
	}
	hash, err := HashPassword(password)
	if err != nil {
		return User{}, err
	}
	var u User
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var pr PasswordReset
		if err := tx.Where(linkToken(LinkReset, HashLinkToken(token))).First(&pr).Error; err != nil {
			return notFoundText(err, errLinkUnusable.Message)
		}
		now := time.Now().UTC()
		res := tx.Model(&PasswordReset{}).Where("id = ? AND used_at IS NULL AND expires_at > ?", pr.ID, now).Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return errLinkUnusable
		}
		if err := checkResetStillAllowed(tx, pr); err != nil {
			return err
		}
		if err := tx.Model(&User{}).Where("id = ?", pr.UserID).Updates(map[string]any{
			"password_hash": hash, "session_epoch": gorm.Expr("session_epoch + 1"), "updated_at": now,
		}).Error; err != nil {
			return err
		}
		if err := endResetLinks(tx, pr.UserID, now); err != nil {
			return err
		}
		if err := tx.First(&u, pr.UserID).Error; err != nil {
			return err
		}
		return recordAccountAudits(tx, u.ID, audit, u)
	})
	return u, err
}

// endResetLinks ends every open reset link of the account: once its
// password is set (by one of them, or by the person), another copy of a
// link must not set it again. Ended links count as used.
func endResetLinks(tx *gorm.DB, userID int64, now time.Time) error {
	err := tx.Model(&PasswordReset{}).Where("user_id = ? AND used_at IS NULL", userID).Update("used_at", now).Error
	if err != nil {
		return fmt.Errorf("end the reset links of user %d: %w", userID, err)
	}
	return nil
}
