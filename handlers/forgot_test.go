package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestForgotPassword: with mail, the sign-in page offers "Forgot
// password?"; asking for an account's confirmed address mails it a reset
// link that sets a new password, audited, and asking for an address with
// no account, or an unconfirmed one, answers the same words and mails
// nothing. Requests are limited per address and per client address
// without touching sign-in's own limits. Without mail the page is not
// offered and the sign-in page says whom to ask. (Before: no such page.)
func TestForgotPassword(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		ada := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
		env.createUser(env.ws.ID, "bob@company.com", models.RoleEditor) // never confirmed
		if err := env.db.Gorm.Model(&models.User{}).Where("id = ?", ada.ID).Update("email_confirmed_at", time.Now().UTC()).Error; err != nil {
			t.Fatal(err)
		}

		// Without mail.
		if page := env.get("/login").Body.String(); strings.Contains(page, `data-testid="forgot-link"`) || !strings.Contains(page, `data-testid="forgot-ask"`) {
			t.Fatalf("sign-in page without mail:\n%s", page)
		}
		if rec := env.send(http.MethodPost, "/forgot", url.Values{"email": {"ada@company.com"}}, "198.51.100.1"); rec.Code != http.StatusNotFound {
			t.Fatalf("forgot without mail = %d", rec.Code)
		}

		smtpd := withMail(t, env)
		if page := env.get("/login").Body.String(); !strings.Contains(page, `href="/forgot"`) {
			t.Fatalf("sign-in page with mail offers no Forgot password?:\n%s", page)
		}
		if rec := env.get("/forgot"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `data-testid="forgot-form"`) {
			t.Fatalf("forgot page = %d", rec.Code)
		}
		answers := map[string]string{}
		for _, email := range []string{"Ada@company.com", "nobody@company.com", "bob@company.com"} {
			rec := env.send(http.MethodPost, "/forgot", url.Values{"email": {email}}, "198.51.100.1")
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("forgot %s = %d: %s", email, rec.Code, rec.Body)
			}
			answers[email] = strings.ReplaceAll(flashOf(rec), strings.ToLower(email), "ADDRESS")
		}
		if answers["Ada@company.com"] != answers["nobody@company.com"] || answers["bob@company.com"] != answers["nobody@company.com"] || !strings.Contains(answers["nobody@company.com"], "on its way") {
			t.Fatalf("the answers differ by address: %q", answers)
		}
		msgs := waitMessages(t, smtpd, 1)
		if err := env.runner.WaitMail(ctx); err != nil {
			t.Fatal(err)
		}
		if msgs = smtpd.Messages(); len(msgs) != 1 || msgs[0].To[0] != "ada@company.com" {
			t.Fatalf("mails: %+v (want one, to ada@company.com only)", msgs)
		}
		link := pathOf(t, msgs[0].Link("/reset/"))
		if rec := env.send(http.MethodPost, link, url.Values{"password": {"a brand new passphrase"}}, ""); rec.Code != http.StatusSeeOther {
			t.Fatalf("use the reset link = %d: %s", rec.Code, rec.Body)
		}
		if rec := env.login("ada@company.com", "a brand new passphrase", "198.51.100.1"); rec.Code != http.StatusSeeOther {
			t.Fatalf("sign in with the new password = %d: %s", rec.Code, rec.Body)
		}
		if !hasAction(env.auditActions(), models.AuditSelfReset) {
			t.Errorf("the request is not in the audit log: %v", env.auditActions())
		}

		// Per address: 3 an hour (ada has used 1), from other networks.
		for i, want := range []int{http.StatusSeeOther, http.StatusSeeOther, http.StatusTooManyRequests} {
			rec := env.send(http.MethodPost, "/forgot", url.Values{"email": {"ada@company.com"}}, "203.0.113."+itoa(int64(10+i)))
			if rec.Code != want {
				t.Fatalf("request %d for ada = %d, want %d", i+2, rec.Code, want)
			}
			if want == http.StatusTooManyRequests && rec.Header().Get("Retry-After") == "" {
				t.Fatal("no Retry-After")
			}
		}
		// Per client address: 10 an hour (198.51.100.1 has used 3).
		for i := range 8 {
			want := http.StatusSeeOther
			if i == 7 {
				want = http.StatusTooManyRequests
			}
			if rec := env.send(http.MethodPost, "/forgot", url.Values{"email": {"x" + itoa(int64(i)) + "@company.com"}}, "198.51.100.1"); rec.Code != want {
				t.Fatalf("request %d from one client = %d, want %d", i+4, rec.Code, want)
			}
		}
		// Sign-in's own limits are not touched.
		if rec := env.login("ada@company.com", "a brand new passphrase", "198.51.100.1"); rec.Code != http.StatusSeeOther {
			t.Fatalf("sign in after the requests = %d: %s", rec.Code, rec.Body)
		}
	})
}
