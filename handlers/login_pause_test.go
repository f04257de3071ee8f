package handlers

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestLoginPauseSaysWhenToTryAgain: a paused sign-in says when it works
// again, and its Retry-After says the same: when enough failures have left
// the 15-minute window, not a whole window after the refused try. It said
// "wait 15 minutes" and Retry-After: 900 whatever the failures' age, so a
// person told to wait 15 minutes 14 minutes into the pause waited twice
// as long as needed, and a client honouring Retry-After likewise. The
// clock is the test's (loginNow).
func TestLoginPauseSaysWhenToTryAgain(t *testing.T) {
	serialTest(t) // sets loginNow
	old := loginNow
	t.Cleanup(func() { loginNow = old })
	var mu sync.Mutex
	var now time.Time
	at := func(tm time.Time) {
		mu.Lock()
		defer mu.Unlock()
		now = tm
	}
	loginNow = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	eachDB(t, func(t *testing.T, env *testEnv) {
		env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
		env.createUser(env.ws.ID, "bob@a.test", models.RoleOwner)
		// 20 s past a minute, so the minute shown is rounded up.
		t0 := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour + 20*time.Second)
		for i := range maxFailsPerAccount {
			at(t0.Add(time.Duration(i) * time.Minute))
			if rec := env.login("ada@a.test", "wrong password!", "203.0.113.1"); rec.Code != http.StatusUnauthorized {
				t.Fatalf("failure %d = %d, want 401", i+1, rec.Code)
			}
		}
		minute := func(d time.Duration) string { return t0.Truncate(time.Minute).Add(d).Format("15:04") }
		for _, tc := range []struct {
			name       string
			after      time.Duration // from t0
			retryAfter string
			says       string
		}{
			// The first failure leaves the window at t0+15m.
			{name: "just after the fifth failure", after: 5 * time.Minute, retryAfter: "600",
				says: "try again from " + minute(16*time.Minute) + " UTC (in 11 minutes)"},
			{name: "a second before the first failure leaves", after: 15*time.Minute - time.Second, retryAfter: "1",
				says: "try again from " + minute(16*time.Minute) + " UTC (in 1 minute)"},
		} {
			at(t0.Add(tc.after))
			rec := env.login("ada@a.test", testPassword, "203.0.113.2")
			body := rec.Body.String()
			if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != tc.retryAfter || !strings.Contains(body, tc.says) {
				t.Errorf("%s: %d, Retry-After %q, want 429, %s and a page saying %q\n%s", tc.name, rec.Code, rec.Header().Get("Retry-After"), tc.retryAfter, tc.says, formErrorOf(body))
			}
		}
		// Once the first failure has left the window, four remain: the
		// right password signs in, as the message said it would.
		at(t0.Add(15*time.Minute + time.Second))
		if rec := env.login("ada@a.test", testPassword, "203.0.113.2"); rec.Code != http.StatusSeeOther {
			t.Errorf("when the pause said it ends = %d, want 303\n%s", rec.Code, formErrorOf(rec.Body.String()))
		}

		// A client paused for its failures on many addresses is told
		// the same way, from its oldest failure that still counts.
		t1 := t0.Add(time.Hour)
		for i := range maxFailsPerAddress {
			at(t1.Add(time.Duration(i) * 10 * time.Second))
			env.login("nobody"+itoa(int64(i))+"@a.test", "wrong password!", "203.0.113.9")
		}
		at(t1.Add(5 * time.Minute))
		rec := env.login("bob@a.test", testPassword, "203.0.113.9")
		want := "try again from " + t1.Truncate(time.Minute).Add(16*time.Minute).Format("15:04") + " UTC (in 11 minutes)"
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "600" || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("paused client: %d, Retry-After %q, want 429, 600 and %q\n%s", rec.Code, rec.Header().Get("Retry-After"), want, formErrorOf(rec.Body.String()))
		}
	})
}

// formErrorOf is the sign-in form's error line of a page, for messages.
func formErrorOf(body string) string {
	i := strings.Index(body, `data-testid="form-error">`)
	if i < 0 {
		return "(no form error)"
	}
	rest := body[i:]
	if j := strings.Index(rest, "</"); j > 0 {
		rest = rest[:j]
	}
	return rest
}
