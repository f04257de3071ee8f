package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestConfirmationMailsPerAccountAreLimited: an account asks for at most
// models.ConfirmationsPerHour confirmation links an hour; the next is
// refused with 429, a Retry-After and words saying when, and nothing is
// mailed. Before, "Mail me a confirmation link" mailed the account's
// address once a click, without end: an account made before mail (Mallory
// answering an invite with ceo@company.com, or an address the operator
// mistyped) is unconfirmed, signed in with the password its maker chose,
// and so could send the address's real owner any number of mails through
// the team's relay.
func TestConfirmationMailsPerAccountAreLimited(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		smtpd := withMail(t, env)
		squat := env.createUser(env.ws.ID, "ceo@company.com", models.RoleViewer) // never confirmed
		cookie := env.sessionCookie(squat)
		for i := range models.ConfirmationsPerHour {
			if rec := env.send(http.MethodPost, "/account/confirm", nil, "", cookie); rec.Code != http.StatusSeeOther {
				t.Fatalf("confirmation %d = %d: %s", i+1, rec.Code, rec.Body)
			}
		}
		rec := env.send(http.MethodPost, "/account/confirm", nil, "", cookie)
		if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), "no mail was sent") {
			t.Fatalf("confirmation %d = %d, want 429 saying no mail was sent: %s", models.ConfirmationsPerHour+1, rec.Code, rec.Body)
		}
		if s, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || s < 3500 || s > 3600 {
			t.Errorf("Retry-After = %q, want about an hour", rec.Header().Get("Retry-After"))
		}
		// Each link ends the one before, so a job that runs after a newer
		// request sends nothing: at most one mail a request let through.
		waitMessages(t, smtpd, 1)
		if err := env.runner.WaitMail(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := len(smtpd.Messages()); n > models.ConfirmationsPerHour {
			t.Errorf("%d mails sent, want at most %d", n, models.ConfirmationsPerHour)
		}
	})
}
