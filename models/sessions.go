package models

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"time"

	"gorm.io/gorm"
)

// sessionRow is one stored session of the session library. Token is the
// SHA-256 of the session's cookie (sessionKey), never the cookie itself.
type sessionRow struct {
	Token  string `gorm:"primaryKey"`
	Data   []byte
	Expiry time.Time
}

func (sessionRow) TableName() string { return "sessions" }

// SessionStore keeps the session library's sessions in the product's own
// database, on SQLite and PostgreSQL alike. It satisfies the library's
// store interfaces (github.com/alexedwards/scs/v2 Store and CtxStore)
// without this package importing it. (The library's own sqlite3store is
// written for the cgo driver; one GORM-backed store serves both dialects
// with the driver already linked.)
//
// The tokens it is given are the session cookies; it stores and looks
// them up by their hash (sessionKey), as every other token of the product
// is stored, so a copy of the database or a backup holds no live session.
// The session manager must hand it the cookie as is (its own
// HashTokenInStore off): the store hashes, whoever configures the manager.
type SessionStore struct{ DB *DB }

// sessionKey is the stored form of a session token: its SHA-256 in
// unpadded base64url. It is the form the session library's own
// HashTokenInStore wrote, with which every session stored before this
// store hashed was made: those rows stay valid, nobody is signed out, and
// no migration is needed. A fast hash is enough: a token has 256 random
// bits, so there is nothing to brute-force.
func sessionKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// FindCtx returns a live session's data.
func (s SessionStore) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	var row sessionRow
	err := s.DB.Reader(ctx).Where("token = ? AND expiry > ?", sessionKey(token), time.Now().UTC()).First(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return row.Data, true, nil
}

// CommitCtx stores (or replaces) a session, unless the session was ended
// (DeleteCtx): a request that loaded the session before another one ended
// it, and changed it (a touch, a flash), would otherwise bring it back to
// life when it saves. One statement, so a save racing an end cannot slip
// between a check and a write on either database.
func (s SessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	return s.DB.Gorm.WithContext(ctx).Exec(
		`INSERT INTO sessions (token, data, expiry) VALUES (?, ?, ?)
		 ON CONFLICT (token) DO UPDATE SET data = excluded.data, expiry = excluded.expiry
		 WHERE length(sessions.data) > 0`,
		sessionKey(token), b, expiry.UTC()).Error
}

// DeleteCtx ends a session; a missing one is not an error. The row stays
// for a while as a tombstone (no data, expired) so that a request still
// holding the session cannot save it back (CommitCtx);
// DeleteExpiredSessions clears it later.
func (s SessionStore) DeleteCtx(ctx context.Context, token string) error {
	return s.DB.Gorm.WithContext(ctx).Model(&sessionRow{}).Where("token = ?", sessionKey(token)).
		Updates(map[string]any{"data": []byte{}, "expiry": time.Now().UTC()}).Error
}

// Find is FindCtx without a context.
func (s SessionStore) Find(token string) ([]byte, bool, error) {
	return s.FindCtx(context.Background(), token)
}

// Commit is CommitCtx without a context.
func (s SessionStore) Commit(token string, b []byte, expiry time.Time) error {
	return s.CommitCtx(context.Background(), token, b, expiry)
}

// Delete is DeleteCtx without a context.
func (s SessionStore) Delete(token string) error { return s.DeleteCtx(context.Background(), token) }

// DeleteExpiredSessions clears sessions past their expiry (called now and
// then, e.g. at each sign-in, so no sweeper is needed), once they have
// been expired for endedSessionKept: an ended session's tombstone must
// outlive the requests that still held it.
func (db *DB) DeleteExpiredSessions(ctx context.Context) error {
	return db.Gorm.WithContext(ctx).Where("expiry <= ?", time.Now().UTC().Add(-endedSessionKept)).Delete(&sessionRow{}).Error
}

// endedSessionKept is how long an ended session's tombstone is kept: far
// longer than any request that loaded the session before it ended.
const endedSessionKept = 10 * time.Minute

// LoginAttempt is one sign-in try, kept for rate limiting.
type LoginAttempt struct {
	ID        int64
	Email     string
	Address   string
	Succeeded bool
	CreatedAt time.Time
}

// BeginLoginAttempt stores a sign-in try as failed before its password is
// checked, so that tries made at the same moment count each other:
// counted only after the check, a burst of guesses all passed the limit.
// The caller then counts (RecentLoginFailures, which includes this try)
// and marks the try as succeeded or drops it (a refused try).
func (db *DB) BeginLoginAttempt(ctx context.Context, email, address string, now time.Time) (LoginAttempt, error) {
	now = now.UTC()
	db.Gorm.WithContext(ctx).Where("created_at < ?", now.Add(-24*time.Hour)).Delete(&LoginAttempt{})
	a := LoginAttempt{Email: clip(email, 254), Address: clip(address, 100), CreatedAt: now}
	return a, db.Gorm.WithContext(ctx).Create(&a).Error
}

// EndLoginAttempt settles a try begun with BeginLoginAttempt: a sign-in
// that succeeded is kept as such (it no longer counts as a failure); a
// try that was refused before its password was checked (over the limit)
// is dropped, so refusals do not extend the pause.
func (db *DB) EndLoginAttempt(ctx context.Context, id int64, succeeded bool) error {
	q := db.Gorm.WithContext(ctx).Where("id = ?", id)
	if succeeded {
		return q.Model(&LoginAttempt{}).Update("succeeded", true).Error
	}
	return q.Delete(&LoginAttempt{}).Error
}

// RecentLoginFailures counts failed tries since `since` for an address
// typed (account) and for a client address.
func (db *DB) RecentLoginFailures(ctx context.Context, email, address string, since time.Time) (byAccount, byAddress int64, err error) {
	q := func() *gorm.DB {
		return db.Gorm.WithContext(ctx).Model(&LoginAttempt{}).Where("succeeded = ? AND created_at > ?", false, since.UTC())
	}
	if err = q().Where("email = ?", email).Count(&byAccount).Error; err != nil {
		return
	}
	err = q().Where("address = ?", address).Count(&byAddress).Error
	return
}

// LoginPausedUntil is when sign-ins for an address typed (email) and from
// a client address stop being paused: the first moment at which the
// failures since `since` (the window's start) that still count number
// fewer than the limit of each (maxAccount, maxAddress), the next try
// being counted with them. It is the zero time when neither is over its
// limit. window is the window's length.
func (db *DB) LoginPausedUntil(ctx context.Context, email, address string, since time.Time, window time.Duration, maxAccount, maxAddress int) (time.Time, error) {
	var until time.Time
	for _, k := range []struct {
		column, value string
		limit         int
	}{{"email", email, maxAccount}, {"address", address, maxAddress}} {
		var times []time.Time
		err := db.Gorm.WithContext(ctx).Model(&LoginAttempt{}).Where("succeeded = ? AND created_at > ? AND "+k.column+" = ?", false, since.UTC(), k.value).
			Order("created_at").Pluck("created_at", &times).Error
		if err != nil {
			return time.Time{}, err
		}
		if len(times) < k.limit || k.limit <= 0 {
			continue
		}
		// Once this failure leaves the window, limit-1 remain: a try is
		// then let through.
		if t := times[len(times)-k.limit].Add(window); t.After(until) {
			until = t
		}
	}
	return until, nil
}

// CurrentPasswordTry is one try at the current password made to change
// it, kept per session (SessionKey: the SHA-256 of its token) for rate
// limiting: such tries come from a signed-in session, which can be ended,
// so they are not counted against the account as failed sign-ins are.
type CurrentPasswordTry struct {
	ID         int64
	SessionKey string
	CreatedAt  time.Time
}

// BeginCurrentPasswordTry stores a try as wrong before its password is
// checked, so that tries made at the same moment count each other, and
// returns it with the number of the session's tries still stored, itself
// included. Tries older than keep (the longest a session lives) are
// cleared: their session has ended. The caller drops a try whose password
// was right (EndCurrentPasswordTry).
func (db *DB) BeginCurrentPasswordTry(ctx context.Context, sessionKey string, keep time.Duration) (CurrentPasswordTry, int64, error) {
	now := time.Now().UTC()
	g := db.Gorm.WithContext(ctx)
	if err := g.Where("created_at < ?", now.Add(-keep)).Delete(&CurrentPasswordTry{}).Error; err != nil {
		return CurrentPasswordTry{}, 0, err
	}
	t := CurrentPasswordTry{SessionKey: sessionKey, CreatedAt: now}
	if err := g.Create(&t).Error; err != nil {
		return t, 0, err
	}
	var n int64
	err := g.Model(&CurrentPasswordTry{}).Where("session_key = ?", sessionKey).Count(&n).Error
	return t, n, err
}

// EndCurrentPasswordTry drops a try whose password was right: it is no
// wrong try.
func (db *DB) EndCurrentPasswordTry(ctx context.Context, id int64) error {
	return db.Gorm.WithContext(ctx).Where("id = ?", id).Delete(&CurrentPasswordTry{}).Error
}

// ForgetCurrentPasswordTries drops every try of a session (its password
// was changed, or it ended).
func (db *DB) ForgetCurrentPasswordTries(ctx context.Context, sessionKey string) error {
	return db.Gorm.WithContext(ctx).Where("session_key = ?", sessionKey).Delete(&CurrentPasswordTry{}).Error
}
