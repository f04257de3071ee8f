package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestPasswordResetRequestSameAnswerAndWorkKnownOrUnknown: asking for a reset link
// ("Forgot password?") answers with the same status, headers, flash and
// database statements on the request path whether the address typed is an
// account's confirmed address, an unconfirmed account's, or no account's,
// for a request that is queued and for one paused by the limits. The
// address is looked up only later, by the mail job (runner.LinkForgot), so
// neither the answer nor its time tells whether an address is registered.
// (Reviewed with signin53's sign-in tests as the model: alike, so this is
// a guard against a change that looks the address up on the request.)
func TestPasswordResetRequestSameAnswerAndWorkKnownOrUnknown(t *testing.T) {
	serialTest(t) // sets loginNow
	old := loginNow
	t.Cleanup(func() { loginNow = old })
	now := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour + 20*time.Second)
	loginNow = func() time.Time { return now }
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		ada := env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
		env.createUser(env.ws.ID, "bob@a.test", models.RoleEditor) // never confirmed
		if err := env.db.Gorm.Model(&models.User{}).Where("id = ?", ada.ID).Update("email_confirmed_at", time.Now().UTC()).Error; err != nil {
			t.Fatal(err)
		}
		withMail(t, env)
		// The first request after accounts appear counts them once for
		// the process (usersExist): made here, before anything is counted.
		env.send(http.MethodGet, "/login", nil, "203.0.113.1")
		take := recordSignInStatements(t, env)
		// The same length each, so that nothing else differs.
		addresses := []string{"ada@a.test", "bob@a.test", "eve@a.test"}
		ask := func(email, client string, counted bool) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodPost, "/forgot", strings.NewReader(url.Values{"email": {email}}.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.RemoteAddr = client + ":40000"
			if counted {
				req = req.WithContext(context.WithValue(req.Context(), signInStatements{}, true))
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			return rec
		}
		for _, tc := range []struct {
			name string
			// before are the requests for the address before the one
			// compared (each from its own client address).
			before int
			status int
			says   string
		}{
			{name: "queued", status: http.StatusSeeOther, says: "is on its way"},
			{name: "paused by the limits", before: maxForgotsPerEmail, status: http.StatusTooManyRequests, says: "Too many reset links"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := env.db.Gorm.Where("1 = 1").Delete(&models.LoginAttempt{}).Error; err != nil {
					t.Fatal(err)
				}
				type answer struct {
					status                int
					location, flash, body string
					headers, statements   string
				}
				var answers []answer
				for i, email := range addresses {
					for j := range tc.before {
						if rec := ask(email, "198.51.100."+itoa(int64(10*i+j+1)), false); rec.Code != http.StatusSeeOther {
							t.Fatalf("%s: request %d before = %d", email, j+1, rec.Code)
						}
					}
					if err := env.runner.WaitMail(ctx); err != nil {
						t.Fatal(err)
					}
					take()
					rec := ask(email, "203.0.113."+itoa(int64(i+1)), true)
					stmts := take()
					slices.Sort(stmts)
					plain := func(s string) string { return strings.ReplaceAll(s, email, "ADDRESS") }
					var names []string
					for k := range rec.Header() {
						names = append(names, k)
					}
					slices.Sort(names)
					answers = append(answers, answer{status: rec.Code, location: rec.Header().Get("Location"), flash: plain(flashOf(rec)),
						body: plain(rec.Body.String()), headers: strings.Join(names, ",") + " Retry-After=" + rec.Header().Get("Retry-After"),
						statements: strings.Join(stmts, "\n  ")})
				}
				a := answers[0]
				if a.status != tc.status || !strings.Contains(a.flash+a.body, tc.says) {
					t.Fatalf("%s: %d %q, want %d saying %q", addresses[0], a.status, a.flash, tc.status, tc.says)
				}
				if a.statements == "" {
					t.Fatal("no statement recorded: the counter does not see the request")
				}
				for i, b := range answers[1:] {
					if b != a {
						t.Errorf("the answers for %s and %s differ:\n%+v\n%+v", addresses[0], addresses[i+1], a, b)
					}
				}
			})
		}
		if err := env.runner.WaitMail(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
