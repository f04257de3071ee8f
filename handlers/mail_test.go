package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/internal/mail"
	"github.com/batcheval/batcheval/internal/mail/mailtest"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// withMail gives the handlers a local SMTP server and returns it.
func withMail(t *testing.T, env *testEnv) *mailtest.Server {
	t.Helper()
	smtpd := mailtest.Start(t)
	m, err := mail.Parse(smtpd.URL(), "BatchEval <batcheval@company.test>")
	if err != nil {
		t.Fatal(err)
	}
	env.h.Mail = m
	env.runner.SetMail(m)
	return smtpd
}

// pathOf is the path of a mailed link (the test server's host is
// example.com).
func pathOf(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || link == "" {
		t.Fatalf("no link: %q", link)
	}
	return u.Path
}

// TestMalloryCannotClaimAddressWithMail is the security review's scenario
// on a server with mail: Mallory makes an invite in her own workspace,
// takes the link herself and answers it with ceo@company.com. Before, that
// made the account with her password, and the real person could never
// register the address. Now it only mails a link to the address: no
// account exists until someone who receives ceo@company.com's mail opens
// it and chooses a name and password there. The real person joins Ada's
// workspace by the invite Ada mailed, and Members marks the address
// confirmed.
func TestMalloryCannotClaimAddressWithMail(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := t.Context()
		smtpd := withMail(t, env)
		ada := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
		mallory := env.createUser(env.ws.ID, "mallory@company.com", models.RoleViewer)
		mc := env.sessionCookie(mallory)
		if rec := env.send(http.MethodPost, "/workspaces", url.Values{"name": {"Mallory's corner"}}, "", mc); rec.Code != http.StatusSeeOther {
			t.Fatalf("Mallory's workspace = %d: %s", rec.Code, rec.Body)
		}
		rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"owner"}}, "", mc)
		m := onceLinkRE.FindStringSubmatch(rec.Body.String())
		if rec.Code != http.StatusOK || m == nil {
			t.Fatalf("Mallory's invite link = %d: %s", rec.Code, rec.Body)
		}
		token := m[2]
		// She answers it herself, not signed in, with the CEO's address and
		// her password (the form of a server without mail, names included).
		squat := url.Values{"email": {"ceo@company.com"}, "name": {"The CEO"}, "password": {"mallory's password"}}
		rec = env.send(http.MethodPost, "/invites/"+token, squat, "")
		if rec.Code != http.StatusSeeOther || !strings.Contains(flashOf(rec), "A link is on its way to ceo@company.com") {
			t.Fatalf("answer = %d, flash %q: %s", rec.Code, flashOf(rec), rec.Body)
		}
		if u, err := env.db.FindUserByEmail(ctx, "ceo@company.com"); models.ErrorCode(err) != models.ENotFound {
			t.Fatalf("holding an invite link claimed the address: %+v %v", u, err)
		}
		if rec := env.login("ceo@company.com", "mallory's password", "192.0.2.7"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("Mallory signs in as ceo@company.com: %d", rec.Code)
		}
		msgs := smtpd.Wait(t, 1)
		if msgs[0].To[0] != "ceo@company.com" || msgs[0].Link("/confirm/") == "" || strings.Contains(msgs[0].Body, "mallory's password") {
			t.Fatalf("the confirmation mail: %+v", msgs[0])
		}

		// The real person: Ada mails an invite to the address.
		ac := env.sessionCookie(ada)
		rec = env.send(http.MethodPost, "/members/invites", url.Values{"role": {"editor"}, "email": {"CEO@company.com"}}, "", ac)
		if rec.Code != http.StatusSeeOther || strings.Contains(rec.Body.String(), "/invites/") || !strings.Contains(flashOf(rec), "on its way to ceo@company.com") {
			t.Fatalf("mailed invite = %d, flash %q", rec.Code, flashOf(rec))
		}
		msgs = smtpd.Wait(t, 2)
		inviteLink := pathOf(t, msgs[1].Link("/invites/"))
		if msgs[1].To[0] != "ceo@company.com" || !strings.Contains(msgs[1].Subject, "invited") {
			t.Fatalf("invite mail: %+v", msgs[1])
		}
		if page := env.get(inviteLink); page.Code != http.StatusOK || !strings.Contains(page.Body.String(), `data-testid="invite-mail-rule"`) ||
			strings.Contains(page.Body.String(), `name="password"`) {
			t.Fatalf("invite page with mail = %d: %s", page.Code, page.Body)
		}
		if rec := env.send(http.MethodPost, inviteLink, url.Values{"email": {"ceo@company.com"}}, ""); rec.Code != http.StatusSeeOther {
			t.Fatalf("answer Ada's invite = %d: %s", rec.Code, rec.Body)
		}
		msgs = smtpd.Wait(t, 3)
		confirm := pathOf(t, msgs[2].Link("/confirm/"))
		if page := env.get(confirm); page.Code != http.StatusOK || !strings.Contains(page.Body.String(), `name="password"`) {
			t.Fatalf("confirm page = %d: %s", page.Code, page.Body)
		}
		if rec := env.send(http.MethodPost, confirm, url.Values{"name": {"Cleo"}, "password": {"short"}}, ""); rec.Code != http.StatusUnprocessableEntity {
			t.Fatalf("weak password = %d", rec.Code)
		}
		rec = env.send(http.MethodPost, confirm, url.Values{"name": {"Cleo"}, "password": {"the real ceo's password"}}, "")
		if rec.Code != http.StatusSeeOther || env.sessionFrom(rec) == nil {
			t.Fatalf("confirm = %d: %s", rec.Code, rec.Body)
		}
		ceo, err := env.db.FindUserByEmail(ctx, "ceo@company.com")
		if err != nil || ceo.EmailConfirmedAt == nil || ceo.Name != "Cleo" {
			t.Fatalf("the real account: %+v %v", ceo, err)
		}
		if role, err := env.db.MemberRole(ctx, env.ws.ID, ceo.ID); err != nil || role != models.RoleEditor {
			t.Fatalf("Cleo's role = %q %v", role, err)
		}
		if rec := env.send(http.MethodPost, confirm, url.Values{"name": {"Cleo"}, "password": {"the real ceo's password"}}, ""); rec.Code != http.StatusNotFound {
			t.Fatalf("the link used twice = %d", rec.Code)
		}
		// Mallory's link, opened now, asks to sign in as the account.
		if page := env.get(pathOf(t, msgs[0].Link("/confirm/"))); !strings.Contains(page.Body.String(), `data-testid="confirm-sign-in"`) {
			t.Fatalf("Mallory's confirmation link now: %s", page.Body)
		}
		members := env.send(http.MethodGet, "/members", nil, "", ac).Body.String()
		if strings.Count(members, `data-testid="email-confirmed"`) != 1 {
			t.Fatalf("Members does not mark the confirmed address:\n%s", members)
		}
		if strings.Count(members, `data-testid="email-unconfirmed"`) != 2 || strings.Contains(members, `data-testid="no-mail-note"`) {
			t.Fatalf("Members marks the unconfirmed addresses wrong:\n%s", members)
		}

		// A signed-in account whose address is unconfirmed confirms it
		// before joining through an invite (of a workspace she is not a
		// member of: a member is refused at once, TestInviteOpenedByAMember).
		second, err := env.db.CreateWorkspace(ctx, "Ada's second", ada.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, tok2, err := env.db.CreateInvite(ctx, second.ID, models.RoleEditor, ada.ID, models.InviteTTL)
		if err != nil {
			t.Fatal(err)
		}
		rec = env.send(http.MethodPost, "/invites/"+tok2, nil, "", mc)
		if rec.Code != http.StatusSeeOther || !strings.Contains(flashOf(rec), "must be confirmed first") {
			t.Fatalf("unconfirmed account joins = %d, flash %q", rec.Code, flashOf(rec))
		}
		if role, err := env.db.MemberRole(ctx, second.ID, mallory.ID); models.ErrorCode(err) != models.ENotFound {
			t.Fatalf("Mallory joined before she confirmed: %q %v", role, err)
		}
		msgs = smtpd.Wait(t, 4)
		mconfirm := pathOf(t, msgs[3].Link("/confirm/"))
		if msgs[3].To[0] != "mallory@company.com" {
			t.Fatalf("confirmation sent to %v", msgs[3].To)
		}
		if rec := env.send(http.MethodPost, mconfirm, nil, "", env.sessionCookie(ceo)); rec.Code != http.StatusForbidden {
			t.Fatalf("another account uses Mallory's link = %d", rec.Code)
		}

		// With mail, a reset link goes to the address, not the owner.
		rec = env.send(http.MethodPost, "/members/"+itoa(ceo.ID)+"/reset", nil, "", ac)
		if rec.Code != http.StatusSeeOther || strings.Contains(rec.Body.String(), "/reset/") {
			t.Fatalf("reset with mail = %d: %s", rec.Code, rec.Body)
		}
		msgs = smtpd.Wait(t, 5)
		if msgs[4].To[0] != "ceo@company.com" || msgs[4].Link("/reset/") == "" {
			t.Fatalf("reset mail: %+v", msgs[4])
		}
	})
}

// TestPagesSayAddressesUnconfirmedWithoutMail: without SMTP the invite
// flow is as before, and Members, the invite page and the account page
// say the addresses are unconfirmed and name the operator's commands.
func TestPagesSayAddressesUnconfirmedWithoutMail(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
	oc := env.sessionCookie(owner)
	members := env.send(http.MethodGet, "/members", nil, "", oc).Body.String()
	if !strings.Contains(members, `data-testid="no-mail-note"`) || !strings.Contains(members, "batcheval admin release-address") ||
		!strings.Contains(members, `data-testid="email-unconfirmed"`) || strings.Contains(members, `name="email"`) {
		t.Fatalf("Members without mail:\n%s", members)
	}
	rec := env.send(http.MethodPost, "/members/invites", url.Values{"role": {"viewer"}, "email": {"x@a.test"}}, "", oc)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(rec.Body.String(), "sends no mail") {
		t.Fatalf("an address to mail an invite to, without mail = %d", rec.Code)
	}
	_, token, err := env.db.CreateInvite(t.Context(), env.ws.ID, models.RoleViewer, owner.ID, models.InviteTTL)
	if err != nil {
		t.Fatal(err)
	}
	if page := env.get("/invites/" + token).Body.String(); !strings.Contains(page, `data-testid="no-mail-note"`) || !strings.Contains(page, `name="password"`) {
		t.Fatalf("invite page without mail:\n%s", page)
	}
	if page := env.send(http.MethodGet, "/account", nil, "", oc).Body.String(); !strings.Contains(page, "batcheval admin reset-link") {
		t.Fatalf("account page without mail:\n%s", page)
	}
}
