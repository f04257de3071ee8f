package models_test

import (
	"crypto/sha256"
	"encoding/base64"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestSessionStoreKeepsOnlyHashes: the session store keeps each session
// under the SHA-256 of its cookie, never the cookie, whoever configures
// the session manager; and a session stored before the store hashed (by
// the library's HashTokenInStore, the same form) is still found by its
// cookie, so nobody is signed out. (Before, the store kept whatever token
// it was given: the cookie itself, unless the manager was set to hash.)
func TestSessionStoreKeepsOnlyHashes(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		s := models.SessionStore{DB: db}
		hashOf := func(cookie string) string {
			sum := sha256.Sum256([]byte(cookie))
			return base64.RawURLEncoding.EncodeToString(sum[:])
		}
		const cookie = "a-session-cookie-value-of-43-characters-xyz"
		if err := s.CommitCtx(ctx, cookie, []byte("data"), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		var stored []string
		if err := db.Gorm.WithContext(ctx).Table("sessions").Pluck("token", &stored).Error; err != nil {
			t.Fatal(err)
		}
		if len(stored) != 1 || stored[0] != hashOf(cookie) {
			t.Errorf("stored keys %q, want only the cookie's hash %q", stored, hashOf(cookie))
		}

		// A row as the library wrote it before the store hashed.
		const earlier = "a-cookie-from-before-the-store-hashed-tokens"
		if err := db.Gorm.WithContext(ctx).Exec("INSERT INTO sessions (token, data, expiry) VALUES (?, ?, ?)",
			hashOf(earlier), []byte("earlier"), time.Now().Add(time.Hour).UTC()).Error; err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ cookie, want string }{{cookie, "data"}, {earlier, "earlier"}} {
			b, found, err := s.FindCtx(ctx, tc.cookie)
			if err != nil || !found || string(b) != tc.want {
				t.Errorf("find %q = %q %v %v, want %q", tc.cookie, b, found, err, tc.want)
			}
		}
		if _, found, _ := s.FindCtx(ctx, hashOf(cookie)); found {
			t.Errorf("the stored hash itself opened the session: a copy of the table would sign in")
		}
		if err := s.DeleteCtx(ctx, earlier); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := s.FindCtx(ctx, earlier); found {
			t.Errorf("a deleted session was found")
		}
	})
}

// TestEndedSessionStaysEnded: a request that loaded a session before
// another request ended it, and then saves it (a touch of its last-seen
// time, a flash), must not bring it back (full suite: a burst of wrong
// current passwords ended the session, and a racing request's save made
// it live again). The tombstone outlives the requests that may still hold
// the session, and is cleared with age.
func TestEndedSessionStaysEnded(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		s := models.SessionStore{DB: db}
		live := time.Now().Add(time.Hour)
		if err := s.Commit("tok", []byte("data"), live); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit("tok", []byte("data2"), live); err != nil {
			t.Fatal(err)
		}
		if b, found, _ := s.Find("tok"); !found || string(b) != "data2" {
			t.Fatalf("a saved session reads %q (found %v), want the latest save", b, found)
		}
		if err := s.Delete("tok"); err != nil {
			t.Fatal(err)
		}
		// The racing request saves what it loaded.
		if err := s.Commit("tok", []byte("data2"), live); err != nil {
			t.Fatalf("saving an ended session: %v, want it ignored without an error", err)
		}
		if _, found, _ := s.Find("tok"); found {
			t.Fatal("an ended session came back when a request that held it saved it")
		}
		if err := db.DeleteExpiredSessions(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit("tok", []byte("data3"), live); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := s.Find("tok"); found {
			t.Fatal("an ended session came back after a cleanup right after it ended")
		}
	})
}
