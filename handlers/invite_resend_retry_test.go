package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/internal/mail"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

// TestResendInviteAnswerWhileRetrying: an invite's answer's confirmation
// mail fails ("try later"), and while its job waits a minute for its next
// attempt the owner sends it again. The mail goes out now, once, and no
// job is left to send it a second time (before: the resend queued a second
// job beside the one waiting, and the person got two mails, the second a
// backoff later).
func TestResendInviteAnswerWhileRetrying(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		smtpd := withMail(t, env)
		// A worker whose failed mail waits an hour for its next attempt
		// (the longest backoff), in place of the env's (10 ms): the resend
		// comes while it waits, and a second job left queued would still be
		// waiting long after the bound below, however slow the machine.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := env.runner.Stop(sctx); err != nil {
			t.Fatal(err)
		}
		r, err := runner.New(runner.Config{DB: env.db, Log: slog.New(slog.DiscardHandler), Work: true, PollInterval: 50 * time.Millisecond, MailBackoff: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		m, err := mail.Parse(smtpd.URL(), "BatchEval <batcheval@company.test>")
		if err != nil {
			t.Fatal(err)
		}
		if err := r.SetMail(m); err != nil {
			t.Fatal(err)
		}
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = r.Stop(sctx)
		})
		env.h.Runner = r

		ada := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
		ac := env.sessionCookie(ada)
		rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"editor"}}, "", ac)
		link := onceLinkRE.FindStringSubmatch(rec.Body.String())
		if rec.Code != http.StatusOK || link == nil {
			t.Fatalf("invite link = %d: %s", rec.Code, rec.Body)
		}
		smtpd.Refuse("421 4.3.2 service shutting down, try later")
		if rec := env.send(http.MethodPost, "/invites/"+link[2], url.Values{"email": {"cleo@company.com"}}, ""); rec.Code != http.StatusSeeOther {
			t.Fatalf("answer = %d: %s", rec.Code, rec.Body)
		}
		for deadline := time.Now().Add(mailWait); ; time.Sleep(20 * time.Millisecond) {
			body := env.send(http.MethodGet, "/members", nil, "", ac).Body.String()
			if strings.Contains(body, `data-testid="invite-answer-mail-problem"`) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the failed confirmation mail is not shown (%d tries):\n%s", smtpd.Tries(), body)
			}
		}
		// The problem is recorded at the end of the attempt: the resend
		// comes once the job waits for its next one.
		for deadline := time.Now().Add(mailWait); ; time.Sleep(20 * time.Millisecond) {
			var state string
			if err := env.db.SQL.QueryRow(`SELECT state FROM river_job WHERE kind = 'batcheval_mail' ORDER BY id DESC LIMIT 1`).Scan(&state); err != nil {
				t.Fatal(err)
			}
			if state == "retryable" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the failed mail's job is %s, not waiting for its retry", state)
			}
		}
		id := env.lastInviteID()
		if rec := env.send(http.MethodPost, "/members/invites/"+itoa(id)+"/resend", nil, "", ac); rec.Code != http.StatusSeeOther {
			t.Fatalf("send again = %d: %s", rec.Code, rec.Body)
		}
		msgs := waitMessages(t, smtpd, 1)
		if msgs[0].To[0] != "cleo@company.com" || msgs[0].Link("/confirm/") == "" {
			t.Fatalf("mail = %+v", msgs[0])
		}
		// Well before the old job's next attempt (an hour away), no mail
		// job is left: nothing will send the link a second time. The bound
		// (a minute) is reached only when a job is left: done at once
		// otherwise.
		wctx, wcancel := context.WithTimeout(context.Background(), mailWait)
		defer wcancel()
		if err := r.WaitMail(wctx); errors.Is(err, context.DeadlineExceeded) {
			t.Fatal("a second confirmation mail is still queued after the resend was sent")
		} else if err != nil {
			t.Fatal(err)
		}
		if n, tries := len(smtpd.Messages()), smtpd.Tries(); n != 1 || tries != 2 {
			t.Fatalf("%d mails delivered in %d tries, want 1 in 2 (the refused one and the resend)", n, tries)
		}
		if page := env.get(pathOf(t, msgs[0].Link("/confirm/"))); page.Code != http.StatusOK {
			t.Fatalf("the link mailed again = %d: %s", page.Code, page.Body)
		}
	})
}
