package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestMailedLinksIgnoreTheRequestHost: a mailed link starts with the
// operator's address (MailBaseURL, BATCHEVAL_BASE_URL), never with the
// Host a request named. Anyone may ask for a reset link to be mailed to
// someone else's address (Forgot password?) or, holding an invite link, a
// confirmation link; the Host of that request passes the allowed-hosts
// check by its name alone, so its port (example.com:31337, or a port that
// is no number) was the attacker's to choose and went into the victim's
// mail: the link led the token to another service. (Before: the links
// were made from the request's Host.)
func TestMailedLinksIgnoreTheRequestHost(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		smtpd := withMail(t, env)
		env.h.MailBaseURL = "https://be.company.test"
		ada := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
		if err := env.db.Gorm.Model(&models.User{}).Where("id = ?", ada.ID).Update("email_confirmed_at", time.Now().UTC()).Error; err != nil {
			t.Fatal(err)
		}
		_, invite, err := env.db.CreateInvite(ctx, env.ws.ID, models.RoleViewer, ada.ID, models.InviteTTL)
		if err != nil {
			t.Fatal(err)
		}
		post := func(path string, form url.Values, host string) {
			t.Helper()
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Host = host
			req.RemoteAddr = "198.51.100.9:40000"
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("POST %s with Host %s = %d: %s", path, host, rec.Code, rec.Body)
			}
		}
		post("/forgot", url.Values{"email": {"ada@company.com"}}, "example.com:31337")
		// (A port that is no number, example.com:evil.test, is now refused
		// before any handler: TestHostWithBadPortRefused.)
		post("/invites/"+invite, url.Values{"email": {"bob@company.com"}}, "example.com:4444")
		msgs := waitMessages(t, smtpd, 2)
		if err := env.runner.WaitMail(ctx); err != nil {
			t.Fatal(err)
		}
		for _, m := range smtpd.Messages() {
			link := m.Link("/reset/") + m.Link("/confirm/")
			if !strings.HasPrefix(link, "https://be.company.test/") {
				t.Errorf("the mail to %s links to %q, not the operator's address", m.To[0], link)
			}
		}
		if len(msgs) < 2 {
			t.Fatalf("mails: %+v", msgs)
		}
	})
}
