package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestChangeOwnPassword: a signed-in person changes their own password on
// their account page, with their current one. A refused change re-renders
// the form with the message beside the field at fault and changes nothing
// (wrong current passwords are limited per session:
// TestWrongCurrentPasswordsEndTheSessionNotTheAccount); a cross-site post
// is refused. A change
// signs out every other session of the account (this one stays signed in
// under a new session id), ends its open reset links, and says that API
// tokens keep working, as a reset does. There was no way to change one's
// own password at all.
func TestChangeOwnPassword(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		ada := env.createUser(env.ws.ID, "ada@a.test", models.RoleEditor)
		here, elsewhere := env.sessionCookie(ada), env.sessionCookie(ada)
		_, token := env.apiToken(env.ws.ID, ada.ID)
		_, resetLink, err := env.db.CreatePasswordReset(ctx, owner.ID, ada.ID, models.ResetTTL)
		if err != nil {
			t.Fatal(err)
		}

		page := env.send(http.MethodGet, "/account", nil, "", here)
		body := page.Body.String()
		for _, want := range []string{`data-testid="password-form"`, `name="current_password"`, `name="new_password"`,
			`name="new_password_again"`, `data-testid="other-sessions-form"`, "API tokens keep working"} {
			if page.Code != http.StatusOK || !strings.Contains(body, want) {
				t.Errorf("account page (%d) lacks %s", page.Code, want)
			}
		}

		change := func(current, next, again string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
			return env.send(http.MethodPost, "/account/password", url.Values{"current_password": {current},
				"new_password": {next}, "new_password_again": {again}}, "192.0.2.7", cookies...)
		}
		for _, tc := range []struct {
			name                 string
			current, next, again string
			field, message       string
		}{
			{"no current password", "", "a brand new passphrase", "a brand new passphrase", "current_password", "Type your current password"},
			{"wrong current password", "not my password", "a brand new passphrase", "a brand new passphrase", "current_password", "not your current password"},
			{"new password too short", testPassword, "short", "short", "new_password", "at least 10 characters"},
			{"new passwords differ", testPassword, "a brand new passphrase", "a brand new passfrase", "new_password_again", "differ"},
			{"same as the current one", testPassword, testPassword, testPassword, "new_password", "same as your current"},
		} {
			rec := change(tc.current, tc.next, tc.again, here)
			body := rec.Body.String()
			if rec.Code != http.StatusUnprocessableEntity {
				t.Errorf("%s: status %d, want 422", tc.name, rec.Code)
			}
			errID := `id="` + tc.field + `-error"`
			if i := strings.Index(body, errID); i < 0 || !strings.Contains(body[i:], tc.message) {
				t.Errorf("%s: no message %q beside %s", tc.name, tc.message, tc.field)
			}
			if !strings.Contains(body, `aria-describedby="`+tc.field+`-error"`) {
				t.Errorf("%s: the %s field does not point to its message", tc.name, tc.field)
			}
			if strings.Contains(body, tc.current) && tc.current != "" {
				t.Errorf("%s: the page repeats the password typed", tc.name)
			}
		}
		if rec := env.login("ada@a.test", testPassword, "198.51.100.1"); rec.Code != http.StatusSeeOther {
			t.Fatalf("after refused changes the old password signs in = %d, want 303", rec.Code)
		}

		// Cross-site: refused before anything happens.
		form := url.Values{"current_password": {testPassword}, "new_password": {"a brand new passphrase"}, "new_password_again": {"a brand new passphrase"}}
		req := httptest.NewRequest(http.MethodPost, "/account/password", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.AddCookie(here)
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden {
			t.Errorf("cross-site change = %d, want 403", rec.Code)
		}

		rec = change(testPassword, "a brand new passphrase", "a brand new passphrase", here)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/account" {
			t.Fatalf("change = %d to %q, want 303 to /account: %s", rec.Code, rec.Header().Get("Location"), rec.Body)
		}
		renewed := env.sessionFrom(rec)
		if renewed == nil || renewed.Value == here.Value {
			t.Fatalf("the session id was not renewed (%v)", renewed)
		}
		next := env.send(http.MethodGet, "/account", nil, "", append([]*http.Cookie{renewed}, rec.Result().Cookies()...)...)
		if next.Code != http.StatusOK || !strings.Contains(next.Body.String(), "other sessions are signed out") ||
			!strings.Contains(next.Body.String(), "API tokens keep working") {
			t.Errorf("after the change: %d, want the account page saying other sessions ended and tokens work", next.Code)
		}
		if rec := env.send(http.MethodGet, "/account", nil, "", elsewhere); rec.Code != http.StatusUnauthorized {
			t.Errorf("another session after the change = %d, want 401 (signed out)", rec.Code)
		}
		if rec := env.send(http.MethodGet, "/account", nil, "", here); rec.Code != http.StatusUnauthorized {
			t.Errorf("the old id of this session = %d, want 401", rec.Code)
		}
		api := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil)
		api.Header.Set("Authorization", "Bearer "+token)
		rec = httptest.NewRecorder()
		env.e.ServeHTTP(rec, api)
		if rec.Code != http.StatusOK {
			t.Errorf("API token after the change = %d, want 200 (tokens keep working)", rec.Code)
		}
		if rec := env.get("/reset/" + resetLink); rec.Code != http.StatusNotFound {
			t.Errorf("open reset link after the change = %d, want 404", rec.Code)
		}
		if rec := env.login("ada@a.test", testPassword, "198.51.100.2"); rec.Code != http.StatusUnauthorized {
			t.Errorf("old password = %d, want 401", rec.Code)
		}
		if rec := env.login("ada@a.test", "a brand new passphrase", "198.51.100.3"); rec.Code != http.StatusSeeOther {
			t.Errorf("new password = %d, want 303", rec.Code)
		}
		if acts := env.auditActions(); !hasAction(acts, models.AuditPasswordChanged) || !hasAction(acts, models.AuditPasswordChangeFailed) {
			t.Errorf("audit log lacks the change and the wrong password: %v", acts)
		}
	})
}

// TestWrongCurrentPasswordsEndTheSessionNotTheAccount: wrong current
// passwords typed to change the password are limited per session. The
// session that types too many is signed out; the account is not paused, so
// its owner signs in and changes the password as usual from another
// session; tries sent at the same moment count each other. (QA: they were
// counted with the account's failed sign-ins, so a stolen session could
// pause the owner's sign-ins for 15 minutes at will.)
func TestWrongCurrentPasswordsEndTheSessionNotTheAccount(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ada := env.createUser(env.ws.ID, "ada@a.test", models.RoleEditor)
		stolen, mine := env.sessionCookie(ada), env.sessionCookie(ada)
		change := func(current string, cookie *http.Cookie) *httptest.ResponseRecorder {
			return env.send(http.MethodPost, "/account/password", url.Values{"current_password": {current},
				"new_password": {"a brand new passphrase"}, "new_password_again": {"a brand new passphrase"}}, "203.0.113.66", cookie)
		}
		for i := 1; i < maxWrongCurrentPasswords; i++ {
			if rec := change("guess number "+itoa(int64(i)), stolen); rec.Code != http.StatusUnprocessableEntity ||
				!strings.Contains(rec.Body.String(), "not your current password") {
				t.Fatalf("wrong current password %d = %d, want 422", i, rec.Code)
			}
		}
		rec := change("one guess too many", stolen)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/login" || !strings.Contains(flashOf(rec), "Signed out") {
			t.Errorf("wrong current password %d = %d to %q (%q), want 303 to sign in saying the session ended",
				maxWrongCurrentPasswords, rec.Code, rec.Header().Get("Location"), flashOf(rec))
		}
		if rec := env.send(http.MethodGet, "/account", nil, "", stolen); rec.Code != http.StatusUnauthorized {
			t.Errorf("the session after too many wrong passwords = %d, want 401 (signed out)", rec.Code)
		}
		if rec := change(testPassword, stolen); rec.Code == http.StatusSeeOther && rec.Header().Get("Location") == "/account" {
			t.Errorf("the ended session changed the password")
		}
		// The owner is not locked out: sign-in works, and so does another
		// session's change.
		if rec := env.login("ada@a.test", testPassword, "198.51.100.20"); rec.Code != http.StatusSeeOther {
			t.Errorf("the owner's sign-in after a session's wrong passwords = %d, want 303", rec.Code)
		}
		if rec := change(testPassword, mine); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/account" {
			t.Errorf("the owner's own session changing the password = %d, want 303 to /account", rec.Code)
		}

		// A burst from one session checks no more than the limit.
		burst := env.sessionCookie(mustUser(t, env, ada.ID))
		var (
			mu      sync.Mutex
			checked int
			wg      sync.WaitGroup
		)
		for i := range 3 * maxWrongCurrentPasswords {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := change("burst guess "+itoa(int64(i)), burst)
				mu.Lock()
				defer mu.Unlock()
				if rec.Code == http.StatusUnprocessableEntity {
					checked++
				}
			}()
		}
		wg.Wait()
		if checked > maxWrongCurrentPasswords-1 {
			t.Errorf("a burst of %d wrong passwords had %d answered as wrong, want at most %d before the session ends", 3*maxWrongCurrentPasswords, checked, maxWrongCurrentPasswords-1)
		}
		if rec := env.send(http.MethodGet, "/account", nil, "", burst); rec.Code != http.StatusUnauthorized {
			t.Errorf("the session after the burst = %d, want 401 (signed out)", rec.Code)
		}

	})
}

// TestSignOutOtherSessions: the account page's "Sign out my other
// sessions" ends every other session of the account and keeps this one
// (under a new id); API tokens keep working, as the page says.
func TestSignOutOtherSessions(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ada := env.createUser(env.ws.ID, "ada@a.test", models.RoleViewer)
		here, elsewhere := env.sessionCookie(ada), env.sessionCookie(ada)
		_, token := env.apiToken(env.ws.ID, ada.ID)
		rec := env.send(http.MethodPost, "/account/sessions", nil, "", here)
		renewed := env.sessionFrom(rec)
		if rec.Code != http.StatusSeeOther || renewed == nil || renewed.Value == here.Value {
			t.Fatalf("sign out others = %d (cookie %v), want 303 with a new session id", rec.Code, renewed)
		}
		next := env.send(http.MethodGet, "/account", nil, "", append([]*http.Cookie{renewed}, rec.Result().Cookies()...)...)
		if next.Code != http.StatusOK || !strings.Contains(next.Body.String(), "other sessions are signed out") {
			t.Errorf("this session after signing out the others = %d, want the account page saying so", next.Code)
		}
		if rec := env.send(http.MethodGet, "/account", nil, "", elsewhere); rec.Code != http.StatusUnauthorized {
			t.Errorf("another session = %d, want 401 (signed out)", rec.Code)
		}
		api := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil)
		api.Header.Set("Authorization", "Bearer "+token)
		rec = httptest.NewRecorder()
		env.e.ServeHTTP(rec, api)
		if rec.Code != http.StatusOK {
			t.Errorf("API token = %d, want 200", rec.Code)
		}
		if rec := env.login("ada@a.test", testPassword, "198.51.100.5"); rec.Code != http.StatusSeeOther {
			t.Errorf("the password still signs in = %d, want 303", rec.Code)
		}
	})
}

// mustUser reads an account as stored now (its session epoch moves).
func mustUser(t *testing.T, env *testEnv, id int64) models.User {
	t.Helper()
	u, err := env.db.FindUser(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
