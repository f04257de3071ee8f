package models

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5/pgconn"
	"gorm.io/gorm"
	gosqlite "modernc.org/sqlite"
)

// Role is what a person may do in a workspace.
type Role string

// The roles, weakest first: a viewer reads; a reviewer also rates samples
// (saves, edits and withdraws their own reviews) and nothing else; an
// editor also creates and launches; an owner also manages members, judges
// and keys.
const (
	RoleViewer   Role = "viewer"
	RoleReviewer Role = "reviewer"
	RoleEditor   Role = "editor"
	RoleOwner    Role = "owner"
)

// Roles lists the roles, weakest first.
var Roles = []Role{RoleViewer, RoleReviewer, RoleEditor, RoleOwner}

// Rank orders roles: 0 for an unknown role, then viewer < reviewer <
// editor < owner. A reviewer sits just above a viewer, so every check for
// an editor still refuses one and every check for a viewer admits one:
// only the rating checks ask for a reviewer.
func (r Role) Rank() int {
	switch r {
	case RoleViewer:
		return 1
	case RoleReviewer:
		return 2
	case RoleEditor:
		return 3
	case RoleOwner:
		return 4
	}
	return 0
}

// Allows says in one line what the role lets a person do, as the members
// and invite pages offer it.
func (r Role) Allows() string {
	switch r {
	case RoleViewer:
		return "reads, cannot rate samples"
	case RoleReviewer:
		return "reads and rates samples in the review queue; cannot create, launch, share or delete"
	case RoleEditor:
		return "creates, launches and rates samples"
	case RoleOwner:
		return "also manages members, judges and keys"
	}
	return ""
}

// AtLeast reports whether r grants everything min grants.
func (r Role) AtLeast(min Role) bool { return r.Rank() > 0 && r.Rank() >= min.Rank() }

// ParseRole reads a role name.
func ParseRole(s string) (Role, error) {
	r := Role(strings.ToLower(strings.TrimSpace(s)))
	if r.Rank() == 0 {
		return "", Errorf(EInvalid, "%q is not a role: choose owner, editor, reviewer or viewer", s)
	}
	return r, nil
}

// User is a person who signs in.
type User struct {
	ID           int64
	Email        string
	Name         string
	PasswordHash string `json:"-"`
	// SessionEpoch changes with the password; sessions made before are void.
	SessionEpoch int64
	// EmailConfirmedAt is when a link mailed to Email was opened, showing
	// that the account's owner receives mail there; nil when nobody has
	// (no mail configured, or an account made by setup or the operator).
	// Never written when an account is made (it is confirmed after), so
	// code that makes accounts works on a schema from before it too.
	EmailConfirmedAt *time.Time `gorm:"<-:update"`
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Membership gives a user a role in a workspace.
type Membership struct {
	ID          int64
	WorkspaceID int64
	UserID      int64
	Role        Role
	CreatedAt   time.Time
}

// instanceSetup is the single row that marks the first account made.
type instanceSetup struct {
	ID     int64
	DoneAt time.Time
}

func (instanceSetup) TableName() string { return "instance_setup" }

// NewUser is what it takes to make an account.
type NewUser struct {
	Email, Name, Password string

	// hash is the password's argon2id hash, made by prepare before the
	// transaction that stores the account: hashing takes tens of
	// milliseconds and most of a core, and on SQLite a transaction that
	// has written holds the one write connection, so hashing inside it
	// kept every other write (a run's answers, too) waiting.
	hash string
}

// hashPassword is HashPassword; a test holds it to see what waits on it.
var hashPassword = HashPassword

// prepare normalizes the account and hashes its password, outside any
// transaction.
func (n *NewUser) prepare() error {
	if err := n.normalize(); err != nil {
		return err
	}
	return n.hashFirst()
}

// hashFirst hashes the password (already checked) before a transaction.
func (n *NewUser) hashFirst() error {
	h, err := hashPassword(n.Password)
	n.hash = h
	return err
}

// normalize trims and lower-cases the address and checks every field.
func (n *NewUser) normalize() error {
	n.Email = strings.ToLower(strings.TrimSpace(n.Email))
	n.Name = strings.TrimSpace(n.Name)
	if err := checkNewEmail(n.Email); err != nil {
		return err
	}
	name, err := CheckDisplayName(n.Name)
	if err != nil {
		return err
	}
	n.Name = name
	return CheckPasswordStrength(n.Password)
}

// checkNewEmail refuses an address, already trimmed and lower-cased, that
// a new account cannot have: not one address, one with brackets or
// spaces, or longer than an address can be (254 characters).
func checkNewEmail(email string) error {
	if _, err := mail.ParseAddress(email); err != nil || strings.ContainsAny(email, "<> ") || len(email) > 254 {
		return Errorf(EInvalid, "%q is not an email address", email)
	}
	return nil
}

// Problems checks every field of a new account at once, as normalize
// does one after the other, and gives each refused field's message
// ("email", "name", "password"; nil when all are fine), so a form shows
// them all together beside their fields instead of the first alone.
func (n NewUser) Problems() map[string]string {
	out := map[string]string{}
	if err := checkNewEmail(strings.ToLower(strings.TrimSpace(n.Email))); err != nil {
		out["email"] = ErrorMessage(err)
	}
	if _, err := CheckDisplayName(n.Name); err != nil {
		out["name"] = ErrorMessage(err)
	}
	if err := CheckPasswordStrength(n.Password); err != nil {
		out["password"] = ErrorMessage(err)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// CheckDisplayName trims a person's display name and refuses an empty one,
// one holding a line break or another control character (a tab, an escape:
// the name is shown on one line in headers, member lists and reports, and
// keys their browser ratings), and one longer than MaxNameLength.
func CheckDisplayName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", Errorf(EInvalid, "a name is needed (at most %d characters)", MaxNameLength)
	}
	if err := CheckOneLine("name", name); err != nil {
		return "", err
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return "", Errorf(EInvalid, "the name holds the control character U+%04X, which no one can see or type on purpose: write the name without it", r)
		}
	}
	if err := checkLength("name", name, MaxNameLength); err != nil {
		return "", err
	}
	return name, nil
}

// RenamedUser is what RenameUser did.
type RenamedUser struct {
	User User
	// Old is the name the account had; equal to User.Name when the name
	// given was the same and nothing was written.
	Old string
}

// RenameUser sets the display name of account userID (checked with
// CheckDisplayName) and writes ev (its actor and address; Action, Target
// and Detail are set here) into the audit log of every workspace of the
// account, or the accounts' log for one in no workspace, in one
// transaction. Reports name a person's browser ratings by their display
// name (ReviewRating.AnnotatorName), so every run of each workspace the
// account rated in moves its human ratings version on in the same
// transaction: no server process serves a finished run's report cached
// with the old name (as SetRatingsExcluded does). The same name again
// changes nothing.
func (db *DB) RenameUser(ctx context.Context, userID int64, name string, ev AuditEvent) (RenamedUser, error) {
	name, err := CheckDisplayName(name)
	if err != nil {
		return RenamedUser{}, err
	}
	var out RenamedUser
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var u User
		if err := tx.First(&u, userID).Error; err != nil {
			return notFound(err, "user", userID)
		}
		out = RenamedUser{User: u, Old: u.Name}
		if u.Name == name {
			return nil
		}
		now := time.Now().UTC()
		if err := tx.Model(&User{}).Where("id = ?", userID).Updates(map[string]any{"name": name, "updated_at": now}).Error; err != nil {
			return fmt.Errorf("rename user %d: %w", userID, err)
		}
		out.User.Name, out.User.UpdatedAt = name, now
		rated := tx.Model(&ReviewRating{}).Distinct("workspace_id").Where("user_id = ?", userID)
		if err := tx.Model(&Run{}).Where("workspace_id IN (?)", rated).UpdateColumn("humans_version", gorm.Expr("humans_version + 1")).Error; err != nil {
			return fmt.Errorf("rename user %d: move the human ratings version on: %w", userID, err)
		}
		ev.Action, ev.Target = AuditNameChanged, u.Email
		ev.Detail = fmt.Sprintf("%q → %q", u.Name, name)
		return auditAccountTx(tx, userID, ev)
	})
	return out, err
}

// isUniqueViolation recognises a unique or primary-key conflict from either
// database driver.
func isUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	var se *gosqlite.Error
	if errors.As(err, &se) {
		// SQLITE_CONSTRAINT_UNIQUE and SQLITE_CONSTRAINT_PRIMARYKEY.
		return se.Code() == 2067 || se.Code() == 1555
	}
	return false
}

// HasUsers reports whether any account exists.
func (db *DB) HasUsers(ctx context.Context) (bool, error) {
	var n int64
	err := db.Reader(ctx).Model(&User{}).Count(&n).Error
	return n > 0, err
}

// createUserTx inserts the account inside tx; its password was hashed by
// prepare (or hashFirst) before tx began.
func createUserTx(tx *gorm.DB, n NewUser) (User, error) {
	if n.hash == "" {
		return User{}, errors.New("create user: the password was not hashed before the transaction")
	}
	now := time.Now().UTC()
	u := User{Email: n.Email, Name: n.Name, PasswordHash: n.hash, CreatedAt: now, UpdatedAt: now}
	var exists int64
	if err := tx.Model(&User{}).Where("email = ?", n.Email).Count(&exists).Error; err != nil {
		return u, err
	}
	if exists > 0 {
		return u, Errorf(EConflict, "an account with the address %s already exists", n.Email)
	}
	if err := tx.Create(&u).Error; err != nil {
		if isUniqueViolation(err) {
			return u, Errorf(EConflict, "an account with the address %s already exists", n.Email)
		}
		return u, fmt.Errorf("create user: %w", err)
	}
	return u, nil
}

// CreateFirstOwner makes the first account, owner of the workspace. It is
// refused once any account exists, even when two requests race: the
// instance_setup row can only be written once. Given an audit, its entry
// is written in the same transaction, in workspace wsID, with the new
// owner as its actor.
func (db *DB) CreateFirstOwner(ctx context.Context, wsID int64, n NewUser, audit ...Audit[User]) (User, error) {
	if err := n.prepare(); err != nil {
		return User{}, err
	}
	var u User
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var count int64
		if err := tx.Model(&User{}).Count(&count).Error; err != nil {
			return err
		}
		if count > 0 {
			return errSetupDone
		}
		if err := tx.Create(&instanceSetup{ID: 1, DoneAt: time.Now().UTC()}).Error; err != nil {
			if isUniqueViolation(err) {
				return errSetupDone
			}
			return err
		}
		var err error
		if u, err = createUserTx(tx, n); err != nil {
			return err
		}
		if err := tx.Create(&Membership{WorkspaceID: wsID, UserID: u.ID, Role: RoleOwner, CreatedAt: time.Now().UTC()}).Error; err != nil {
			return err
		}
		for i := range audit {
			audit[i].Event.WorkspaceID, audit[i].Event.ActorUserID, audit[i].Event.Actor = wsID, &u.ID, u.Name+" <"+u.Email+">"
		}
		return recordAudits(tx, audit, u)
	})
	return u, err
}

var errSetupDone = Errorf(EConflict, "setup is already done: an account exists. Sign in, or ask an owner for an invite")

// CreateUser makes an account with a role in the workspace (the admin
// command). The first account made this way also closes the setup page.
func (db *DB) CreateUser(ctx context.Context, wsID int64, role Role, n NewUser) (User, error) {
	if err := n.prepare(); err != nil {
		return User{}, err
	}
	if role.Rank() == 0 {
		return User{}, Errorf(EInvalid, "%q is not a role", role)
	}
	var u User
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var done int64
		if err := tx.Model(&instanceSetup{}).Count(&done).Error; err != nil {
			return err
		}
		if done == 0 {
			if err := tx.Create(&instanceSetup{ID: 1, DoneAt: time.Now().UTC()}).Error; err != nil && !isUniqueViolation(err) {
				return err
			}
		}
		var err error
		if u, err = createUserTx(tx, n); err != nil {
			return err
		}
		return tx.Create(&Membership{WorkspaceID: wsID, UserID: u.ID, Role: role, CreatedAt: time.Now().UTC()}).Error
	})
	return u, err
}

// FindUser finds an account by id.
func (db *DB) FindUser(ctx context.Context, id int64) (User, error) {
	var u User
	err := db.Reader(ctx).First(&u, id).Error
	return u, notFound(err, "user", id)
}

// FindUserByEmail finds an account by address (any case).
func (db *DB) FindUserByEmail(ctx context.Context, email string) (User, error) {
	var u User
	err := db.Reader(ctx).Where("email = ?", strings.ToLower(strings.TrimSpace(email))).First(&u).Error
	return u, notFoundText(err, "no account has that address")
}

// ErrBadCredentials is the one answer to a failed sign-in, whether the
// address is unknown or the password wrong.
var ErrBadCredentials = Errorf(EUnauthorized, "wrong email address or password")

// Authenticate checks an address and password. Unknown addresses take as
// long as wrong passwords.
func (db *DB) Authenticate(ctx context.Context, email, password string) (User, error) {
	if len(password) > MaxPasswordLen {
		return User{}, ErrBadCredentials
	}
	u, err := db.FindUserByEmail(ctx, email)
	if ErrorCode(err) == ENotFound {
		CheckPassword(dummyHash, password)
		return User{}, ErrBadCredentials
	}
	if err != nil {
		return User{}, err
	}
	if !CheckPassword(u.PasswordHash, password) {
		return User{}, ErrBadCredentials
	}
	return u, nil
}

// WorkspaceRole is a workspace seen by one of its members.
type WorkspaceRole struct {
	Workspace Workspace
	Role      Role
}

// ListUserWorkspaces lists the workspaces a user belongs to, in the order
// they joined (the first is where a new session starts).
func (db *DB) ListUserWorkspaces(ctx context.Context, userID int64) ([]WorkspaceRole, error) {
	var rows []struct {
		Workspace
		Role Role
	}
	err := db.Reader(ctx).Table("workspaces").
		Select("workspaces.*, memberships.role").
		Joins("JOIN memberships ON memberships.workspace_id = workspaces.id").
		Where("memberships.user_id = ?", userID).Order("memberships.id").Scan(&rows).Error
	out := make([]WorkspaceRole, len(rows))
	for i, r := range rows {
		out[i] = WorkspaceRole{Workspace: r.Workspace, Role: r.Role}
	}
	return out, err
}

// WorkspaceName is the name of workspace id ("" when there is none).
func (db *DB) WorkspaceName(ctx context.Context, id int64) (string, error) {
	var names []string
	err := db.Reader(ctx).Table("workspaces").Where("id = ?", id).Limit(1).Pluck("name", &names).Error
	if err != nil || len(names) == 0 {
		return "", err
	}
	return names[0], nil
}

// CreateWorkspace makes a workspace with its creator as owner. The
// workspace, its simulated judge and the owner's membership are written
// in one transaction: on an error none of them exists, and the Workspace
// returned is the zero one (not the id of a row rolled back).
//
// Given an audit (described with the workspace made), its entry is
// written in the same transaction, into the new workspace's log.
func (db *DB) CreateWorkspace(ctx context.Context, name string, ownerID int64, audit ...Audit[Workspace]) (Workspace, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Workspace{}, Errorf(EInvalid, "a workspace needs a name (at most %d characters)", MaxNameLength)
	}
	if err := checkName("workspace name", name, MaxNameLength); err != nil {
		return Workspace{}, err
	}
	token, _, err := NewLinkToken()
	if err != nil {
		return Workspace{}, err
	}
	now := time.Now().UTC()
	// The slug only has to be unique; names may repeat.
	ws := Workspace{Slug: "ws-" + strings.ToLower(token[:12]), Name: name, CreatedAt: now}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&ws).Error; err != nil {
			return err
		}
		// The simulated judge is built into every workspace.
		if _, err := ensureSimulatedJudgeTx(tx, ws.ID); err != nil {
			return err
		}
		if err := tx.Create(&Membership{WorkspaceID: ws.ID, UserID: ownerID, Role: RoleOwner, CreatedAt: now}).Error; err != nil {
			return err
		}
		for i := range audit {
			audit[i].Event.WorkspaceID = ws.ID
		}
		return recordAudits(tx, audit, ws)
	})
	if err != nil {
		return Workspace{}, err
	}
	return ws, nil
}

// Member is a user with their role in one workspace.
type Member struct {
	User User
	Role Role
}

// ListMembers lists a workspace's members by name.
func (db *DB) ListMembers(ctx context.Context, wsID int64) ([]Member, error) {
	var rows []struct {
		User
		Role Role
	}
	err := db.Reader(ctx).Table("users").Select("users.*, memberships.role").
		Joins("JOIN memberships ON memberships.user_id = users.id").
		Where("memberships.workspace_id = ?", wsID).Order("users.name, users.id").Scan(&rows).Error
	out := make([]Member, len(rows))
	for i, r := range rows {
		out[i] = Member{User: r.User, Role: r.Role}
	}
	return out, err
}

// MemberRole returns the user's role in the workspace, ENotFound when the
// user is not a member.
func (db *DB) MemberRole(ctx context.Context, wsID, userID int64) (Role, error) {
	var m Membership
	err := db.Reader(ctx).Where("workspace_id = ? AND user_id = ?", wsID, userID).First(&m).Error
	return m.Role, notFound(err, "member", userID)
}

// errLastOwner keeps every workspace manageable.
var errLastOwner = Errorf(EConflict, "a workspace needs at least one owner: make someone else owner first")

// memberChange is what changeMember does to a membership: a new role, or
// removal (optionally revoking the share links the member made).
type memberChange struct {
	role         Role
	remove       bool
	revokeShares bool
}

// changeMember changes or removes a membership after checking that the
// workspace keeps an owner; the check and the change run in one
// transaction that holds the workspace's owner memberships. It returns
// how many share links a removal revoked.
//
// done, called last in the transaction with that count, writes the
// change's audit entry: when it fails, nothing was changed.
func (db *DB) changeMember(ctx context.Context, wsID, userID int64, ch memberChange, done func(tx *gorm.DB, revoked int64) error) (int64, error) {
	var revoked int64
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		owners, err := lockOwners(tx, db.Dialect, wsID)
		if err != nil {
			return err
		}
		var m Membership
		if err := tx.Where("workspace_id = ? AND user_id = ?", wsID, userID).First(&m).Error; err != nil {
			return notFound(err, "member", userID)
		}
		if m.Role == RoleOwner && (ch.remove || ch.role != RoleOwner) && owners <= 1 {
			return errLastOwner
		}
		if !ch.remove {
			if err := tx.Model(&m).Update("role", ch.role).Error; err != nil {
				return err
			}
			return done(tx, 0)
		}
		if err := tx.Delete(&m).Error; err != nil {
			return err
		}
		now := time.Now().UTC()
		// Their tokens of this workspace end with the membership:
		// refused only while they are out, they would work again,
		// with the new role, the day the person is invited back.
		if err := tx.Model(&APIToken{}).Where("workspace_id = ? AND user_id = ? AND revoked_at IS NULL", wsID, userID).
			Update("revoked_at", now).Error; err != nil {
			return err
		}
		if ch.revokeShares {
			res := liveShareLinks(tx.Model(&ShareLink{}), wsID, now).Where("created_by = ?", userID).Update("revoked_at", now)
			if res.Error != nil {
				return res.Error
			}
			revoked = res.RowsAffected
		}
		return done(tx, revoked)
	})
	if err != nil {
		return 0, err
	}
	return revoked, nil
}

// SetMemberRole changes a member's role; the last owner keeps theirs.
// Given an audit, its entry is written in the same transaction.
func (db *DB) SetMemberRole(ctx context.Context, wsID, userID int64, role Role, audit ...Audit[struct{}]) error {
	if role.Rank() == 0 {
		return Errorf(EInvalid, "%q is not a role", role)
	}
	_, err := db.changeMember(ctx, wsID, userID, memberChange{role: role}, func(tx *gorm.DB, _ int64) error {
		return recordAudits(tx, audit, struct{}{})
	})
	return err
}

// RemoveMember takes a user out of a workspace and revokes their API
// tokens there; the last owner stays. With revokeShares, the share links
// they made in the workspace that still open are revoked too (they hold
// those addresses, which open without an account); it returns how many. Given an audit (described with that count),
// its entry is written in the same transaction. The removal is recorded
// (WorkspaceRemoval) in it too, audited or not: by the audit's actor when
// given ("left" when that is the member), else by someone not known.
func (db *DB) RemoveMember(ctx context.Context, wsID, userID int64, revokeShares bool, audit ...Audit[int64]) (int64, error) {
	return db.changeMember(ctx, wsID, userID, memberChange{remove: true, revokeShares: revokeShares}, func(tx *gorm.DB, revoked int64) error {
		var byID *int64
		var by string
		for _, a := range audit {
			if a.Event.WorkspaceID != 0 {
				byID, by = a.Event.ActorUserID, a.Event.Actor
				break
			}
		}
		if err := recordRemoval(tx, wsID, userID, byID, by, RemovalRemoved, time.Now().UTC()); err != nil {
			return err
		}
		return recordAudits(tx, audit, revoked)
	})
}

// lockOwners counts the workspace's owners and, on PostgreSQL, locks their
// memberships until the transaction ends. Without the lock two owners
// demoting or removing each other at the same moment both counted two
// owners and both went ahead, leaving none; with it the second waits, then
// counts again what the first left. SQLite transactions take the write
// lock up front (immediate), so they are serialised already. The order
// by user is the order every caller locks in, so two never deadlock.
func lockOwners(tx *gorm.DB, d Dialect, wsID int64) (int, error) {
	q := "SELECT user_id FROM memberships WHERE workspace_id = ? AND role = ? ORDER BY user_id"
	if d == Postgres {
		q += " FOR UPDATE"
	}
	var ids []int64
	if err := tx.Raw(q, wsID, RoleOwner).Scan(&ids).Error; err != nil {
		return 0, fmt.Errorf("lock the owners of workspace %d: %w", wsID, err)
	}
	return len(ids), nil
}

// ErrWrongCurrentPassword refuses a password change whose current password
// is not the account's.
var ErrWrongCurrentPassword = Errorf(EUnauthorized, "that is not your current password")

// ChangePassword sets a new password for an account that gave its current
// one: it signs out every session of the account (the caller starts a new
// one for the person changing it) and ends its open reset links, in one
// transaction. The new password is written only over the hash that was
// checked, so of two changes at once with the same current password, the
// second is refused. A wrong current password is ErrWrongCurrentPassword;
// a new password too weak, or the same as the current one, is EInvalid.
// Given an audit (described with the account), its entry is written in
// the same transaction into every workspace of the account
// (recordAccountAudits).
func (db *DB) ChangePassword(ctx context.Context, userID int64, current, next string, audit ...Audit[User]) (User, error) {
	u, err := db.FindUser(ctx, userID)
	if err != nil {
		return User{}, err
	}
	if len(current) > MaxPasswordLen || !CheckPassword(u.PasswordHash, current) {
		return User{}, ErrWrongCurrentPassword
	}
	if err := CheckPasswordStrength(next); err != nil {
		return User{}, err
	}
	if next == current {
		return User{}, Errorf(EInvalid, "the new password is the same as your current one: choose another")
	}
	hash, err := HashPassword(next)
	if err != nil {
		return User{}, err
	}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		now := time.Now().UTC()
		res := tx.Model(&User{}).Where("id = ? AND password_hash = ?", userID, u.PasswordHash).Updates(map[string]any{
			"password_hash": hash, "session_epoch": gorm.Expr("session_epoch + 1"), "updated_at": now,
		})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			// Changed (or reset) since it was checked.
			return ErrWrongCurrentPassword
		}
		if err := endResetLinks(tx, userID, now); err != nil {
			return err
		}
		if err := tx.First(&u, userID).Error; err != nil {
			return err
		}
		return recordAccountAudits(tx, userID, audit, u)
	})
	return u, err
}

// EndOtherSessions signs out every session of the account (a new session
// epoch; the caller starts a new session for the person asking). API
// tokens are not sessions and keep working. Given an audit, its entry is
// written in the same transaction as ChangePassword writes it.
func (db *DB) EndOtherSessions(ctx context.Context, userID int64, audit ...Audit[User]) (User, error) {
	var u User
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&User{}).Where("id = ?", userID).Updates(map[string]any{
			"session_epoch": gorm.Expr("session_epoch + 1"), "updated_at": time.Now().UTC(),
		}).Error; err != nil {
			return err
		}
		if err := tx.First(&u, userID).Error; err != nil {
			return notFound(err, "user", userID)
		}
		return recordAccountAudits(tx, userID, audit, u)
	})
	return u, err
}
