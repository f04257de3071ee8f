package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"gorm.io/gorm"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/runner"
)

// signInStatements marks the context of the requests whose database
// statements recordSignInStatements records.
type signInStatements struct{}

// recordSignInStatements records the SQL (placeholders, not values) of
// every statement GORM runs for a context marked with signInStatements,
// on the writer and on the readers' pool.
func recordSignInStatements(t *testing.T, env *testEnv) (take func() []string) {
	t.Helper()
	var mu sync.Mutex
	var stmts []string
	record := func(tx *gorm.DB) {
		if tx.Statement.Context == nil || tx.Statement.Context.Value(signInStatements{}) == nil {
			return
		}
		mu.Lock()
		stmts = append(stmts, tx.Statement.SQL.String())
		mu.Unlock()
	}
	const name = "test:sign_in_statements"
	seen := map[*gorm.DB]bool{}
	for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
		if g == nil || seen[g] {
			continue
		}
		seen[g] = true
		cb := g.Callback()
		for _, reg := range []func() error{
			func() error { return cb.Create().After("gorm:create").Register(name, record) },
			func() error { return cb.Query().After("gorm:query").Register(name, record) },
			func() error { return cb.Update().After("gorm:update").Register(name, record) },
			func() error { return cb.Delete().After("gorm:delete").Register(name, record) },
			func() error { return cb.Row().After("gorm:row").Register(name, record) },
			func() error { return cb.Raw().After("gorm:raw").Register(name, record) },
		} {
			if err := reg(); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() {
			_ = cb.Create().Remove(name)
			_ = cb.Query().Remove(name)
			_ = cb.Update().Remove(name)
			_ = cb.Delete().Remove(name)
			_ = cb.Row().Remove(name)
			_ = cb.Raw().Remove(name)
		})
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := stmts
		stmts = nil
		return out
	}
}

// signInCounted sends a sign-in whose statements are recorded, and waits
// for what it does in the background (the failed sign-in's audit entry).
func (env *testEnv) signInCounted(email, password, addr string) *httptest.ResponseRecorder {
	form := url.Values{"email": {email}, "password": {password}}
	req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = addr + ":40000"
	req = req.WithContext(context.WithValue(req.Context(), signInStatements{}, true))
	rec := httptest.NewRecorder()
	env.e.ServeHTTP(rec, req)
	env.h.WaitSignInAudits()
	return rec
}

// TestFailedSignInSameStatementsKnownOrUnknown: a failed sign-in runs the
// same database statements, of the same kind and number, whether the
// address typed has an account or not, for a wrong password and for a
// sign-in paused by the limits. A known address's failure looked up the
// account again, listed its workspaces and wrote an entry into each, on
// the request path, and an unknown one's did none of it: a millisecond or
// two more that told registered addresses apart (account enumeration).
// The owner still finds the failure in each workspace's audit log.
func TestFailedSignInSameStatementsKnownOrUnknown(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		ada := env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
		second, err := env.db.CreateWorkspace(ctx, "Second", ada.ID)
		if err != nil {
			t.Fatal(err)
		}
		// The first request after accounts appear counts them once for
		// the process (usersExist): made here, before anything is counted.
		env.send(http.MethodGet, "/login", nil, "203.0.113.1")
		take := recordSignInStatements(t, env)
		for _, tc := range []struct {
			name string
			// failuresBefore are the failed tries with the address before
			// the one compared (each from its own client address).
			failuresBefore int
			status         int
		}{
			{name: "wrong password", status: http.StatusUnauthorized},
			{name: "paused by the limits", failuresBefore: maxFailsPerAccount, status: http.StatusTooManyRequests},
		} {
			t.Run(tc.name, func(t *testing.T) {
				// Each case starts with no tries counted.
				if err := env.db.Gorm.Where("1 = 1").Delete(&models.LoginAttempt{}).Error; err != nil {
					t.Fatal(err)
				}
				run := func(email string) []string {
					for i := range tc.failuresBefore {
						env.login(email, "wrong password!", "198.51.100."+itoa(int64(i+1)))
					}
					env.h.WaitSignInAudits()
					take()
					if rec := env.signInCounted(email, "wrong password!", "203.0.113.7"); rec.Code != tc.status {
						t.Fatalf("%s: sign-in = %d, want %d", email, rec.Code, tc.status)
					}
					stmts := take()
					slices.Sort(stmts)
					return stmts
				}
				known, unknown := run(ada.Email), run("eve@a.test")
				if len(known) == 0 {
					t.Fatal("no statement recorded: the counter does not see the sign-in")
				}
				if !slices.Equal(known, unknown) {
					t.Errorf("a failed sign-in runs other statements for a known address than for an unknown one\nknown (%d):\n  %s\nunknown (%d):\n  %s",
						len(known), strings.Join(known, "\n  "), len(unknown), strings.Join(unknown, "\n  "))
				}
			})
		}
		// The audit trail: each wrong password for ada is in both of her
		// workspaces' logs, named and from the client's address; the
		// unknown address is in none.
		for _, ws := range []int64{env.ws.ID, second.ID} {
			evs, err := env.db.ListAudit(ctx, ws, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			var failed []models.AuditEvent
			for _, e := range evs {
				if e.Action == models.AuditSignInFailed {
					failed = append(failed, e)
				}
				if strings.Contains(e.Target+e.Detail+e.Actor, "eve@") {
					t.Errorf("workspace %d: the unknown address is in the log: %+v", ws, e)
				}
			}
			// 1 (wrong password) + 5 (before the pause); the paused try is
			// refused before its password is checked and is not one.
			if want := 1 + maxFailsPerAccount; len(failed) != want {
				t.Fatalf("workspace %d: %d failed sign-ins in the log, want %d: %+v", ws, len(failed), want, failed)
			}
			e := failed[len(failed)-1] // the oldest: the wrong password from 203.0.113.7
			if e.Target != ada.Email || e.Detail != "wrong password for "+ada.Email || e.Actor != "anonymous" || e.Address != "203.0.113.7" ||
				e.ActorUserID != nil || time.Since(e.CreatedAt) > time.Hour {
				t.Errorf("workspace %d: entry %+v, want anonymous, target and detail naming %s, address 203.0.113.7, now", ws, e, ada.Email)
			}
		}
	})
}

// TestFailedSignInSameAnswerKnownOrUnknown: the answer to a failed sign-in
// is the same whether the address typed has an account or not: status,
// headers and page (the address typed, shown back in the form, aside),
// for a wrong password, a password too long to check, and a sign-in paused
// by the limits (its Retry-After and the minute it names included). The
// clock is the test's (loginNow), so both pauses count from the same
// moments.
func TestFailedSignInSameAnswerKnownOrUnknown(t *testing.T) {
	serialTest(t) // sets loginNow
	old := loginNow
	t.Cleanup(func() { loginNow = old })
	now := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour + 20*time.Second)
	loginNow = func() time.Time { return now }
	eachDB(t, func(t *testing.T, env *testEnv) {
		ada := env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
		// Same length as ada's, so the pages' lengths can be compared.
		const unknown = "eve@a.test"
		for _, tc := range []struct {
			name           string
			password       string
			failuresBefore int
			status         int
			says           string
		}{
			{name: "wrong password", password: "wrong password!", status: http.StatusUnauthorized, says: "wrong email address or password"},
			{name: "password over the limit", password: strings.Repeat("x", models.MaxPasswordLen+1), status: http.StatusUnauthorized, says: "wrong email address or password"},
			{name: "paused by the limits", password: testPassword, failuresBefore: maxFailsPerAccount, status: http.StatusTooManyRequests, says: "Too many failed sign-ins: try again from"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := env.db.Gorm.Where("1 = 1").Delete(&models.LoginAttempt{}).Error; err != nil {
					t.Fatal(err)
				}
				answer := func(email string) *httptest.ResponseRecorder {
					for i := range tc.failuresBefore {
						env.login(email, "wrong password!", "198.51.100."+itoa(int64(i+1)))
					}
					return env.login(email, tc.password, "203.0.113.7")
				}
				k, u := answer(ada.Email), answer(unknown)
				if k.Code != tc.status || u.Code != tc.status {
					t.Fatalf("status known %d, unknown %d, want %d for both", k.Code, u.Code, tc.status)
				}
				if !slices.Equal(headerLines(k.Header()), headerLines(u.Header())) {
					t.Errorf("headers differ\nknown:   %q\nunknown: %q", headerLines(k.Header()), headerLines(u.Header()))
				}
				kb := strings.ReplaceAll(k.Body.String(), ada.Email, "ADDRESS")
				ub := strings.ReplaceAll(u.Body.String(), unknown, "ADDRESS")
				if kb != ub {
					t.Errorf("pages differ beyond the address typed\nknown:   %s\nunknown: %s", formErrorOf(kb), formErrorOf(ub))
				}
				if !strings.Contains(kb, tc.says) || !strings.Contains(kb, `value="ADDRESS"`) {
					t.Errorf("the page does not say %q with the address typed in its field: %s", tc.says, formErrorOf(kb))
				}
			})
		}
	})
}

// headerLines lists a response's headers as "Name: value" lines, sorted.
// Nothing in a failed sign-in's headers is random per request (it sets no
// session cookie), so every value is compared.
func headerLines(h http.Header) []string {
	var out []string
	for k, vs := range h {
		for _, v := range vs {
			out = append(out, k+": "+v)
		}
	}
	slices.Sort(out)
	return out
}

// BenchmarkFailedSignInKnownVsUnknown times failed sign-ins (a wrong
// password) for an address that has an account, a member of three
// workspaces, and for one that has none, interleaved in one process (the
// order alternating), and reports the ratio of their mean times to answer
// (known/unknown): near 1 means the time of a failed sign-in does not tell
// whether the address is registered. The background audit entry is
// waited for outside the times, so that it does not slow the next try.
// Password hashes are the test binary's cheap ones (TestMain), so the
// database work is most of what is timed and its difference shows.
func BenchmarkFailedSignInKnownVsUnknown(b *testing.B) {
	for _, d := range dbtest.Dialects {
		b.Run(string(d), func(b *testing.B) {
			ctx := context.Background()
			db := dbtest.Open(b, d)
			if err := runner.Migrate(ctx, db, nil); err != nil {
				b.Fatal(err)
			}
			ws, err := db.EnsureDefaultWorkspace(ctx)
			if err != nil {
				b.Fatal(err)
			}
			r, err := runner.New(runner.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			h, err := New(db, r, slog.New(slog.DiscardHandler), ws)
			if err != nil {
				b.Fatal(err)
			}
			h.Network.AllowedHosts = append(slices.Clone(DefaultAllowedHosts), "example.com")
			e := echo.New()
			h.Register(e)
			u, err := db.CreateUser(ctx, ws.ID, models.RoleOwner, models.NewUser{Email: "ada@company.com", Name: "Ada", Password: testPassword})
			if err != nil {
				b.Fatal(err)
			}
			for _, name := range []string{"Second", "Third"} {
				if _, err := db.CreateWorkspace(ctx, name, u.ID); err != nil {
					b.Fatal(err)
				}
			}
			try := func(email string, i int) time.Duration {
				req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(url.Values{"email": {email}, "password": {"wrong password!"}}.Encode()))
				req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
				req.RemoteAddr = "10.2." + strconv.Itoa(i/250%250) + "." + strconv.Itoa(i%250) + ":4000"
				rec := httptest.NewRecorder()
				start := time.Now()
				e.ServeHTTP(rec, req)
				took := time.Since(start)
				if rec.Code != http.StatusUnauthorized {
					b.Fatalf("sign-in %s = %d: %.300s", email, rec.Code, rec.Body)
				}
				b.StopTimer()
				h.WaitSignInAudits()
				b.StartTimer()
				return took
			}
			// One of each first: the process's first sign-in counts the
			// accounts (usersExist). (The dummy hash an unknown address is
			// checked against is made when models loads, not here.)
			try("ada@company.com", 0)
			try("eve@company.com", 1)
			var known, unknown time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if i%2 == 0 {
					known += try("ada@company.com", 2*i)
					unknown += try("eve@company.com", 2*i+1)
				} else {
					unknown += try("eve@company.com", 2*i)
					known += try("ada@company.com", 2*i+1)
				}
				b.StopTimer()
				// The per-account limit would pause the fifth failure.
				db.Gorm.Exec("DELETE FROM login_attempts")
				b.StartTimer()
			}
			b.ReportMetric(float64(known.Nanoseconds())/float64(b.N), "known-ns/op")
			b.ReportMetric(float64(unknown.Nanoseconds())/float64(b.N), "unknown-ns/op")
			b.ReportMetric(float64(known)/float64(unknown), "known/unknown")
		})
	}
}
