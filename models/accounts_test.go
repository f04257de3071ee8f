package models_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

func TestPasswordHash(t *testing.T) {
	h, err := models.HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q does not state argon2id and its parameters", h)
	}
	h2, _ := models.HashPassword("correct horse battery")
	if h == h2 {
		t.Errorf("two hashes of one password are equal: no salt")
	}
	for _, tc := range []struct {
		hash, pw string
		want     bool
	}{
		{h, "correct horse battery", true},
		{h, "correct horse batterY", false},
		{h, "", false},
		{"", "correct horse battery", false},
		{"$argon2id$v=19$m=0,t=2,p=1$AAAA$AAAA", "x", false},
		{strings.Replace(h, "argon2id", "argon2i", 1), "correct horse battery", false},
	} {
		if got := models.CheckPassword(tc.hash, tc.pw); got != tc.want {
			t.Errorf("CheckPassword(%.30q, %q) = %v", tc.hash, tc.pw, got)
		}
	}
}

// TestFirstOwnerRace: of several concurrent first setups, exactly one
// makes an account.
func TestFirstOwnerRace(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ws, err := db.EnsureDefaultWorkspace(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = db.CreateFirstOwner(t.Context(), ws.ID, models.NewUser{
					Email: "owner" + string(rune('a'+i)) + "@x.test", Name: "O", Password: "long enough password"})
			}()
		}
		wg.Wait()
		var ok int
		for _, err := range errs {
			if err == nil {
				ok++
			}
		}
		var n int64
		db.Gorm.Model(&models.User{}).Count(&n)
		if ok != 1 || n != 1 {
			t.Errorf("%d setups succeeded, %d accounts exist; want 1 and 1 (errors %v)", ok, n, errs)
		}
	})
}

func TestSessionStore(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		s := models.SessionStore{DB: db}
		if _, found, err := s.Find("nope"); found || err != nil {
			t.Errorf("missing session: found %v, err %v", found, err)
		}
		if err := s.Commit("tok", []byte("one"), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit("tok", []byte("two"), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if b, found, err := s.Find("tok"); !found || err != nil || string(b) != "two" {
			t.Errorf("find = %q %v %v, want the second commit", b, found, err)
		}
		if err := s.Commit("old", []byte("x"), time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := s.Find("old"); found {
			t.Errorf("an expired session was found")
		}
		if err := db.DeleteExpiredSessions(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete("tok"); err != nil {
			t.Fatal(err)
		}
		if _, found, _ := s.Find("tok"); found {
			t.Errorf("a deleted session was found")
		}
		if err := s.Delete("tok"); err != nil {
			t.Errorf("deleting a missing session: %v", err)
		}
	})
}
