package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/batcheval/batcheval/handlers"
	"github.com/batcheval/batcheval/internal/mail"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

// The operator's account commands: list the accounts, issue a reset link
// for any of them, and release an address someone registered without the
// right to. They work on the whole server (no web role is needed: whoever
// runs them has the database), and each change is one transaction,
// audited in the account's workspaces.

const adminAccountsUsage = `  batcheval admin list-users
      list every account: address, name, created, workspaces with roles, and
      whether the address was confirmed by a mailed link
  batcheval admin reset-link --email ADDRESS [--base-url URL] [--mail]
      issue a password reset link (single use, 24 hours) for any account and
      print it to hand over; --mail sends it to the address instead (SMTP set)
  batcheval admin release-address --email ADDRESS [--reason TEXT] [--transfer-to EMAIL]
      free an address that an account holds without the right to: the account
      is renamed to a placeholder address, its password made unusable, its
      sessions signed out, its API tokens and share links revoked, and it is
      taken out of every workspace; then the address's owner can register it.
      A workspace it is the only owner of is refused unless --transfer-to
      names the account that becomes its owner
  batcheval admin account-events [--email ADDRESS] [--since 2026-12-01|36h|7d] [--limit 50]
      the accounts' audit log, newest first: what was done to accounts in no
      workspace (an operator's reset link, a confirmation, a self-service
      reset), which no workspace's audit log holds
`

// accountCommands are the admin subcommands of this file.
var accountCommands = map[string]func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error{
	"list-users":      listUsers,
	"reset-link":      operatorResetLink,
	"release-address": releaseAddress,
	"account-events":  accountEvents,
}

// setMailer gives the dashboard the SMTP server configured in
// BATCHEVAL_SMTP_URL, if any (nil: the server sends no mail). A nil
// *mail.SMTP is not stored: the handlers' interface would not be nil.
func setMailer(h *handlers.Handlers, m *mail.SMTP, log *slog.Logger) {
	if m != nil {
		h.Mail = m
		log.Info("mail: invite, reset and confirmation links are mailed", "smtp", m.String())
	}
}

// noArgs refuses words left after the flags (a mistyped flag's value, a
// value with spaces not quoted), naming the flags after the word, which
// the flag package does not read: `batcheval run --data f.csv x --rounds 1`
// ran with 5 rounds, in silence.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s takes no arguments besides its flags: %q was not understood", fs.Name(), fs.Arg(0))
	if later := flagsAmong(fs.Args()[1:]); len(later) > 0 {
		msg += fmt.Sprintf(", and the flags after it (%s) were not read: remove it, or quote a value that holds spaces", strings.Join(later, " "))
	}
	return errors.New(msg)
}

// andList is "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// flagsAmong are the words of args that are flags (-x, --name=v), as
// written up to any "=".
func flagsAmong(args []string) []string {
	var out []string
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && a != "--" {
			name, _, _ := strings.Cut(a, "=")
			out = append(out, name)
		}
	}
	return out
}

// listUsers prints every account with its workspaces.
func listUsers(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := newCommand("admin list-users", getenv, stderr)
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	db, err := openDB(ctx, c, c.logger(stderr))
	if err != nil {
		return err
	}
	defer db.Close()
	accounts, err := db.ListAccounts(ctx)
	if err != nil {
		return err
	}
	if len(accounts) == 0 {
		fmt.Fprintln(stdout, "No account exists yet: make the first with `batcheval admin create-user --email ADDRESS --name NAME --role owner`.")
		return nil
	}
	undelivered, err := db.UndeliveredMails(ctx, nil)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ADDRESS\tNAME\tCREATED\tCONFIRMED\tMAIL\tWORKSPACES")
	var problems []string
	for _, a := range accounts {
		mailState := "-"
		if u, ok := undelivered[a.User.ID]; ok {
			mailState = "undelivered"
			problems = append(problems, fmt.Sprintf("%s: the %s to %s was not delivered: %s", a.User.Email, u.What(), u.To, oneLine(u.Problem)))
		}
		confirmed := "no"
		if a.User.EmailConfirmedAt != nil {
			confirmed = a.User.EmailConfirmedAt.UTC().Format("2006-01-02")
		}
		var wss []string
		for _, w := range a.Workspaces {
			wss = append(wss, fmt.Sprintf("%s (%s)", oneLine(w.Workspace.Name), w.Role))
		}
		if len(wss) == 0 {
			wss = []string{"-"}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.User.Email, oneLine(a.User.Name), a.User.CreatedAt.UTC().Format("2006-01-02 15:04"),
			confirmed, mailState, strings.Join(wss, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(stdout, p)
	}
	if len(problems) > 0 {
		fmt.Fprintln(stdout, "MAIL \"undelivered\": the account's newest reset or confirmation link could not be mailed (yet); check the mail settings and the address, then issue a new link (admin reset-link).")
	}
	fmt.Fprintf(stdout, "%d %s. CONFIRMED is when a link mailed to the address was opened; \"no\": nobody has shown they receive its mail.\n",
		len(accounts), map[bool]string{true: "account", false: "accounts"}[len(accounts) == 1])
	return nil
}

// oneLine keeps a name typed by a person from breaking the table (or
// moving the terminal's cursor): control characters become spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}

// operatorResetLink issues a reset link for any account and prints it, or
// mails it to the account's address.
func operatorResetLink(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := newCommand("admin reset-link", getenv, stderr)
	email := fs.String("email", "", "the account's address")
	base := fs.String("base-url", getenv("BATCHEVAL_BASE_URL"), "the address people open the dashboard at, e.g. https://batcheval.example.com (env BATCHEVAL_BASE_URL)")
	send := fs.Bool("mail", false, "queue a mail of the link to the account's address, sent by a serve or worker with BATCHEVAL_SMTP_URL (needs it set here too), instead of printing it")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if strings.TrimSpace(*email) == "" {
		return errors.New("admin reset-link needs --email: the address of the account (`batcheval admin list-users` lists them)")
	}
	baseURL, err := checkBaseURL(*base)
	if err != nil {
		return err
	}
	var mailer *mail.SMTP
	if *send {
		if mailer, err = mail.FromEnv(getenv); err != nil {
			return err
		}
		if mailer == nil {
			return errors.New("--mail needs mail configured: set BATCHEVAL_SMTP_URL (and BATCHEVAL_MAIL_FROM), or leave --mail out and hand the printed link over")
		}
		if baseURL == "" {
			return errors.New("--mail needs --base-url (or BATCHEVAL_BASE_URL): a mailed link must name the server")
		}
	}
	db, err := openDB(ctx, c, c.logger(stderr))
	if err != nil {
		return err
	}
	defer db.Close()
	if mailer != nil {
		// Queued like the web's mails (runner/mail.go): a serve or worker
		// with the mail settings sends it, and tries again when the relay
		// will not take it now; this command does not wait for the relay.
		r, err := runner.New(runner.Config{DB: db, Log: c.logger(stderr)})
		if err != nil {
			return err
		}
		u, _, err := db.OperatorPasswordReset(ctx, *email, models.ResetTTL, r.MailQueue(models.LinkReset, baseURL))
		if err != nil {
			return fmt.Errorf("--email %s: %s", *email, models.ErrorMessage(err))
		}
		r.MailQueued()
		fmt.Fprintf(stdout, "Queued a password reset link's mail to %s <%s> (valid %s, single use): a `serve` or `worker` started with %s sends it, "+
			"trying again for about four hours while the mail server will not take it. If it cannot be delivered, `batcheval admin list-users` marks the account MAIL undelivered, with the reason.\n",
			oneLine(u.Name), u.Email, durationWords(models.ResetTTL), mail.EnvURL)
		return nil
	}
	u, token, err := db.OperatorPasswordReset(ctx, *email, models.ResetTTL)
	if err != nil {
		return fmt.Errorf("--email %s: %s", *email, models.ErrorMessage(err))
	}
	link := baseURL + "/reset/" + token
	fmt.Fprintf(stdout, "Password reset link for %s <%s> (valid %s, single use):\n%s\n", oneLine(u.Name), u.Email, durationWords(models.ResetTTL), link)
	if baseURL == "" {
		fmt.Fprintln(stdout, "Put the dashboard's address before it (or give --base-url). Hand it over yourself: whoever opens it sets the password.")
	}
	fmt.Fprintln(stdout, "Setting the password signs out every session of the account; its API tokens keep working.")
	return nil
}

// checkBaseURL reads --base-url: "" or an http(s) address without a path,
// query or credentials, returned without a trailing slash.
func checkBaseURL(s string) (string, error) {
	s = strings.TrimRight(strings.TrimSpace(s), "/")
	if s == "" {
		return "", nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("--base-url %q is not the dashboard's address: give one like https://batcheval.example.com", s)
	}
	return s, nil
}

// durationWords says 24h as "24 hours".
func durationWords(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%d hours", int(d/time.Hour))
	}
	return d.String()
}

// releaseAddress frees an address held by an account without the right to.
func releaseAddress(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs, c := newCommand("admin release-address", getenv, stderr)
	email := fs.String("email", "", "the address to release")
	reason := fs.String("reason", "", "why, for the audit log (e.g. \"registered by someone else; ticket 42\")")
	transferTo := fs.String("transfer-to", "", "the account that becomes owner of the workspaces the released account is the only owner of")
	if err := c.parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	if strings.TrimSpace(*email) == "" {
		return errors.New("admin release-address needs --email: the address to release (`batcheval admin list-users` lists them)")
	}
	db, err := openDB(ctx, c, c.logger(stderr))
	if err != nil {
		return err
	}
	defer db.Close()
	r, err := db.ReleaseAddress(ctx, *email, *reason, *transferTo)
	if err != nil {
		return fmt.Errorf("--email %s: %s (nothing was changed)", *email, models.ErrorMessage(err))
	}
	fmt.Fprintf(stdout, "Released %s: the account %d (%s) is now %s; its sessions are signed out, its password no longer works, %d API %s and %d share %s revoked.\n",
		r.Email, r.UserID, oneLine(r.Name), r.NewEmail, r.Tokens, map[bool]string{true: "token", false: "tokens"}[r.Tokens == 1],
		r.Shares, map[bool]string{true: "link", false: "links"}[r.Shares == 1])
	if len(r.Transferred) > 0 {
		fmt.Fprintf(stdout, "%s is now the owner of %s.\n", r.TransferredTo, strings.Join(quoteAll(r.Transferred), ", "))
	}
	if len(r.Workspaces) > 0 {
		fmt.Fprintf(stdout, "It is no longer a member of %s (its ratings and runs stay); each of those audit logs records the release.\n", strings.Join(quoteAll(r.Workspaces), ", "))
	}
	fmt.Fprintf(stdout, "%s can now be registered by its owner (an invite link, or `batcheval admin create-user`). Should the account have been theirs, `batcheval admin reset-link --email %s` gives it a new password.\n",
		r.Email, r.NewEmail)
	return nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
