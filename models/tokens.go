package models

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"
)

// APIToken is a personal access token: it lets one person call the JSON
// API in one workspace, with the role that person has there at the time
// of each request. Only a SHA-256 of the token is stored.
type APIToken struct {
	ID          int64
	WorkspaceID int64
	UserID      int64
	Name        string
	// Prefix is the token's first characters, shown in lists so people can
	// tell their tokens apart (too short to help a guess).
	Prefix     string
	TokenHash  string `json:"-"`
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
	// ExpiresAt is when the token stops working; nil never expires (the
	// choice for automation, and every token made before expiries existed).
	ExpiresAt *time.Time
	// Scope is what the token may do: TokenScopeFull (its person's role)
	// or TokenScopeRead (reads only, whatever the role).
	Scope string
}

// The scopes of an API token.
const (
	// TokenScopeFull: everything the token's person's role in its
	// workspace allows at the time of each call (every token made before
	// scopes existed).
	TokenScopeFull = "full"
	// TokenScopeRead: reads only, whatever the role: no launch, no change,
	// no rename of its person.
	TokenScopeRead = "read"
)

// ReadOnly reports whether the token only reads.
func (t *APIToken) ReadOnly() bool { return t.Scope == TokenScopeRead }

// Expired reports whether the token had expired at t.
func (t *APIToken) Expired(at time.Time) bool {
	return t.ExpiresAt != nil && !at.Before(*t.ExpiresAt)
}

// TokenPrefix starts every personal access token, so a leaked one is easy
// to recognise (secret scanners, logs).
const TokenPrefix = "bev_"

// tokenPrefixShown is how many characters of a token its list entry shows:
// the fixed "bev_" and four random ones (24 bits: identifies, never helps).
const tokenPrefixShown = len(TokenPrefix) + 4

// maxTokenName bounds a token's name: a label, not a document.
const maxTokenName = 100

// lastUsedResolution: the last-used time is written at most once a minute
// per token, so a script polling a run does not write on every request.
const lastUsedResolution = time.Minute

// CreateAPIToken makes a token that never expires for a member of a
// workspace and returns it with the token itself, which exists nowhere
// else afterwards.
func (db *DB) CreateAPIToken(ctx context.Context, wsID, userID int64, name string) (APIToken, string, error) {
	return db.CreateExpiringAPIToken(ctx, wsID, userID, name, 0)
}

// CreateExpiringAPIToken makes a token that works for ttl from now (0:
// until revoked) and returns it with the token itself.
func (db *DB) CreateExpiringAPIToken(ctx context.Context, wsID, userID int64, name string, ttl time.Duration) (APIToken, string, error) {
	return db.CreateScopedAPIToken(ctx, wsID, userID, name, ttl, TokenScopeFull)
}

// CreateScopedAPIToken makes a token of scope (TokenScopeFull or
// TokenScopeRead; "" is full) that works for ttl from now (0: until
// revoked) and returns it with the token itself. Given an audit
// (described with the token made), its entry is written in the same
// transaction.
func (db *DB) CreateScopedAPIToken(ctx context.Context, wsID, userID int64, name string, ttl time.Duration, scope string, audit ...Audit[APIToken]) (APIToken, string, error) {
	switch scope {
	case "":
		scope = TokenScopeFull
	case TokenScopeFull, TokenScopeRead:
	default:
		return APIToken{}, "", Errorf(EInvalid, "the token's access %q is not one of %q (what your role allows) and %q (reads only)", scope, TokenScopeFull, TokenScopeRead)
	}
	if ttl < 0 {
		return APIToken{}, "", Errorf(EInvalid, "Choose an expiry in the future: the one given has already passed.")
	}
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return APIToken{}, "", Errorf(EInvalid, "give the token a name (what will use it, e.g. \"nightly CI\")")
	case utf8.RuneCountInString(name) > maxTokenName:
		return APIToken{}, "", Errorf(EInvalid, "a token name has at most %d characters", maxTokenName)
	}
	if err := CheckOneLine("token name", name); err != nil {
		return APIToken{}, "", err
	}
	if _, err := db.MemberRole(ctx, wsID, userID); err != nil {
		return APIToken{}, "", err
	}
	// 32 random bytes (256 bits), base64url: far beyond guessing.
	raw, _, err := NewLinkToken()
	if err != nil {
		return APIToken{}, "", err
	}
	token := TokenPrefix + raw
	t := APIToken{WorkspaceID: wsID, UserID: userID, Name: name, Prefix: token[:tokenPrefixShown],
		TokenHash: HashLinkToken(token), CreatedAt: time.Now().UTC(), Scope: scope}
	if ttl > 0 {
		exp := t.CreatedAt.Add(ttl)
		t.ExpiresAt = &exp
	}
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(&t).Error; err != nil {
			return err
		}
		return recordAudits(tx, audit, t)
	})
	if err != nil {
		return APIToken{}, "", err
	}
	return t, token, nil
}

// ListAPITokens lists a person's tokens in a workspace, newest first,
// revoked ones included (they show when they were revoked).
func (db *DB) ListAPITokens(ctx context.Context, wsID, userID int64) ([]APIToken, error) {
	var ts []APIToken
	err := db.Reader(ctx).Where("workspace_id = ? AND user_id = ?", wsID, userID).Order("id DESC").Find(&ts).Error
	return ts, err
}

// ListAPITokensAfter is a page of ListAPITokens, oldest first: at most
// limit of the person's tokens with an id above afterID, read in the
// database (through api_tokens_user), as the API's keyset pages ask.
func (db *DB) ListAPITokensAfter(ctx context.Context, wsID, userID, afterID int64, limit int) ([]APIToken, error) {
	var ts []APIToken
	err := db.Reader(ctx).Where("workspace_id = ? AND user_id = ? AND id > ?", wsID, userID, afterID).Order("id").Limit(limit).Find(&ts).Error
	return ts, err
}

// TokenExpiryWarning is how long before its expiry a token is pointed
// out to its owner: on the home page, and in the tokens list's wording.
const TokenExpiryWarning = 7 * 24 * time.Hour

// ExpiringAPITokens lists a person's tokens in a workspace that still work
// at now and stop working within the warning time, soonest first.
func (db *DB) ExpiringAPITokens(ctx context.Context, wsID, userID int64, now time.Time) ([]APIToken, error) {
	var ts []APIToken
	now = now.UTC()
	err := db.Reader(ctx).Where("workspace_id = ? AND user_id = ? AND revoked_at IS NULL AND expires_at > ? AND expires_at <= ?",
		wsID, userID, now, now.Add(TokenExpiryWarning)).Order("expires_at, id").Find(&ts).Error
	return ts, err
}

// RevokeAPIToken revokes one of a person's tokens in a workspace; a token
// of someone else, or of another workspace, is not found. Given an audit
// (described with the token), its entry is written in the same
// transaction; a token already revoked changes nothing and records
// nothing.
func (db *DB) RevokeAPIToken(ctx context.Context, wsID, userID, id int64, audit ...Audit[APIToken]) (APIToken, error) {
	var t APIToken
	err := db.Reader(ctx).Where("workspace_id = ? AND user_id = ? AND id = ?", wsID, userID, id).First(&t).Error
	if err != nil {
		return t, notFound(err, "token", id)
	}
	if t.RevokedAt != nil {
		return t, nil
	}
	now := time.Now().UTC()
	err = db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Model(&APIToken{}).Where("id = ? AND revoked_at IS NULL", t.ID).Update("revoked_at", now).Error; err != nil {
			return err
		}
		return recordAudits(tx, audit, t)
	})
	if err != nil {
		return t, err
	}
	t.RevokedAt = &now
	return t, nil
}

// errTokenUnusable is the one answer for every token that does not work,
// so a caller learns nothing about which tokens exist.
var errTokenUnusable = Errorf(EUnauthorized, "this access token is not valid: it is unknown, was revoked, or its owner left the workspace; check that the whole token was copied, or make a new one on the API tokens page (/tokens)")

// ExpiredTokenMessage is the answer to a token used after its expiry: the
// caller holds the token, so saying when it stopped tells them nothing
// they could not know, and tells them what to do.
func ExpiredTokenMessage(expiresAt time.Time) string {
	return "this access token expired on " + expiresAt.UTC().Format("2006-01-02") +
		" (UTC): make a new one on the API tokens page (/tokens)"
}

// AuthenticateAPIToken finds the live token, its person and their role in
// the token's workspace now, and notes the time of use. Unknown and revoked
// tokens, and tokens of people no longer in the workspace, are refused with
// EUnauthorized; so is an expired token, with a message saying when it
// expired. Expiry is judged by the server's clock (UTC), as share links'
// is (OpenShareLink).
func (db *DB) AuthenticateAPIToken(ctx context.Context, token string) (APIToken, User, Workspace, Role, error) {
	var (
		t  APIToken
		u  User
		ws Workspace
	)
	if !strings.HasPrefix(token, TokenPrefix) {
		return t, u, ws, "", errTokenUnusable
	}
	err := db.Gorm.WithContext(ctx).Where("token_hash = ? AND revoked_at IS NULL", HashLinkToken(token)).First(&t).Error
	if err != nil {
		if errors.Is(err, gorm.ErrRecordNotFound) {
			err = errTokenUnusable
		}
		return t, u, ws, "", err
	}
	now := time.Now().UTC()
	if t.Expired(now) {
		return t, u, ws, "", Errorf(EUnauthorized, "%s", ExpiredTokenMessage(*t.ExpiresAt))
	}
	role, err := db.MemberRole(ctx, t.WorkspaceID, t.UserID)
	if err != nil {
		if ErrorCode(err) == ENotFound {
			err = errTokenUnusable
		}
		return t, u, ws, "", err
	}
	if u, err = db.FindUser(ctx, t.UserID); err != nil {
		return t, u, ws, "", err
	}
	if err = db.Reader(ctx).First(&ws, t.WorkspaceID).Error; err != nil {
		return t, u, ws, "", notFound(err, "workspace", t.WorkspaceID)
	}
	if t.LastUsedAt == nil || now.Sub(*t.LastUsedAt) >= lastUsedResolution {
		err = db.Gorm.WithContext(ctx).Model(&APIToken{}).Where("id = ?", t.ID).Update("last_used_at", now).Error
		if err != nil {
			return t, u, ws, "", err
		}
		t.LastUsedAt = &now
	}
	return t, u, ws, role, nil
}

// MemberAPIToken is a token listed for a workspace's owner, with whose it is.
type MemberAPIToken struct {
	APIToken
	UserName  string
	UserEmail string
}

// ListWorkspaceAPITokens lists every token of a workspace, newest first,
// with its person, so an owner can revoke a member's token (a lost laptop,
// a script that leaked one).
func (db *DB) ListWorkspaceAPITokens(ctx context.Context, wsID int64) ([]MemberAPIToken, error) {
	var ts []MemberAPIToken
	err := db.Reader(ctx).Table("api_tokens").
		Select("api_tokens.*, users.name AS user_name, users.email AS user_email").
		Joins("JOIN users ON users.id = api_tokens.user_id").
		Where("api_tokens.workspace_id = ?", wsID).Order("api_tokens.id DESC").Scan(&ts).Error
	return ts, err
}

// ListWorkspaceAPITokensAfter is a page of ListWorkspaceAPITokens, oldest
// first: at most limit of the workspace's tokens with an id above afterID,
// read in the database (through api_tokens_workspace), with their people.
func (db *DB) ListWorkspaceAPITokensAfter(ctx context.Context, wsID, afterID int64, limit int) ([]MemberAPIToken, error) {
	var ts []MemberAPIToken
	err := db.Reader(ctx).Table("api_tokens").
		Select("api_tokens.*, users.name AS user_name, users.email AS user_email").
		Joins("JOIN users ON users.id = api_tokens.user_id").
		Where("api_tokens.workspace_id = ? AND api_tokens.id > ?", wsID, afterID).Order("api_tokens.id").Limit(limit).Find(&ts).Error
	return ts, err
}

// RevokeWorkspaceAPIToken revokes any token of a workspace, whoever's it
// is: the owners' power. A token of another workspace is not found. An
// audit is written as RevokeAPIToken writes it.
func (db *DB) RevokeWorkspaceAPIToken(ctx context.Context, wsID, id int64, audit ...Audit[APIToken]) (APIToken, error) {
	var t APIToken
	if err := db.Gorm.WithContext(ctx).Where("workspace_id = ? AND id = ?", wsID, id).First(&t).Error; err != nil {
		return t, notFound(err, "token", id)
	}
	return db.RevokeAPIToken(ctx, wsID, t.UserID, id, audit...)
}
