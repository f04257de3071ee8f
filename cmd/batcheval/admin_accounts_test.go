package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/internal/mail"
	"github.com/batcheval/batcheval/internal/mail/mailtest"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

// TestAdminReleaseSquattedAddress is the security review's scenario on a
// server without mail: Mallory invites ceo@company.com to her own
// workspace, answers the link herself and so holds the address; no owner
// can reset it (she owns its only workspace). The operator lists the
// accounts, releases the address (her account renamed, signed out, its
// password and tokens void, audited), and the real person registers it.
func TestAdminReleaseSquattedAddress(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "app.db")
	env := map[string]string{"BATCHEVAL_DB": dbPath, "BATCHEVAL_SEED_DEMO": "false"}
	getenv := func(k string) string { return env[k] }
	cmd := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := admin(ctx, args, getenv, strings.NewReader("correct horse battery\n"), &out, &errOut)
		return out.String(), err
	}
	if _, err := cmd("create-user", "--email", "ada@company.com", "--name", "Ada", "--role", "owner"); err != nil {
		t.Fatal(err)
	}
	db, err := models.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ada, err := db.FindUserByEmail(ctx, "ada@company.com")
	if err != nil {
		t.Fatal(err)
	}
	mallory, err := db.CreateUser(ctx, mustDefaultWS(t, db).ID, models.RoleViewer, models.NewUser{Email: "mallory@company.com", Name: "Mallory", Password: "mallory's password"})
	if err != nil {
		t.Fatal(err)
	}
	mws, err := db.CreateWorkspace(ctx, "Mallory's corner", mallory.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, link, err := db.CreateInvite(ctx, mws.ID, models.RoleOwner, mallory.ID, models.InviteTTL)
	if err != nil {
		t.Fatal(err)
	}
	squat, _, err := db.AnswerInvite(ctx, link, models.NewUser{Email: "CEO@company.com", Name: "The CEO", Password: "mallory's password"})
	if err != nil || squat.ID == 0 {
		t.Fatalf("Mallory registers ceo@company.com: %v", err)
	}
	if _, _, err := db.CreateAPIToken(ctx, mws.ID, squat.ID, "script"); err != nil {
		t.Fatal(err)
	}
	// No owner can help: Ada does not own Mallory's workspace.
	if _, _, err := db.CreatePasswordReset(ctx, ada.ID, squat.ID, models.ResetTTL); err == nil {
		t.Fatal("an owner of another workspace reset the squatted account")
	}

	out, err := cmd("list-users")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^ceo@company\.com\s+The CEO\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+no\s+-\s+Mallory's corner \(owner\)$`)
	if !row.MatchString(out) || !strings.Contains(out, "ada@company.com") || !strings.Contains(out, "3 accounts") {
		t.Fatalf("list-users:\n%s", out)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no address", []string{"release-address"}, "needs --email"},
		{"unknown address", []string{"release-address", "--email", "nobody@company.com"}, `no account has the address "nobody@company.com"`},
		{"stray word", []string{"release-address", "--email", "ceo@company.com", "now"}, `"now" was not understood`},
		{"reset without address", []string{"reset-link"}, "needs --email"},
		{"reset bad base", []string{"reset-link", "--email", "ada@company.com", "--base-url", "ftp://x"}, "--base-url"},
		{"reset mail without SMTP", []string{"reset-link", "--email", "ada@company.com", "--mail"}, "BATCHEVAL_SMTP_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := cmd(tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if u, err := db.FindUserByEmail(ctx, "ceo@company.com"); err != nil || u.ID != squat.ID {
		t.Fatalf("a refused command changed the account: %+v %v", u, err)
	}

	out, err = cmd("release-address", "--email", " CEO@Company.com ", "--reason", "registered by Mallory")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Released ceo@company.com") || !strings.Contains(out, "1 API token and 0 share links revoked") || !strings.Contains(out, `"Mallory's corner"`) {
		t.Fatalf("release-address said:\n%s", out)
	}
	after, err := db.FindUser(ctx, squat.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(after.Email, "@"+models.ReleasedDomain) || after.SessionEpoch == squat.SessionEpoch || !strings.Contains(out, after.Email) {
		t.Fatalf("released account: %+v", after)
	}
	if _, err := db.Authenticate(ctx, after.Email, "mallory's password"); err == nil {
		t.Fatal("the released account still signs in with its password")
	}
	toks, err := db.ListAPITokens(ctx, mws.ID, squat.ID)
	if err != nil || len(toks) != 1 || toks[0].RevokedAt == nil {
		t.Fatalf("tokens after release: %+v %v", toks, err)
	}
	evs, err := db.ListAudit(ctx, mws.ID, 0, 10)
	if err != nil || len(evs) == 0 || evs[0].Action != models.AuditAddressReleased || evs[0].Target != "ceo@company.com" ||
		!strings.Contains(evs[0].Detail, "reason: registered by Mallory") || evs[0].Actor != models.OperatorActor {
		t.Fatalf("audit after release: %+v %v", evs, err)
	}
	if _, err := cmd("release-address", "--email", after.Email); err == nil || !strings.Contains(err.Error(), "already a placeholder") {
		t.Fatalf("releasing a placeholder: %v", err)
	}
	if _, err := db.MemberRole(ctx, mws.ID, squat.ID); models.ErrorCode(err) != models.ENotFound {
		t.Fatalf("the released account is still a member of Mallory's corner: %v", err)
	}
	// Mallory, now the only owner of her workspace, is released in turn:
	// refused until someone is named to own it, then Ada owns it.
	if _, err := cmd("release-address", "--email", "mallory@company.com"); err == nil ||
		!strings.Contains(err.Error(), `only owner of "Mallory's corner"`) || !strings.Contains(err.Error(), "--transfer-to EMAIL") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("releasing the only owner: %v", err)
	}
	if r, err := db.MemberRole(ctx, mws.ID, mallory.ID); err != nil || r != models.RoleOwner {
		t.Fatalf("a refused release changed Mallory's membership: %v %v", r, err)
	}
	out, err = cmd("release-address", "--email", "mallory@company.com", "--transfer-to", "ada@company.com")
	if err != nil || !strings.Contains(out, `ada@company.com is now the owner of "Mallory's corner"`) {
		t.Fatalf("release with --transfer-to: %v\n%s", err, out)
	}
	if r, err := db.MemberRole(ctx, mws.ID, ada.ID); err != nil || r != models.RoleOwner {
		t.Fatalf("Ada after the transfer: %v %v", r, err)
	}

	// The real person registers the address through Ada's invite.
	_, link2, err := db.CreateInvite(ctx, mustDefaultWS(t, db).ID, models.RoleEditor, ada.ID, models.InviteTTL)
	if err != nil {
		t.Fatal(err)
	}
	ceo, _, err := db.AnswerInvite(ctx, link2, models.NewUser{Email: "ceo@company.com", Name: "Cleo", Password: "the real ceo's pw"})
	if err != nil || ceo.ID == 0 || ceo.ID == squat.ID {
		t.Fatalf("the real person registers ceo@company.com: %+v %v", ceo, err)
	}

	// The operator may reset any account, one in no workspace too.
	loner, err := db.CreateUser(ctx, mws.ID, models.RoleViewer, models.NewUser{Email: "loner@company.com", Name: "Loner", Password: "loner's password"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.RemoveMember(ctx, mws.ID, loner.ID, false); err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"ceo@company.com", "loner@company.com"} {
		out, err = cmd("reset-link", "--email", who, "--base-url", "https://batcheval.company.com/")
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`https://batcheval\.company\.com/reset/([A-Za-z0-9_-]+)\n`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("reset-link printed:\n%s", out)
		}
		u, err := db.ResetPassword(ctx, m[1], "a brand new password")
		if err != nil || u.Email != who {
			t.Fatalf("reset of %s with the operator's link: %+v %v", who, u, err)
		}
	}
}

func mustDefaultWS(t *testing.T, db *models.DB) models.Workspace {
	t.Helper()
	ws, err := db.EnsureDefaultWorkspace(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestAdminResetLinkMailed: with SMTP configured, --mail queues the link's
// mail and says so, without waiting for the SMTP server (before: it sent
// the mail itself, waited for the server and failed on a "try later",
// with no retry); a worker with the mail settings sends it, trying again
// after the server's "try later", and no link is printed.
func TestAdminResetLinkMailed(t *testing.T) {
	ctx := context.Background()
	smtpd := mailtest.Start(t)
	smtpd.Refuse("451 4.7.1 greylisted, try again later")
	env := map[string]string{"BATCHEVAL_DB": filepath.Join(t.TempDir(), "app.db"), "BATCHEVAL_SEED_DEMO": "false",
		"BATCHEVAL_SMTP_URL": smtpd.URL(), "BATCHEVAL_MAIL_FROM": "BatchEval <batcheval@company.com>"}
	getenv := func(k string) string { return env[k] }
	var out, errOut bytes.Buffer
	if err := admin(ctx, []string{"create-user", "--email", "ada@company.com", "--name", "Ada", "--role", "owner"}, getenv,
		strings.NewReader("correct horse battery\n"), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if err := admin(ctx, []string{"reset-link", "--email", "ada@company.com", "--mail"}, getenv, nil, &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), "--base-url") {
		t.Fatalf("--mail without a base URL: %v", err)
	}
	out.Reset()
	if err := admin(ctx, []string{"reset-link", "--email", "ada@company.com", "--mail", "--base-url", "https://be.company.com"}, getenv, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "/reset/") || !strings.Contains(out.String(), "Queued") || !strings.Contains(out.String(), "admin list-users") {
		t.Fatalf("--mail printed: %s", out.String())
	}
	if n := smtpd.Tries(); n != 0 {
		t.Fatalf("the command talked to the SMTP server itself (%d tries)", n)
	}
	db, err := models.Open(ctx, env["BATCHEVAL_DB"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	w, err := runner.New(runner.Config{DB: db, Work: true, PollInterval: 20 * time.Millisecond, MailBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m, err := mail.Parse(smtpd.URL(), env["BATCHEVAL_MAIL_FROM"])
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SetMail(m); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_ = w.Stop(sctx)
	}()
	msgs := smtpd.Wait(t, 1)
	if msgs[0].To[0] != "ada@company.com" || msgs[0].From != "batcheval@company.com" || !strings.HasPrefix(msgs[0].Link("/reset/"), "https://be.company.com/reset/") {
		t.Fatalf("mail: %+v", msgs[0])
	}
}

// TestServeRefusesBadSMTPSettings: a mail setting that cannot be used
// stops serve before the database is opened, naming the variable.
func TestServeRefusesBadSMTPSettings(t *testing.T) {
	for i, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"BATCHEVAL_SMTP_URL": "smtp://mail.company.com"}, "set BATCHEVAL_MAIL_FROM too"},
		{map[string]string{"BATCHEVAL_SMTP_URL": "mail.company.com:587", "BATCHEVAL_MAIL_FROM": "be@company.com"}, "BATCHEVAL_SMTP_URL must start with smtp://"},
	} {
		db := filepath.Join(t.TempDir(), string(rune('a'+i)), "t.db")
		var out bytes.Buffer
		err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--db", db}, func(k string) string { return tc.env[k] }, &out, &out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.env, err, tc.want)
		}
		if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: the database was created", tc.env)
		}
	}
}

// TestListUsersShowsUndeliveredMail: an account whose reset link's mail
// the SMTP server refused is marked "undelivered" by list-users, with the
// server's reason on a line of its own (control characters made spaces);
// an account with a delivered mail is not.
func TestListUsersShowsUndeliveredMail(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "app.db")
	env := map[string]string{"BATCHEVAL_DB": dbPath, "BATCHEVAL_SEED_DEMO": "false"}
	getenv := func(k string) string { return env[k] }
	var out, errOut bytes.Buffer
	if err := admin(ctx, []string{"create-user", "--email", "ada@company.com", "--name", "Ada", "--role", "owner"}, getenv,
		strings.NewReader("correct horse battery\n"), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	db, err := models.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ada, err := db.FindUserByEmail(ctx, "ada@company.com")
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range []string{"bob@company.com", "cleo@company.com"} {
		u, err := db.CreateUser(ctx, mustDefaultWS(t, db).ID, models.RoleEditor, models.NewUser{Email: who, Name: who, Password: "a long password"})
		if err != nil {
			t.Fatal(err)
		}
		pr, _, err := db.CreatePasswordReset(ctx, ada.ID, u.ID, models.ResetTTL)
		if err != nil {
			t.Fatal(err)
		}
		if who == "bob@company.com" {
			if err := db.RecordLinkMail(ctx, models.LinkReset, pr.ID, "550 5.1.1 no such\x1b[2J mailbox (refused for good: not tried again)"); err != nil {
				t.Fatal(err)
			}
		}
	}
	out.Reset()
	if err := admin(ctx, []string{"list-users"}, getenv, nil, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	var bob, cleo string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "bob@company.com "):
			bob = l
		case strings.HasPrefix(l, "cleo@company.com "):
			cleo = l
		}
	}
	if !strings.Contains(bob, "undelivered") || strings.Contains(cleo, "undelivered") {
		t.Fatalf("list-users rows: bob %q, cleo %q:\n%s", bob, cleo, out.String())
	}
	if !strings.Contains(out.String(), "bob@company.com: the password reset mail to bob@company.com was not delivered: 550 5.1.1 no such [2J mailbox") ||
		strings.Contains(out.String(), "\x1b") {
		t.Fatalf("list-users does not give the reason, safely:\n%q", out.String())
	}
}
