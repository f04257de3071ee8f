package handlers

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestBouncedInviteAnswerShownOnMembers: someone without an account answers
// an invite (handed over, or mailed to them) with an address whose mail
// server refuses the confirmation mail for good. Members shows, on the
// invite's row, the address answered with, the server's reason (escaped)
// and what to do: check the address, answer the link again (how many
// answers are left), or, once none are, make a new invite; a button sends
// the bounced mails again (audited), whose links then open. A confirmation
// delivered is shown as mailed. Before, the bounce was recorded on the
// confirmation's row and shown nowhere: the invite read "open" and the
// owner waited for someone who never got the link.
func TestBouncedInviteAnswerShownOnMembers(t *testing.T) {
	cases := []struct {
		name string
		// mailed: the invite is mailed to the person (else handed over).
		mailed bool
		// bounces is how many answers bounce before the last one is made
		// (each with its own address); delivered: the last answer's mail
		// is delivered.
		bounces   int
		delivered bool
		// advice is what Members says to do.
		advice string
	}{
		{name: "handed over, one bounce", bounces: 1, advice: "4 more answers allowed"},
		{name: "mailed invite, bounce then right address", mailed: true, bounces: 1, delivered: true, advice: "3 more answers allowed"},
		{name: "every answer used", bounces: models.MaxAnswersPerInvite, advice: "cannot be answered again"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eachDB(t, func(t *testing.T, env *testEnv) {
				smtpd := withMail(t, env)
				ada := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
				ac := env.sessionCookie(ada)
				var link string
				sent := 0
				if tc.mailed {
					rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"editor"}, "email": {"cleo@company.com"}}, "", ac)
					if rec.Code != http.StatusSeeOther {
						t.Fatalf("mailed invite = %d: %s", rec.Code, rec.Body)
					}
					sent++
					link = pathOf(t, waitMessages(t, smtpd, sent)[0].Link("/invites/"))
				} else {
					rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"editor"}}, "", ac)
					m := onceLinkRE.FindStringSubmatch(rec.Body.String())
					if rec.Code != http.StatusOK || m == nil {
						t.Fatalf("invite link = %d: %s", rec.Code, rec.Body)
					}
					link = "/invites/" + m[2]
				}
				members := func() string {
					t.Helper()
					rec := env.send(http.MethodGet, "/members", nil, "", ac)
					if rec.Code != http.StatusOK {
						t.Fatalf("Members = %d", rec.Code)
					}
					return rec.Body.String()
				}
				if body := members(); strings.Contains(body, "invite-answer") {
					t.Fatalf("an invite nobody answered shows an answer:\n%s", body)
				}
				for i := range tc.bounces {
					smtpd.Refuse("550 5.1.1 <script>alert(1)</script> no such mailbox")
					addr := "cleo" + itoa(int64(i)) + "@typo.example"
					if rec := env.send(http.MethodPost, link, url.Values{"email": {addr}}, ""); rec.Code != http.StatusSeeOther {
						t.Fatalf("answer with %s = %d: %s", addr, rec.Code, rec.Body)
					}
					if err := env.runner.WaitMail(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
				if tc.delivered {
					if rec := env.send(http.MethodPost, link, url.Values{"email": {"cleo@company.com"}}, ""); rec.Code != http.StatusSeeOther {
						t.Fatalf("answer with the right address = %d: %s", rec.Code, rec.Body)
					}
					sent++
					waitMessages(t, smtpd, sent)
					if err := env.runner.WaitMail(t.Context()); err != nil {
						t.Fatal(err)
					}
				}
				body := members()
				if got := strings.Count(body, `data-testid="invite-answer-mail-problem"`); got != tc.bounces {
					t.Fatalf("Members shows %d undelivered answers, want %d:\n%s", got, tc.bounces, body)
				}
				if !strings.Contains(body, "cleo0@typo.example") || !strings.Contains(body, "could not be delivered") ||
					!strings.Contains(body, html.EscapeString("<script>alert(1)</script>")) || strings.Contains(body, "<script>alert(1)") {
					t.Fatalf("Members does not name the address and the reason, escaped:\n%s", body)
				}
				if !strings.Contains(body, "Check the address") || !strings.Contains(body, tc.advice) {
					t.Fatalf("Members does not say what to do (%q):\n%s", tc.advice, body)
				}
				if tc.delivered != strings.Contains(body, `data-testid="invite-answer"`) || tc.delivered != strings.Contains(body, "Answered with cleo@company.com") {
					t.Fatalf("the delivered answer shown = %v, want %v:\n%s", !tc.delivered, tc.delivered, body)
				}
				// The owner sends the bounced mails again (the mailbox takes
				// mail now): each address gets a link that opens, and nothing
				// is shown as undelivered any more.
				if !strings.Contains(body, `data-testid="invite-answer-resend"`) {
					t.Fatalf("Members offers no way to send the mail again:\n%s", body)
				}
				id := env.lastInviteID()
				rec := env.send(http.MethodPost, "/members/invites/"+itoa(id)+"/resend", nil, "", ac)
				if rec.Code != http.StatusSeeOther || !strings.Contains(flashOf(rec), "cleo0@typo.example") {
					t.Fatalf("send again = %d, flash %q: %s", rec.Code, flashOf(rec), rec.Body)
				}
				msgs := waitMessages(t, smtpd, sent+tc.bounces)
				if err := env.runner.WaitMail(t.Context()); err != nil {
					t.Fatal(err)
				}
				resent := msgs[len(msgs)-1]
				if page := env.get(pathOf(t, resent.Link("/confirm/"))); page.Code != http.StatusOK {
					t.Fatalf("the link mailed again = %d: %s", page.Code, page.Body)
				}
				body = members()
				if strings.Contains(body, `data-testid="invite-answer-mail-problem"`) || strings.Count(body, `data-testid="invite-answer"`) != tc.bounces+map[bool]int{true: 1}[tc.delivered] {
					t.Fatalf("after sending again, Members still shows a bounce or lost an answer:\n%s", body)
				}
				if !hasAction(env.auditActions(), models.AuditInviteMailResent) {
					t.Errorf("sending again is not in the audit log")
				}
				// Nothing failed now: nothing to send again.
				if rec := env.send(http.MethodPost, "/members/invites/"+itoa(id)+"/resend", nil, "", ac); rec.Code != http.StatusConflict {
					t.Fatalf("send again with nothing undelivered = %d, want 409", rec.Code)
				}
			})
		})
	}
}
