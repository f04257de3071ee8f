package handlers

import (
	"context"
	"html"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/internal/mail"
	"github.com/batcheval/batcheval/internal/mail/mailtest"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

// mailWait bounds how long a test waits for a mail job: River moves a job
// waiting for its retry back to the queue every 5 s.
const mailWait = 60 * time.Second

// inviteMailProblem waits until the invite's mail problem satisfies ok,
// and returns it.
func (env *testEnv) inviteMailProblem(id int64, ok func(string) bool) string {
	env.t.Helper()
	deadline := time.Now().Add(mailWait)
	for {
		invs, err := env.db.ListOpenInvites(context.Background(), env.ws.ID)
		if err != nil {
			env.t.Fatal(err)
		}
		for _, inv := range invs {
			if inv.ID == id && ok(inv.MailProblem) {
				return inv.MailProblem
			}
		}
		if time.Now().After(deadline) {
			env.t.Fatalf("invite %d's mail problem never became what the test waits for (invites %+v)", id, invs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitMessages waits up to mailWait for n messages.
func waitMessages(t *testing.T, smtpd *mailtest.Server, n int) []mailtest.Message {
	t.Helper()
	deadline := time.Now().Add(mailWait)
	for len(smtpd.Messages()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the SMTP server received %d messages (%d tries), want %d", len(smtpd.Messages()), smtpd.Tries(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return smtpd.Messages()
}

// lastInviteID is the id of the workspace's newest open invite.
func (env *testEnv) lastInviteID() int64 {
	env.t.Helper()
	invs, err := env.db.ListOpenInvites(context.Background(), env.ws.ID)
	if err != nil || len(invs) == 0 {
		env.t.Fatalf("no open invite: %v", err)
	}
	return invs[0].ID
}

// TestInviteMailInBackground: an owner mails an invite while the SMTP
// server is slow, down, says "try later" once, or refuses the address for
// good. The page answers at once, before the server has the mail (before:
// it waited up to 30 s for the server, and a mail it would not take was
// lost, the link shown instead); a temporary failure is tried again until
// the mail is delivered; a permanent one is given up, and Members shows
// the invite with the server's reason (escaped) and a button that shows
// the link instead, which then works.
func TestInviteMailInBackground(t *testing.T) {
	cases := []struct {
		name string
		// setup makes the server misbehave; it returns a sender to switch
		// to once the first attempt failed (nil: keep the server's).
		setup func(t *testing.T, smtpd *mailtest.Server) (first mail.Sender, then mail.Sender)
		// problem is in the reason recorded after the first attempt
		// ("" when the first attempt delivers).
		problem string
		// delivered: the mail arrives in the end.
		delivered bool
	}{
		{name: "slow", delivered: true, setup: func(t *testing.T, smtpd *mailtest.Server) (mail.Sender, mail.Sender) {
			smtpd.Slow(2 * time.Second)
			return nil, nil
		}},
		{name: "refusing connections, then up", problem: "refused", delivered: true, setup: func(t *testing.T, smtpd *mailtest.Server) (mail.Sender, mail.Sender) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			down, err := mail.Parse("smtp://"+addr, "BatchEval <batcheval@company.test>")
			if err != nil {
				t.Fatal(err)
			}
			up, err := mail.Parse(smtpd.URL(), "BatchEval <batcheval@company.test>")
			if err != nil {
				t.Fatal(err)
			}
			return down, up
		}},
		{name: "4xx then OK", problem: "451", delivered: true, setup: func(t *testing.T, smtpd *mailtest.Server) (mail.Sender, mail.Sender) {
			smtpd.Refuse("451 4.7.1 greylisted, try again later")
			return nil, nil
		}},
		{name: "5xx", problem: "550", setup: func(t *testing.T, smtpd *mailtest.Server) (mail.Sender, mail.Sender) {
			smtpd.Refuse("550 5.1.1 <script>alert(1)</script> no such mailbox")
			return nil, nil
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				smtpd := withMail(t, env)
				first, then := tc.setup(t, smtpd)
				if first != nil {
					env.runner.SetMail(first)
				}
				ada := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
				ac := env.sessionCookie(ada)
				rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"editor"}, "email": {"cleo@company.com"}}, "", ac)
				if rec.Code != http.StatusSeeOther || !strings.Contains(flashOf(rec), "on its way to cleo@company.com") || strings.Contains(rec.Body.String(), "/invites/") {
					t.Fatalf("mailed invite = %d, flash %q: %s", rec.Code, flashOf(rec), rec.Body)
				}
				// The page answered before the server had the mail: it
				// did not wait for the send.
				if n := len(smtpd.Messages()); n != 0 {
					t.Fatalf("the server had %d messages when the page answered: the page waited for the mail", n)
				}
				id := env.lastInviteID()
				if tc.problem != "" {
					got := env.inviteMailProblem(id, func(p string) bool { return p != "" })
					if !strings.Contains(got, tc.problem) {
						t.Fatalf("mail problem = %q, want it to name %q", got, tc.problem)
					}
					if then != nil {
						env.runner.SetMail(then)
					}
				}
				if tc.delivered {
					msgs := waitMessages(t, smtpd, 1)
					link := pathOf(t, msgs[0].Link("/invites/"))
					if page := env.get(link); page.Code != http.StatusOK {
						t.Fatalf("mailed link = %d: %s", page.Code, page.Body)
					}
					env.inviteMailProblem(id, func(p string) bool { return p == "" })
					// The job's arguments never held the link's token.
					token := link[strings.LastIndex(link, "/")+1:]
					var args []string
					if err := env.db.Gorm.Raw("SELECT CAST(args AS TEXT) FROM river_job WHERE kind = 'batcheval_mail'").Scan(&args).Error; err != nil || len(args) == 0 {
						t.Fatalf("mail jobs: %v %v", args, err)
					}
					for _, a := range args {
						if strings.Contains(a, token) {
							t.Fatalf("the job's arguments hold the link's token: %s", a)
						}
					}
					return
				}
				// Given up: not tried again.
				got := env.inviteMailProblem(id, func(p string) bool { return strings.Contains(p, "not tried again") })
				if err := env.runner.WaitMail(t.Context()); err != nil {
					t.Fatal(err)
				}
				if n := smtpd.Tries(); n != 1 {
					t.Fatalf("a permanent refusal was tried %d times, want 1 (%s)", n, got)
				}
				members := env.send(http.MethodGet, "/members", nil, "", ac).Body.String()
				if !strings.Contains(members, `data-testid="invite-mail-problem"`) || strings.Contains(members, "<script>alert(1)") ||
					!strings.Contains(members, html.EscapeString("<script>alert(1)</script>")) || !strings.Contains(members, `data-testid="invite-show-link"`) {
					t.Fatalf("Members does not show the undelivered invite, escaped, with a way to show its link:\n%s", members)
				}
				rec = env.send(http.MethodPost, "/members/invites/"+itoa(id)+"/link", nil, "", ac)
				m := onceLinkRE.FindStringSubmatch(rec.Body.String())
				if rec.Code != http.StatusOK || m == nil {
					t.Fatalf("show the link = %d: %s", rec.Code, rec.Body)
				}
				if page := env.get("/invites/" + m[2]); page.Code != http.StatusOK {
					t.Fatalf("the shown link = %d: %s", page.Code, page.Body)
				}
				if members := env.send(http.MethodGet, "/members", nil, "", ac).Body.String(); strings.Contains(members, `data-testid="invite-mail-problem"`) {
					t.Fatalf("the problem is still shown once the link was:\n%s", members)
				}
			})
		})
	}
}

// TestMailSurvivesWorkerRestart: the SMTP server says "try later" to a
// reset link's mail until the worker has stopped; a worker started
// afterwards sends it (before: the mail was sent once, while the owner
// waited, and lost when refused). The server refuses every attempt, not
// just the first, until the restart: the test env's worker tries again
// after 10 ms, and on a loaded machine that retry came before Stop and was
// delivered by the worker about to stop ("1 messages before the restart").
func TestMailSurvivesWorkerRestart(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		smtpd := withMail(t, env)
		smtpd.RefuseEvery("421 4.3.2 service shutting down, try later")
		ada := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
		bob := env.createUser(env.ws.ID, "bob@company.com", models.RoleEditor)
		rec := env.send(http.MethodPost, "/members/"+itoa(bob.ID)+"/reset", nil, "", env.sessionCookie(ada))
		if rec.Code != http.StatusSeeOther || !strings.Contains(flashOf(rec), "on its way to") {
			t.Fatalf("reset = %d, flash %q: %s", rec.Code, flashOf(rec), rec.Body)
		}
		deadline := time.Now().Add(mailWait)
		for smtpd.Tries() < 1 {
			if time.Now().After(deadline) {
				t.Fatal("the mail was never tried")
			}
			time.Sleep(10 * time.Millisecond)
		}
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := env.runner.Stop(sctx); err != nil {
			t.Fatal(err)
		}
		if n := len(smtpd.Messages()); n != 0 {
			t.Fatalf("%d messages before the restart", n)
		}
		// The server is back for the worker started afterwards.
		smtpd.RefuseEvery("")
		r2, err := runner.New(runner.Config{DB: env.db, Log: slog.New(slog.DiscardHandler), Work: true, PollInterval: 50 * time.Millisecond, MailBackoff: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		m, err := mail.Parse(smtpd.URL(), "BatchEval <batcheval@company.test>")
		if err != nil {
			t.Fatal(err)
		}
		r2.SetMail(m)
		if err := r2.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = r2.Stop(sctx)
		})
		msgs := waitMessages(t, smtpd, 1)
		link := pathOf(t, msgs[0].Link("/reset/"))
		if msgs[0].To[0] != "bob@company.com" {
			t.Fatalf("mailed to %v", msgs[0].To)
		}
		if page := env.get(link); page.Code != http.StatusOK {
			t.Fatalf("the mailed reset link = %d: %s", page.Code, page.Body)
		}
	})
}

// TestShownInviteLinkNotReplacedByRetry: the relay is down, so the owner
// shows the invite's link and hands it over; when the relay is back, the
// mail still being retried is not sent, and the link handed over keeps
// working (before this was stopped, the retry made a new token and mailed
// it, and the link the owner had handed over no longer worked).
func TestShownInviteLinkNotReplacedByRetry(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		smtpd := withMail(t, env)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		down, _ := mail.Parse("smtp://"+ln.Addr().String(), "BatchEval <batcheval@company.test>")
		ln.Close()
		env.runner.SetMail(down)
		ada := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
		ac := env.sessionCookie(ada)
		if rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"viewer"}, "email": {"cleo@company.com"}}, "", ac); rec.Code != http.StatusSeeOther {
			t.Fatalf("mailed invite = %d", rec.Code)
		}
		id := env.lastInviteID()
		env.inviteMailProblem(id, func(p string) bool { return strings.Contains(p, "trying again") })
		rec := env.send(http.MethodPost, "/members/invites/"+itoa(id)+"/link", nil, "", ac)
		m := onceLinkRE.FindStringSubmatch(rec.Body.String())
		if rec.Code != http.StatusOK || m == nil {
			t.Fatalf("show the link = %d: %s", rec.Code, rec.Body)
		}
		up, _ := mail.Parse(smtpd.URL(), "BatchEval <batcheval@company.test>")
		env.runner.SetMail(up)
		if err := env.runner.WaitMail(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := len(smtpd.Messages()); n != 0 {
			t.Fatalf("%d mails sent after the owner was shown the link", n)
		}
		if page := env.get("/invites/" + m[2]); page.Code != http.StatusOK {
			t.Fatalf("the link handed over = %d after the retry: %s", page.Code, page.Body)
		}
	})
}

// TestLostReplyKeepsFirstLink: the SMTP server takes a mail but its reply
// is lost (the connection closes after the message), so the job tries
// again and a second mail arrives. Whichever mail the person opens works
// (before: the retry made a new token and the first mail's link no longer
// worked, though it may be the only one that arrives), and once one is
// used the other no longer works (single use).
func TestLostReplyKeepsFirstLink(t *testing.T) {
	cases := []struct {
		name string
		// ask makes the link mailed to bob@company.com; part is its path's
		// start.
		ask  func(env *testEnv, bobID int64, owner, bob *http.Cookie)
		part string
		// use uses the link at path, signed in as bob where it needs it.
		use func(env *testEnv, path string, bob *http.Cookie) int
	}{
		{name: "reset", part: "/reset/",
			ask: func(env *testEnv, bobID int64, owner, bob *http.Cookie) {
				if rec := env.send(http.MethodPost, "/members/"+itoa(bobID)+"/reset", nil, "", owner); rec.Code != http.StatusSeeOther {
					env.t.Fatalf("reset = %d: %s", rec.Code, rec.Body)
				}
			},
			use: func(env *testEnv, path string, bob *http.Cookie) int {
				return env.send(http.MethodPost, path, url.Values{"password": {"a brand new password"}}, "").Code
			}},
		{name: "confirmation", part: "/confirm/",
			ask: func(env *testEnv, bobID int64, owner, bob *http.Cookie) {
				if rec := env.send(http.MethodPost, "/account/confirm", nil, "", bob); rec.Code != http.StatusSeeOther {
					env.t.Fatalf("ask for a confirmation link = %d: %s", rec.Code, rec.Body)
				}
			},
			use: func(env *testEnv, path string, bob *http.Cookie) int {
				return env.send(http.MethodPost, path, nil, "", bob).Code
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				smtpd := withMail(t, env)
				smtpd.DropAfterData(1)
				ada := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
				bob := env.createUser(env.ws.ID, "bob@company.com", models.RoleEditor)
				bc := env.sessionCookie(bob)
				tc.ask(env, bob.ID, env.sessionCookie(ada), bc)
				msgs := waitMessages(t, smtpd, 2)
				if err := env.runner.WaitMail(t.Context()); err != nil {
					t.Fatal(err)
				}
				first, second := pathOf(t, msgs[0].Link(tc.part)), pathOf(t, msgs[1].Link(tc.part))
				for _, p := range []string{first, second} {
					if page := env.send(http.MethodGet, p, nil, "", bc); page.Code != http.StatusOK {
						t.Fatalf("the link %s of the mails %s and %s = %d: %s", p, first, second, page.Code, page.Body)
					}
				}
				if code := tc.use(env, first, bc); code != http.StatusSeeOther {
					t.Fatalf("using the first mail's link = %d", code)
				}
				if page := env.send(http.MethodGet, second, nil, "", bc); page.Code == http.StatusOK {
					t.Fatalf("the second mail's link still works once the first was used")
				}
			})
		})
	}
}

// TestUndeliveredAccountMailShown: the SMTP server refuses a password
// reset's or an address confirmation's mail for good. The account's own
// page says the mail was not delivered and why (escaped), and the
// owner's Members shows it beside the member (before: both mails were
// only logged, and the person waited for a mail that never came).
func TestUndeliveredAccountMailShown(t *testing.T) {
	cases := []struct {
		name, what string
		ask        func(env *testEnv, bobID int64, owner, bob *http.Cookie) *httptest.ResponseRecorder
	}{
		{name: "reset", what: "password reset mail", ask: func(env *testEnv, bobID int64, owner, bob *http.Cookie) *httptest.ResponseRecorder {
			return env.send(http.MethodPost, "/members/"+itoa(bobID)+"/reset", nil, "", owner)
		}},
		{name: "confirmation", what: "confirmation mail", ask: func(env *testEnv, bobID int64, owner, bob *http.Cookie) *httptest.ResponseRecorder {
			return env.send(http.MethodPost, "/account/confirm", nil, "", bob)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				smtpd := withMail(t, env)
				smtpd.Refuse("550 5.1.1 <b>bob</b> no such mailbox")
				ada := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
				bob := env.createUser(env.ws.ID, "bob@company.com", models.RoleEditor)
				ac, bc := env.sessionCookie(ada), env.sessionCookie(bob)
				if rec := tc.ask(env, bob.ID, ac, bc); rec.Code != http.StatusSeeOther {
					t.Fatalf("ask = %d: %s", rec.Code, rec.Body)
				}
				if err := env.runner.WaitMail(t.Context()); err != nil {
					t.Fatal(err)
				}
				want := html.EscapeString("<b>bob</b> no such mailbox")
				account := env.send(http.MethodGet, "/account", nil, "", bc).Body.String()
				if !strings.Contains(account, `data-testid="account-mail-problem"`) || !strings.Contains(account, "deliver the "+tc.what+" to bob@company.com") ||
					!strings.Contains(account, want) || strings.Contains(account, "<b>bob</b>") {
					t.Fatalf("the account page does not say the mail was not delivered, escaped:\n%s", account)
				}
				members := env.send(http.MethodGet, "/members", nil, "", ac).Body.String()
				if !strings.Contains(members, `data-testid="member-mail-problem"`) || !strings.Contains(members, want) {
					t.Fatalf("Members does not show the member's undelivered mail:\n%s", members)
				}
				if other := env.send(http.MethodGet, "/account", nil, "", ac).Body.String(); strings.Contains(other, "account-mail-problem") {
					t.Fatalf("another account's page shows bob's mail problem")
				}
				// Delivered the next time: nothing to say any more.
				if rec := tc.ask(env, bob.ID, ac, bc); rec.Code != http.StatusSeeOther {
					t.Fatalf("ask again = %d", rec.Code)
				}
				waitMessages(t, smtpd, 1)
				if err := env.runner.WaitMail(t.Context()); err != nil {
					t.Fatal(err)
				}
				if account := env.send(http.MethodGet, "/account", nil, "", bc).Body.String(); strings.Contains(account, "account-mail-problem") {
					t.Fatalf("the problem is still shown once a newer mail was delivered")
				}
			})
		})
	}
}
