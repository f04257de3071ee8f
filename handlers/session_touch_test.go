package handlers

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

func setCookieOf(rec *httptest.ResponseRecorder, name string) string {
	for _, v := range rec.Header().Values("Set-Cookie") {
		if strings.HasPrefix(v, name+"=") {
			return v
		}
	}
	return ""
}

// A signed-in reader's pages do not write: the session's activity is saved
// at most every sessionTouch, so the second page of a session, with every
// write connection of SQLite busy, still answers (the session library's
// idle timeout used to save the session on every request).
func TestSessionSavedOnlyEveryTouch(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	u := env.createUser(env.ws.ID, "reviewer@example.test", models.RoleViewer)
	ck := env.sessionCookie(u)
	name := env.h.Sessions.Cookie.Name

	first := env.send(http.MethodGet, "/", nil, "", ck)
	if first.Code != http.StatusOK {
		t.Fatalf("first page: %d", first.Code)
	}
	if setCookieOf(first, name) == "" {
		t.Fatal("the first page of a session without a recorded activity did not save it")
	}

	ctx := context.Background()
	var held []*sql.Conn
	for len(held) < 4 {
		c, err := env.db.SQL.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	release := func() {
		for _, c := range held {
			c.Close()
		}
		held = nil
	}
	defer release()
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- env.send(http.MethodGet, "/", nil, "", ck) }()
	select {
	case rec := <-done:
		if rec.Code != http.StatusOK {
			t.Fatalf("second page: %d", rec.Code)
		}
		if c := setCookieOf(rec, name); c != "" {
			t.Errorf("second page within %s saved the session again: %s", sessionTouch, c)
		}
	case <-time.After(10 * time.Second):
		release()
		<-done
		t.Fatal("the second page of a session waited for a write connection")
	}
}

// A session idle for longer than sessionIdle is signed out; one in use is
// kept past sessionIdle by its recorded activity. The session's clock is
// the test's: on the wall clock, with pages 150 ms apart against an idle
// limit of 400 ms, a loaded machine that took 250 ms more between two
// pages signed out the session in use.
func TestIdleSessionSignedOut(t *testing.T) {
	serialTest(t) // sets sessionNow
	oldNow := sessionNow
	var mu sync.Mutex
	now := time.Now()
	sessionNow = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	after := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(d)
	}
	t.Cleanup(func() { sessionNow = oldNow })
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	u := env.createUser(env.ws.ID, "owner@example.test", models.RoleOwner)
	ck := env.sessionCookie(u)

	// In use: a page every half idle limit (each saves its activity, being
	// more than sessionTouch after the last), for longer than the limit.
	gap := sessionIdle / 2
	for i := range 4 {
		if rec := env.send(http.MethodGet, "/", nil, "", ck); rec.Code != http.StatusOK {
			t.Fatalf("page %d of a session in use (%s after the first): %d", i, time.Duration(i)*gap, rec.Code)
		}
		after(gap)
	}
	after(sessionIdle + time.Second)
	rec := env.send(http.MethodGet, "/", nil, "", ck)
	if rec.Code == http.StatusOK {
		t.Fatalf("a session idle for longer than %s still opens pages", sessionIdle)
	}
	if anon := env.send(http.MethodGet, "/", nil, ""); rec.Code != anon.Code {
		t.Errorf("idle session: %d, want %d as without a session", rec.Code, anon.Code)
	}
}
