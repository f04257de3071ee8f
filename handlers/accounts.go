package handlers

import (
	"context"
	"errors"
	"math"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// Sign-in rate limits, counted in the database (login_attempts) so they
// hold across every server process and restarts: 5 failures for one
// address typed within 15 minutes pause that account's sign-ins, 20 from
// one client address pause that client. Slow enough to make guessing
// useless, loose enough that a person mistyping is not locked out for long.
const (
	loginWindow         = 15 * time.Minute
	maxFailsPerAccount  = 5
	maxFailsPerAddress  = 20
	maxLoginFieldLength = 1024
)

// loginNow is the clock sign-in tries are counted on; a test sets its own.
var loginNow = time.Now

// navFor builds the header's account part from the principal.
func navFor(p Principal) *web.Nav {
	if p.Kind == Anonymous {
		return nil
	}
	n := &web.Nav{UserName: p.User.Name, Local: p.Kind == LocalUser, Role: string(p.Role), Workspace: p.Workspace.ID}
	for _, w := range p.Workspaces {
		n.Workspaces = append(n.Workspaces, web.NavWorkspace{ID: w.Workspace.ID, Name: w.Workspace.Name, Role: string(w.Role)})
	}
	return n
}

// safeNext keeps a post-sign-in redirect on this site (localPath), and
// of a length an address of this site has.
func safeNext(next string) string {
	if len(next) > 2000 {
		return "/"
	}
	return localPath(next)
}

func (h *Handlers) showLogin(c echo.Context) error {
	if principalOf(c.Request().Context()).Kind != Anonymous {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	next := safeNext(c.QueryParam("next"))
	return render(c, http.StatusOK, web.LoginPage(web.LoginView{Page: page(c, "Sign in"), Email: h.inviteLoginEmail(c, next), Next: next, Mail: h.mailOn()}))
}

// inviteLoginEmail is the address to fill in on the sign-in page that
// answering an invite without signing in leads to (next is the invite's
// link): the one the answer's message names, as the invite's account has
// it. Only for the invite this browser answered (sessInviteAnswered), so
// another token, or the same link opened elsewhere, shows no address.
func (h *Handlers) inviteLoginEmail(c echo.Context, next string) string {
	ctx := c.Request().Context()
	token, ok := strings.CutPrefix(next, "/invites/")
	if !ok || token == "" || strings.ContainsAny(token, "/?#") {
		return ""
	}
	if h.Sessions.GetString(ctx, sessInviteAnswered) != models.HashLinkToken(token) {
		return ""
	}
	email, err := h.DB.InviteAnswerEmail(ctx, token)
	if err != nil {
		h.Log.Warn("read the address an invite was answered with", "err", err)
		return ""
	}
	return email
}

func (h *Handlers) login(c echo.Context) error {
	ctx := c.Request().Context()
	email := strings.ToLower(strings.TrimSpace(c.FormValue("email")))
	password := c.FormValue("password")
	next := safeNext(c.FormValue("next"))
	addr := loginClient(c.RealIP())
	fail := func(status int, msg string) error {
		return render(c, status, web.LoginPage(web.LoginView{Page: page(c, "Sign in"), Email: email, Next: next, Error: msg, Mail: h.mailOn()}))
	}
	if len(email) > maxLoginFieldLength || len(password) > maxLoginFieldLength {
		return fail(http.StatusUnprocessableEntity, "That is not an address and password we could have issued.")
	}
	// The try is recorded as failed first and then counted with the
	// others, itself included: tries sent at the same moment see each
	// other, so a burst of guesses meets the same limit as a sequence.
	now := loginNow()
	attempt, err := h.DB.BeginLoginAttempt(ctx, email, addr, now)
	if err != nil {
		return err
	}
	since := now.Add(-loginWindow)
	byAccount, byAddress, err := h.DB.RecentLoginFailures(ctx, email, addr, since)
	if err != nil {
		return err
	}
	if byAccount > maxFailsPerAccount || byAddress > maxFailsPerAddress {
		if err := h.DB.EndLoginAttempt(ctx, attempt.ID, false); err != nil {
			return err
		}
		// The pause ends when enough of the failures leave the window,
		// not a whole window after this refused try (which is not kept).
		until, err := h.DB.LoginPausedUntil(ctx, email, addr, since, loginWindow, maxFailsPerAccount, maxFailsPerAddress)
		if err != nil {
			return err
		}
		if !until.After(now) {
			until = now.Add(loginWindow) // failures made as this was counted
		}
		wait := until.Sub(now)
		c.Response().Header().Set("Retry-After", strconv.FormatInt(int64((wait+time.Second-1)/time.Second), 10))
		return fail(http.StatusTooManyRequests, loginPausedMessage(now, until))
	}
	u, err := h.DB.Authenticate(ctx, email, password)
	if err != nil {
		if models.ErrorCode(err) != models.EUnauthorized {
			return err
		}
		// The page first: the entry's writing starts once the answer is
		// made, so it does not share the request's time.
		answered := fail(http.StatusUnauthorized, models.ErrorMessage(err))
		h.auditFailedSignIn(c, email, now)
		return answered
	}
	if err := h.DB.EndLoginAttempt(ctx, attempt.ID, true); err != nil {
		return err
	}
	if err := h.startSession(c, u); err != nil {
		return err
	}
	h.auditUserWorkspaces(c, u, Principal{Kind: Account, User: u}, models.AuditSignIn, "")
	return c.Redirect(http.StatusSeeOther, next)
}

// auditFailedSignIn records a failed sign-in with the address typed in the
// audit log of every workspace of the account that has it (none for an
// unknown address), just after the fact, as the other sign-in events are.
//
// A failed sign-in must not tell a registered address from another by
// what it does (account enumeration): the answer is the same, the password
// hash checked costs the same (models.Authenticate checks a dummy hash for
// an unknown address), and so is the database work. The entry used to be
// written on the request path for a known address only (a look-up of the
// account, of its workspaces and an insert into each: a millisecond or two
// more than an unknown address). Now every failed sign-in, known address
// or not, hands the same record to a background writer that runs the same
// single statement (models.RecordFailedSignIn), once the answer is made;
// the request itself runs the same statements whatever the address.
// The try is in login_attempts already (the rate limits), so nothing is
// lost for the limits if the server stops before the entry is written.
func (h *Handlers) auditFailedSignIn(c echo.Context, email string, at time.Time) {
	ev := models.AuditEvent{Actor: Principal{Kind: Anonymous}.ActorLabel(), Address: c.RealIP(), CreatedAt: at}
	// Detached from the request, which ends before the entry is written;
	// its values (a test's statement counter) are kept. Bounded, so that
	// a database that hangs cannot hold a server's shutdown for ever.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), failedSignInAuditTimeout)
	h.signInAudits.Add(1)
	go func() {
		defer h.signInAudits.Done()
		defer cancel()
		if err := h.DB.RecordFailedSignIn(ctx, email, ev); err != nil {
			h.Log.Error("write audit log", "action", models.AuditSignInFailed, "err", err)
		}
	}()
}

// failedSignInAuditTimeout bounds the writing of a failed sign-in's audit
// entry: one indexed insert takes milliseconds; half a minute covers a
// database busy with a long write (SQLite's busy timeout is 5 s).
const failedSignInAuditTimeout = 30 * time.Second

// WaitSignInAudits waits until the failed sign-ins answered so far are in
// the audit log (auditFailedSignIn): for a server shutting down before it
// closes its database, and for tests that read the log.
func (h *Handlers) WaitSignInAudits() { h.signInAudits.Wait() }

// loginClient is the client a failed sign-in is counted against: its IPv4
// address, or the /64 network of an IPv6 one. A single IPv6 subscriber or
// server is given at least a /64 and picks any address in it, so counted
// one address at a time, each of 2^64 addresses had its own 20 failures
// and the per-client limit stopped no one guessing across accounts.
func loginClient(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is6() {
		return netip.PrefixFrom(a.WithZone(""), 64).Masked().String()
	}
	return a.String()
}

// loginPausedMessage says when sign-ins paused until `until` may be tried
// again: the minute from which they work (rounded up, in UTC as the
// product's other times) and how long that is from now.
func loginPausedMessage(now, until time.Time) string {
	from := until.UTC().Truncate(time.Minute)
	if from.Before(until) {
		from = from.Add(time.Minute)
	}
	mins := int64((from.Sub(now) + time.Minute - 1) / time.Minute)
	in := "1 minute"
	if mins > 1 {
		in = strconv.FormatInt(mins, 10) + " minutes"
	}
	return "Too many failed sign-ins: try again from " + from.Format("15:04") + " UTC (in " + in + "), or ask an owner for a password reset link."
}

// startSession signs u in: a new session id (no fixation), the account
// and its password epoch, and the first workspace as current.
func (h *Handlers) startSession(c echo.Context, u models.User) error {
	ctx := c.Request().Context()
	if prev := h.Sessions.GetInt64(ctx, sessUserID); prev != 0 && prev != u.ID {
		// Signing in over another account's session (a shared browser,
		// no sign-out first): nothing of that account's is kept, such as
		// the workspace it had chosen, which the new account's first page
		// named as one it had been removed from.
		if err := h.Sessions.Clear(ctx); err != nil {
			return err
		}
	}
	if err := h.Sessions.RenewToken(ctx); err != nil {
		return err
	}
	h.Sessions.Put(ctx, sessUserID, u.ID)
	h.Sessions.Put(ctx, sessEpoch, u.SessionEpoch)
	h.Sessions.Put(ctx, sessSeen, time.Now().UnixMilli())
	h.haveUsers.Store(true)
	// Opportunistic clean-up: no sweeper needed.
	if err := h.DB.DeleteExpiredSessions(ctx); err != nil {
		h.Log.Warn("clear expired sessions", "err", err)
	}
	return nil
}

// auditUserWorkspaces writes an event into every workspace of the user
// (sign-ins concern all of them).
func (h *Handlers) auditUserWorkspaces(c echo.Context, u models.User, p Principal, action, detail string) {
	wss, err := h.DB.ListUserWorkspaces(c.Request().Context(), u.ID)
	if err != nil {
		h.Log.Error("write audit log", "action", action, "err", err)
		return
	}
	for _, w := range wss {
		h.auditIn(c, w.Workspace.ID, p, action, u.Email, detail)
	}
}

func (h *Handlers) logout(c echo.Context) error {
	p := principalOf(c.Request().Context())
	if p.Kind == Account {
		h.auditUserWorkspaces(c, p.User, p, models.AuditSignOut, "")
	}
	if err := h.Sessions.Destroy(c.Request().Context()); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/login")
}

// ---- first setup ----

// setupOpen reports whether the first-owner page may be used.
func (h *Handlers) setupOpen(c echo.Context) (bool, error) {
	exist, err := h.usersExist(c.Request().Context())
	if err == nil && !exist && h.Network.relayed(c) {
		// Whoever sets up owns the server: only a person at this machine,
		// not a visitor of a proxy in front of it.
		return false, errSetupRelayed
	}
	return !exist, err
}

// errSetupRelayed refuses the first setup to a request a proxy relayed
// from elsewhere (NetworkPolicy.relayed).
var errSetupRelayed = echo.NewHTTPError(http.StatusForbidden, "The first setup is open only on the server's own machine, "+
	"and this request came through a proxy from elsewhere. Open /setup on the server's machine (http://127.0.0.1:<port>/setup), "+
	"or create the first owner with `batcheval admin create-user --email you@example.com --name \"Your Name\" --role owner` "+
	"against the same database.")

var errSetupClosed = models.Errorf(models.ENotFound, "Setup is done: an account exists. Sign in, or ask an owner for an invite.")

func (h *Handlers) showSetup(c echo.Context) error {
	open, err := h.setupOpen(c)
	if err != nil {
		return err
	}
	if !open {
		return errSetupClosed
	}
	return render(c, http.StatusOK, web.SetupPage(web.SetupView{Page: page(c, "First setup")}))
}

func (h *Handlers) setup(c echo.Context) error {
	open, err := h.setupOpen(c)
	if err != nil {
		return err
	}
	if !open {
		return errSetupClosed
	}
	n := models.NewUser{Email: c.FormValue("email"), Name: c.FormValue("name"), Password: c.FormValue("password")}
	if problems := n.Problems(); problems != nil {
		return render(c, http.StatusUnprocessableEntity, web.SetupPage(web.SetupView{Page: page(c, "First setup"),
			Email: n.Email, Name: n.Name, FieldErrors: fieldMessages(problems)}))
	}
	// The entry's actor is the owner made (models.CreateFirstOwner).
	u, err := h.DB.CreateFirstOwner(c.Request().Context(), h.DefaultWorkspace.ID, n, auditAs(c, h.DefaultWorkspace.ID, Principal{Kind: Anonymous},
		func(u models.User) models.AuditNote {
			return models.AuditNote{Action: models.AuditSetup, Target: u.Email, Detail: "first owner created"}
		}))
	if err != nil {
		if models.ErrorCode(err) == models.EInvalid {
			return render(c, http.StatusUnprocessableEntity, web.SetupPage(web.SetupView{Page: page(c, "First setup"),
				Email: n.Email, Name: n.Name, Error: models.ErrorMessage(err)}))
		}
		return err
	}
	if err := h.startSession(c, u); err != nil {
		return err
	}
	return redirect(c, "/", "Welcome, "+u.Name+": you own the default workspace. Invite the others from Members.")
}

// ---- invites ----

func (h *Handlers) showInvite(c echo.Context) error {
	ctx := c.Request().Context()
	token := c.Param("token")
	p := principalOf(ctx)
	inv, ws, err := h.DB.FindOpenInvite(ctx, token, accountID(p))
	if models.ErrorCode(err) == models.ENotFound {
		// Someone who answered the invite with a new account comes back
		// here once signed in (answerInvite): they have joined.
		if done, dws, found, ferr := h.DB.FindInviteJoinedBy(ctx, token, accountID(p)); ferr != nil {
			return ferr
		} else if found {
			h.Sessions.Put(ctx, sessWorkspaceID, dws.ID)
			return redirect(c, "/", "Welcome, "+p.User.Name+": you joined "+dws.Name+" as "+string(done.Role)+".")
		}
	}
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.InvitePage(h.inviteView(c, token, inv, ws)))
}

// accountID is the signed-in account's id, 0 for anyone else.
func accountID(p Principal) int64 {
	if p.Kind != Account {
		return 0
	}
	return p.User.ID
}

func (h *Handlers) inviteView(c echo.Context, token string, inv models.Invite, ws models.Workspace) web.InviteView {
	v := web.InviteView{Page: page(c, "Invitation"), Token: token, Workspace: ws.Name, Role: string(inv.Role), Mail: h.mailOn()}
	if p := principalOf(c.Request().Context()); p.Kind == Account {
		v.SignedInAs = p.User.Name + " (" + p.User.Email + ")"
		v.NeedsConfirm = h.mailOn() && p.User.EmailConfirmedAt == nil
	}
	if p := principalOf(c.Request().Context()); p.Kind == Account {
		if role, err := h.DB.MemberRole(c.Request().Context(), ws.ID, p.User.ID); err == nil {
			v.MemberAs = string(role)
		}
	}
	if v.Mail && v.SignedInAs == "" {
		// The address it was mailed to, to answer with.
		v.Email = inv.Email
	}
	return v
}

// acceptInvite joins the invite's workspace: a signed-in account at once;
// a visitor who is not signed in answers with an address, a name and a
// password (answerInvite).
func (h *Handlers) acceptInvite(c echo.Context) error {
	ctx := c.Request().Context()
	token := c.Param("token")
	p := principalOf(ctx)
	inv, ws, err := h.DB.FindOpenInvite(ctx, token, accountID(p))
	if err != nil {
		return err
	}
	if p.Kind == Account {
		if role, err := h.DB.MemberRole(ctx, ws.ID, p.User.ID); err == nil {
			// Refused before anything is done (a confirmation mailed to
			// an unconfirmed member would fail only once opened).
			return echo.NewHTTPError(http.StatusConflict, "You are already a member of "+ws.Name+" as "+string(role)+
				": this invite is not for you, and it stays unused. Pass it on to the person it was made for; to change your role, ask an owner.")
		} else if models.ErrorCode(err) != models.ENotFound {
			return err
		}
		if h.mailOn() && p.User.EmailConfirmedAt == nil {
			// Holding the link is not enough: the address must be shown
			// to be this person's first.
			return h.mailAddressConfirmation(c, p.User, token, ws.Name, "/invites/"+token)
		}
		joined := auditAs(c, ws.ID, p, noted[models.Invite](models.AuditMemberJoined, p.User.Email, "as "+string(inv.Role)+" by invite"))
		if _, err := h.DB.AcceptInvite(ctx, token, p.User.ID, joined); err != nil {
			return err
		}
		h.Sessions.Put(ctx, sessWorkspaceID, ws.ID)
		return redirect(c, "/", "You joined "+ws.Name+" as "+string(inv.Role)+".")
	}
	if h.mailOn() {
		return h.answerInviteByMail(c, token, inv, ws)
	}
	return h.answerInvite(c, token, inv, ws)
}

// answerInvite answers an invite for a visitor who is not signed in. The
// answer must not tell the holder of the link whether the address typed
// already has an account (QA: "an account with the address ... already
// exists" answered that for any address, as often as asked). So both end
// alike: a new address gets its account, which joins; an address with an
// account leaves it unchanged and keeps the invite for it
// (models.AnswerInvite). Then both are sent to sign in, with the same
// words, and come back to the link: the new account finds it has joined,
// the existing one, signed in with its own password, joins there.
func (h *Handlers) answerInvite(c echo.Context, token string, inv models.Invite, ws models.Workspace) error {
	ctx := c.Request().Context()
	n := models.NewUser{Email: c.FormValue("email"), Name: c.FormValue("name"), Password: c.FormValue("password")}
	if problems := n.Problems(); problems != nil {
		// Every field's problem at once, beside it; the password is
		// never shown again.
		v := h.inviteView(c, token, inv, ws)
		v.Email, v.Name, v.FieldErrors = n.Email, n.Name, fieldMessages(problems)
		return render(c, http.StatusUnprocessableEntity, web.InvitePage(v))
	}
	// The entry's actor is the account made (models.AnswerInvite).
	joined := auditAs(c, ws.ID, Principal{Kind: Anonymous}, func(inv models.Invite) models.AuditNote {
		return models.AuditNote{Action: models.AuditMemberJoined, Target: strings.ToLower(strings.TrimSpace(n.Email)), Detail: "as " + string(inv.Role) + " by invite"}
	})
	_, _, err := h.DB.AnswerInvite(ctx, token, n, joined)
	if models.ErrorCode(err) == models.EInvalid {
		v := h.inviteView(c, token, inv, ws)
		v.Email, v.Name, v.Error = n.Email, n.Name, models.ErrorMessage(err)
		return render(c, http.StatusUnprocessableEntity, web.InvitePage(v))
	}
	if err != nil {
		return err
	}
	h.Sessions.Put(ctx, sessInviteAnswered, models.HashLinkToken(token))
	email := strings.ToLower(strings.TrimSpace(n.Email))
	return redirect(c, "/login?next="+url.QueryEscape("/invites/"+token),
		"Now sign in as "+email+" to join "+ws.Name+": with the password you just chose, or, if that address already had an account here, with that account's own password (nothing about it was changed).")
}

// ---- password reset ----

// resetKeepsTokens says what a reset, a password change and signing out
// the other sessions leave working. A reset is mostly for a forgotten
// password, and a token is not derived from the password: revoking every
// token would stop the person's scripts and CI for no gain. For a
// compromised account, tokens are revoked one by one on the tokens page,
// which these pages point to.
const resetKeepsTokens = web.TokensKeepWorking

func (h *Handlers) showReset(c echo.Context) error {
	token := c.Param("token")
	_, u, err := h.DB.FindOpenPasswordReset(c.Request().Context(), token)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.ResetPage(web.ResetView{Page: page(c, "New password"), Token: token, Email: u.Email}))
}

func (h *Handlers) resetPassword(c echo.Context) error {
	ctx := c.Request().Context()
	token := c.Param("token")
	_, target, err := h.DB.FindOpenPasswordReset(ctx, token)
	if err != nil {
		return err
	}
	if perr := models.CheckPasswordStrength(c.FormValue("password")); perr != nil {
		return render(c, http.StatusUnprocessableEntity, web.ResetPage(web.ResetView{Page: page(c, "New password"),
			Token: token, Email: target.Email, FieldErrors: fieldMessages(map[string]string{"password": models.ErrorMessage(perr)})}))
	}
	u, err := h.DB.ResetPassword(ctx, token, c.FormValue("password"), auditAs(c, 0, Principal{Kind: Account, User: target},
		func(u models.User) models.AuditNote {
			return models.AuditNote{Action: models.AuditPasswordReset, Target: u.Email}
		}))
	if err != nil {
		if models.ErrorCode(err) == models.EInvalid {
			return render(c, http.StatusUnprocessableEntity, web.ResetPage(web.ResetView{Page: page(c, "New password"),
				Token: token, Email: target.Email, Error: models.ErrorMessage(err)}))
		}
		return err
	}
	// Whoever was signed in in this browser is replaced by the account
	// whose password was just set.
	if err := h.startSession(c, u); err != nil {
		return err
	}
	return redirect(c, "/", "Your password is set and every other session is signed out. "+resetKeepsTokens)
}

// ---- account and workspaces ----

// accountView is the account page of the request's principal.
func (h *Handlers) accountView(c echo.Context) web.AccountView {
	p := principalOf(c.Request().Context())
	v := web.AccountView{Page: page(c, "Your account"), Workspaces: p.Workspaces, Mail: h.mailOn()}
	if p.Kind == Account {
		v.Account, v.Name, v.Email, v.Confirmed = true, p.User.Name, p.User.Email, p.User.EmailConfirmedAt != nil
		v.NameInput = p.User.Name
		if h.mailOn() {
			// A link mailed to the account that did not arrive: said here,
			// to its holder only (the sign-in page's "Forgot password?"
			// tells nobody whether an address has an account).
			undelivered, err := h.DB.UndeliveredMails(c.Request().Context(), []int64{p.User.ID})
			if err != nil {
				h.Log.Warn("account page: undelivered mail", "err", err)
			} else if u, ok := undelivered[p.User.ID]; ok {
				v.Undelivered = &u
			}
		}
	}
	return v
}

func (h *Handlers) showAccount(c echo.Context) error {
	return render(c, http.StatusOK, web.AccountPage(h.accountView(c)))
}

var errNoAccount = models.Errorf(models.EInvalid, "the local user has no account or password: create the first account at /setup first")

// changePassword changes the signed-in person's own password, given their
// current one. Wrong current passwords are counted per session, and the
// session is signed out after maxWrongCurrentPasswords, so this form is no
// way around the sign-in limit, nor a way for a stolen session to pause
// the owner's sign-ins. The change signs out every other
// session (this one continues under a new id) and ends the account's
// open reset links; API tokens keep working, as after a reset.
func (h *Handlers) changePassword(c echo.Context) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	if p.Kind != Account {
		return errNoAccount
	}
	current, next, again := c.FormValue("current_password"), c.FormValue("new_password"), c.FormValue("new_password_again")
	refuse := func(status int, field, msg string) error {
		v := h.accountView(c)
		v.FieldErrors = map[string][]string{field: {msg}}
		return render(c, status, web.AccountPage(v))
	}
	// What can be told without the current password is told first, every
	// field's problem at once, and spends no try.
	problems := map[string]string{}
	if current == "" {
		problems["current_password"] = "Type your current password."
	}
	if next == "" {
		problems["new_password"] = "Type the new password."
	} else if err := models.CheckPasswordStrength(next); err != nil {
		problems["new_password"] = upperFirst(models.ErrorMessage(err)) + "."
	} else if again != next {
		problems["new_password_again"] = "The two new passwords differ: type the same one twice."
	}
	if len(problems) > 0 {
		v := h.accountView(c)
		v.FieldErrors = map[string][]string{}
		for field, msg := range problems {
			v.FieldErrors[field] = []string{msg}
		}
		return render(c, http.StatusUnprocessableEntity, web.AccountPage(v))
	}
	// Wrong current passwords are counted for this session, not with the
	// account's failed sign-ins: a stolen session guessing here would
	// otherwise pause the owner's own sign-ins. Too many end the session;
	// a new one takes a sign-in, which /login's limits hold.
	sessionKey := models.HashLinkToken(h.Sessions.Token(ctx))
	try, tries, err := h.DB.BeginCurrentPasswordTry(ctx, sessionKey, sessionLifetime)
	if err != nil {
		return err
	}
	if tries > maxWrongCurrentPasswords {
		return h.endSessionAfterWrongPasswords(c, p)
	}
	u, err := h.DB.ChangePassword(ctx, p.User.ID, current, next, auditOf(c, func(u models.User) models.AuditNote {
		return models.AuditNote{Action: models.AuditPasswordChanged, Target: u.Email, Detail: "other sessions signed out"}
	}))
	switch models.ErrorCode(err) {
	case "":
	case models.EUnauthorized:
		h.auditUserWorkspaces(c, p.User, p, models.AuditPasswordChangeFailed, "wrong current password")
		if tries >= maxWrongCurrentPasswords {
			return h.endSessionAfterWrongPasswords(c, p)
		}
		return refuse(http.StatusUnprocessableEntity, "current_password", "That is not your current password.")
	case models.EInvalid:
		if endErr := h.DB.EndCurrentPasswordTry(ctx, try.ID); endErr != nil {
			return endErr
		}
		return refuse(http.StatusUnprocessableEntity, "new_password", upperFirst(models.ErrorMessage(err))+".")
	default:
		return err
	}
	if err := h.DB.ForgetCurrentPasswordTries(ctx, sessionKey); err != nil {
		return err
	}
	if err := h.startSession(c, u); err != nil {
		return err
	}
	return redirect(c, "/account", "Your password is changed and your other sessions are signed out. "+resetKeepsTokens)
}

// changeName changes the signed-in person's own display name: the name
// the members of their workspaces see and reports key their browser
// ratings by (models.RenameUser). A refused name shows the form again with
// the name as typed and the reason beside it, and changes nothing.
func (h *Handlers) changeName(c echo.Context) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	if p.Kind != Account {
		return errNoAccount
	}
	typed := c.FormValue("name")
	r, err := h.DB.RenameUser(ctx, p.User.ID, typed, models.AuditEvent{ActorUserID: p.userID(), Actor: p.ActorLabel(), Address: c.RealIP()})
	if models.ErrorCode(err) == models.EInvalid {
		v := h.accountView(c)
		v.NameInput, v.FieldErrors = typed, fieldMessages(map[string]string{"display_name": models.ErrorMessage(err)})
		return render(c, http.StatusUnprocessableEntity, web.AccountPage(v))
	}
	if err != nil {
		return err
	}
	if r.Old == r.User.Name {
		return redirect(c, "/account", "Your display name is already "+web.Quoted(r.User.Name)+": nothing changed.")
	}
	return redirect(c, "/account", "Your display name is now "+web.Quoted(r.User.Name)+" (it was "+web.Quoted(r.Old)+
		"): your workspaces' members and every report naming your browser ratings show it from now on.")
}

// maxWrongCurrentPasswords is how many wrong current passwords one
// session may type to change its password before it is signed out: as
// many as a sign-in may fail before the account pauses, so a person who
// mistypes gets the same room, and a stolen session gets no more guesses
// than /login gives.
const maxWrongCurrentPasswords = maxFailsPerAccount

// endSessionAfterWrongPasswords signs the session out after too many wrong
// current passwords, says so in the audit log, and sends the person to
// sign in again. The account itself is not paused: its owner signs in as
// usual.
func (h *Handlers) endSessionAfterWrongPasswords(c echo.Context, p Principal) error {
	ctx := c.Request().Context()
	h.auditUserWorkspaces(c, p.User, p, models.AuditSignOut, "session ended after "+strconv.Itoa(maxWrongCurrentPasswords)+" wrong current passwords")
	// The session's tries stay stored (cleared with age): a try racing
	// this one still counts them.
	if err := h.Sessions.Destroy(ctx); err != nil {
		return err
	}
	return redirect(c, "/login", "Signed out: "+strconv.Itoa(maxWrongCurrentPasswords)+" wrong current passwords were typed in this session. Sign in again to change your password.")
}

// signOutOtherSessions ends every other session of the signed-in account;
// this one continues under a new id.
func (h *Handlers) signOutOtherSessions(c echo.Context) error {
	p := principalOf(c.Request().Context())
	if p.Kind != Account {
		return errNoAccount
	}
	u, err := h.DB.EndOtherSessions(c.Request().Context(), p.User.ID, auditOf(c, func(u models.User) models.AuditNote {
		return models.AuditNote{Action: models.AuditOtherSessionsEnded, Target: u.Email}
	}))
	if err != nil {
		return err
	}
	if err := h.startSession(c, u); err != nil {
		return err
	}
	return redirect(c, "/account", "Your other sessions are signed out; this one stays signed in. "+resetKeepsTokens)
}

func (h *Handlers) switchWorkspace(c echo.Context) error {
	p := principalOf(c.Request().Context())
	id, err := strconv.ParseInt(c.FormValue("workspace_id"), 10, 64)
	if err != nil {
		return models.Errorf(models.EInvalid, "choose a workspace")
	}
	for _, w := range p.Workspaces {
		if w.Workspace.ID == id {
			if p.Kind == Account {
				h.Sessions.Put(c.Request().Context(), sessWorkspaceID, id)
			}
			return redirect(c, "/", "You are working in "+w.Workspace.Name+".")
		}
	}
	return models.Errorf(models.ENotFound, "you are not a member of workspace %d", id)
}

func (h *Handlers) createWorkspace(c echo.Context) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	if p.Kind != Account {
		return models.Errorf(models.EInvalid, "workspaces are for accounts: create the first owner at /setup first")
	}
	// The entry goes in the new workspace's log (models.CreateWorkspace).
	ws, err := h.DB.CreateWorkspace(ctx, c.FormValue("name"), p.User.ID, auditAs(c, 0, p, func(ws models.Workspace) models.AuditNote {
		return models.AuditNote{Action: models.AuditWorkspaceCreate, Target: ws.Name}
	}))
	if err != nil {
		if models.ErrorCode(err) == models.EInvalid {
			// Every refusal here is of the name typed: said beside it.
			v := h.accountView(c)
			v.WorkspaceName = c.FormValue("name")
			v.FieldErrors = map[string][]string{"ws-name": {models.ErrorMessage(err)}}
			return render(c, http.StatusUnprocessableEntity, web.AccountPage(v))
		}
		return err
	}
	// CreateWorkspace wrote the workspace, its simulated judge and the
	// owner's membership in one transaction: nothing after it may fail
	// the request, or the person would be told it failed while the
	// workspace stands (tryout46).
	h.Sessions.Put(ctx, sessWorkspaceID, ws.ID)
	return redirect(c, "/", "Workspace "+ws.Name+" created: you are its owner.")
}

// ---- members (owners) ----

func (h *Handlers) showMembers(c echo.Context) error {
	return h.renderMembers(c, http.StatusOK, "", "", "")
}

func (h *Handlers) renderMembers(c echo.Context, status int, onceLink, onceWhat, errText string) error {
	return h.renderMembersView(c, status, web.MembersView{OnceLink: onceLink, OnceLinkWhat: onceWhat, Error: errText})
}

// renderMembersView is the Members page with what v says beyond the
// workspace's members, invites and raters, which it reads.
func (h *Handlers) renderMembersView(c echo.Context, status int, v web.MembersView) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	ms, err := h.DB.ListMembers(ctx, p.Workspace.ID)
	if err != nil {
		return err
	}
	invs, err := h.DB.ListOpenInvites(ctx, p.Workspace.ID)
	if err != nil {
		return err
	}
	shares, err := h.DB.LiveShareLinksByMaker(ctx, p.Workspace.ID)
	if err != nil {
		return err
	}
	raters, err := h.DB.ListRaters(ctx, p.Workspace.ID)
	if err != nil {
		return err
	}
	var undelivered map[int64]models.UndeliveredMail
	if h.mailOn() && len(ms) > 0 {
		ids := make([]int64, len(ms))
		for i, m := range ms {
			ids[i] = m.User.ID
		}
		if undelivered, err = h.DB.UndeliveredMails(ctx, ids); err != nil {
			return err
		}
	}
	// One-time links must not be cached anywhere on the way back.
	c.Response().Header().Set("Cache-Control", "no-store")
	v.Page, v.Members, v.Invites, v.MeID, v.LiveShares, v.Raters, v.Mail, v.Undelivered = page(c, "Members"), ms, invs, p.User.ID, shares, raters, h.mailOn(), undelivered
	return render(c, status, web.MembersPage(v))
}

// absoluteURL makes a link to paste into a message.
func absoluteURL(c echo.Context, path string) string {
	return c.Scheme() + "://" + c.Request().Host + path
}

func (h *Handlers) createInvite(c echo.Context) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	role, err := models.ParseRole(c.FormValue("role"))
	if err != nil {
		return err
	}
	var by int64
	if p.Kind == Account {
		by = p.User.ID
	}
	email := strings.TrimSpace(c.FormValue("email"))
	if email != "" && !h.mailOn() {
		return h.renderMembers(c, http.StatusUnprocessableEntity, "", "", "This server sends no mail, so an invite cannot be mailed: leave the address empty and hand the link over yourself.")
	}
	var queue models.QueueLinkMail
	if email != "" {
		queue = h.mailQueue(c, models.LinkInvite)
	}
	made := auditOf(c, func(inv models.Invite) models.AuditNote {
		detail := "role " + string(role)
		if inv.Email != "" {
			detail += ", mailed to " + inv.Email
		}
		return models.AuditNote{Action: models.AuditInviteCreated, Target: "invite " + strconv.FormatInt(inv.ID, 10), Detail: detail}
	})
	inv, token, err := h.DB.CreateInviteFor(ctx, p.Workspace.ID, role, by, models.InviteTTL, email, made, queue)
	if models.ErrorCode(err) == models.EInvalid {
		// The address typed is refused: said beside it, kept as typed.
		return h.renderMembersView(c, http.StatusUnprocessableEntity, web.MembersView{InviteEmail: email,
			FieldErrors: map[string][]string{"invite-email": {models.ErrorMessage(err) + "."}}})
	}
	var limited *models.InviteLimitError
	if errors.As(err, &limited) {
		wait := int(math.Ceil(time.Until(limited.RetryAt).Seconds()))
		c.Response().Header().Set("Retry-After", strconv.Itoa(max(wait, 1)))
		return h.renderMembers(c, http.StatusTooManyRequests, "", "", limited.Error())
	}
	if err != nil {
		return err
	}
	link := absoluteURL(c, "/invites/"+token)
	if inv.Email != "" {
		h.Runner.MailQueued()
		return redirect(c, "/members", "The invite link is on its way to "+inv.Email+" (it works once, for 7 days). Whoever opens it confirms their own address by mail before joining. If the mail cannot be delivered, the invite below says why and can show you the link instead.")
	}
	return h.renderMembers(c, http.StatusOK, link, "Invite link for a new "+string(role)+".", "")
}

// showInviteLink shows the owner an invite's link when its mail could not
// be delivered (Members says why): a new link, so the one mailed, if it
// arrives after all, no longer works.
func (h *Handlers) showInviteLink(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	inv, token, err := h.DB.ShowInviteLink(c.Request().Context(), h.workspaceID(c), id, auditOf(c, func(inv models.Invite) models.AuditNote {
		return models.AuditNote{Action: models.AuditInviteCreated, Target: "invite " + strconv.FormatInt(id, 10), Detail: "link shown to the owner instead of mailed to " + inv.Email}
	}))
	if err != nil {
		return err
	}
	return h.renderMembers(c, http.StatusOK, absoluteURL(c, "/invites/"+token), "Invite link for a new "+string(inv.Role)+
		", meant for "+inv.Email+": hand it over yourself (the link mailed before no longer works).", "")
}

// resendInviteAnswers mails again the confirmation links of an invite's
// answers whose mail could not be delivered (a relay that was down for
// hours, a mailbox that was full), to the addresses answered with.
func (h *Handlers) resendInviteAnswers(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	var queue models.QueueLinkMail // nil: no mail (refused once the invite is found)
	if h.mailOn() {
		// A mail still being retried is sent now rather than twice.
		queue = h.Runner.MailAgain(models.LinkConfirm, h.mailBase(c))
	}
	sent, err := h.DB.ResendInviteAnswerMails(c.Request().Context(), h.workspaceID(c), id, queue, auditOf(c, func(sent []string) models.AuditNote {
		return models.AuditNote{Action: models.AuditInviteMailResent, Target: "invite " + strconv.FormatInt(id, 10), Detail: "confirmation mail sent again to " + strings.Join(sent, ", ")}
	}))
	if models.ErrorCode(err) == models.EConflict {
		return h.renderMembers(c, http.StatusConflict, "", "", models.ErrorMessage(err))
	}
	if err != nil {
		return err
	}
	h.Runner.MailQueued()
	to := strings.Join(sent, ", ")
	return redirect(c, "/members", "The confirmation mail is on its way again to "+to+". If it cannot be delivered this time either, the invite below says why: check the address with the person.")
}

func (h *Handlers) revokeInvite(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	revoked := auditOf(c, noted[struct{}](models.AuditInviteRevoked, "invite "+strconv.FormatInt(id, 10), ""))
	if err := h.DB.RevokeInvite(c.Request().Context(), h.workspaceID(c), id, revoked); err != nil {
		return err
	}
	return redirect(c, "/members", "Invite revoked.")
}

// findMember loads the member named by the path, in this workspace only.
func (h *Handlers) findMember(c echo.Context) (models.User, models.Role, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return models.User{}, "", err
	}
	ctx := c.Request().Context()
	role, err := h.DB.MemberRole(ctx, h.workspaceID(c), id)
	if err != nil {
		return models.User{}, "", err
	}
	u, err := h.DB.FindUser(ctx, id)
	return u, role, err
}

func (h *Handlers) changeRole(c echo.Context) error {
	u, old, err := h.findMember(c)
	if err != nil {
		return err
	}
	role, err := models.ParseRole(c.FormValue("role"))
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	var invites int64
	if old == models.RoleOwner && role != models.RoleOwner {
		if invites, err = h.DB.CountOpenInvitesBy(ctx, h.workspaceID(c), u.ID); err != nil {
			return err
		}
	}
	detail, msg := string(old)+" → "+string(role), u.Name+" is now "+string(role)+"."
	if invites > 0 {
		detail += "; " + invitesEnded(invites)
		msg += " " + invitesEndedSentence(invites)
	}
	if err := h.DB.SetMemberRole(ctx, h.workspaceID(c), u.ID, role, auditOf(c, noted[struct{}](models.AuditMemberRole, u.Email, detail))); err != nil {
		if models.ErrorCode(err) == models.EConflict {
			return h.renderMembers(c, http.StatusConflict, "", "", models.ErrorMessage(err))
		}
		return err
	}
	if self := principalOf(ctx); self.Kind == Account && self.User.ID == u.ID && role != models.RoleOwner {
		// An owner who handed the workspace over and lowered their own
		// role may no longer open Members (it answered 403).
		msg = "You are now " + string(role) + " in " + self.Workspace.Name + ": only its owners manage its members. " + strings.TrimPrefix(msg, u.Name+" is now "+string(role)+". ")
		return redirect(c, "/", strings.TrimSpace(msg))
	}
	return redirect(c, "/members", msg)
}

// invitesEnded counts the open invites a member made that ended when
// they stopped being an owner (models.inviteMakerOwns), for the audit log;
// invitesEndedSentence says it to the owner who made the change.
func invitesEnded(n int64) string {
	return web.Count(int(n)) + " open " + plural(int(n), "invite", "invites") + " they made ended"
}

func invitesEndedSentence(n int64) string {
	return "The " + web.Count(int(n)) + " open " + plural(int(n), "invite they made no longer works", "invites they made no longer work") +
		": only an owner's invites do."
}

// removeMember takes a member out of the workspace. The form offers, ticked,
// to revoke the share links they made that still open (they hold those
// addresses, which open without an account); the links left open are
// counted in the message, with where to revoke them.
func (h *Handlers) removeMember(c echo.Context) error {
	u, old, err := h.findMember(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	var invites int64
	if old == models.RoleOwner {
		if invites, err = h.DB.CountOpenInvitesBy(ctx, h.workspaceID(c), u.ID); err != nil {
			return err
		}
	}
	revokeShares := c.FormValue("revoke_shares") != ""
	// The links they made that open now: those not revoked with the
	// membership stay open, which the entry and the message say.
	live, err := h.DB.LiveShareLinksByMaker(ctx, h.workspaceID(c))
	if err != nil {
		return err
	}
	left := live[u.ID]
	if revokeShares {
		left = 0
	}
	links := func(n int) string { return web.Count(n) + " " + plural(n, "share link", "share links") }
	describe := func(revoked int64) (detail, msg string) {
		detail, msg = "was "+string(old), u.Name+" was removed from this workspace."
		if revoked > 0 {
			detail += "; " + links(int(revoked)) + " they made revoked"
			msg += " The " + links(int(revoked)) + " they made " + plural(int(revoked), "was", "were") + " revoked."
		}
		if left > 0 {
			detail += "; " + links(left) + " they made left open"
			msg += " " + links(left) + " they made still " + plural(left, "opens", "open") + " without an account: revoke " + plural(left, "it", "them") + " under Share links if " + plural(left, "it", "they") + " should not."
		}
		if invites > 0 {
			detail += "; " + invitesEnded(invites)
			msg += " " + invitesEndedSentence(invites)
		}
		return detail, msg
	}
	revoked, err := h.DB.RemoveMember(ctx, h.workspaceID(c), u.ID, revokeShares, auditOf(c, func(revoked int64) models.AuditNote {
		detail, _ := describe(revoked)
		return models.AuditNote{Action: models.AuditMemberRemoved, Target: u.Email, Detail: detail}
	}))
	if err != nil {
		if models.ErrorCode(err) == models.EConflict {
			return h.renderMembers(c, http.StatusConflict, "", "", models.ErrorMessage(err))
		}
		return err
	}
	_, msg := describe(revoked)
	raters, err := h.DB.ListRaters(ctx, h.workspaceID(c))
	if err != nil {
		return err
	}
	for _, r := range raters {
		if r.User.ID == u.ID && r.Ratings > 0 && r.Excluded == nil {
			// Their ratings stay (models.SetRatingsExcluded says why).
			msg += " Their " + web.Count(int(r.Ratings)) + " browser " + plural(int(r.Ratings), "rating", "ratings") + " still " + plural(int(r.Ratings), "counts", "count") +
				" in the human ratings, marked as by someone no longer a member: to leave them out, exclude them under Browser ratings by person."
		}
	}
	if self := principalOf(ctx); self.Kind == Account && self.User.ID == u.ID {
		// An owner who left: Members is no longer theirs to open (it
		// answered 403). Their other workspaces, else their account page,
		// where they can make one.
		msg = "You left " + self.Workspace.Name + "." + strings.TrimPrefix(msg, u.Name+" was removed from this workspace.")
		wss, err := h.DB.ListUserWorkspaces(ctx, u.ID)
		if err != nil {
			return err
		}
		if len(wss) == 0 {
			return redirect(c, "/account", msg+" You belong to no workspace now: ask an owner for an invite, or create one here.")
		}
		return redirect(c, "/", msg)
	}
	return redirect(c, "/members", msg)
}

// setRatingsExcluded excludes a person's browser ratings from the
// workspace's human ratings, or counts them again (exclude=1 or 0): a
// former member's as well as a member's (models.SetRatingsExcluded).
func (h *Handlers) setRatingsExcluded(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	raters, err := h.DB.ListRaters(ctx, h.workspaceID(c))
	if err != nil {
		return err
	}
	i := slices.IndexFunc(raters, func(r models.Rater) bool { return r.User.ID == id })
	if i < 0 {
		// Only someone who rated here: any other account, of this
		// workspace or another, is not found.
		return models.Errorf(models.ENotFound, "no one who rated in this workspace has the id %d", id)
	}
	u := raters[i].User
	var exclude bool
	switch c.FormValue("exclude") {
	case "1":
		exclude = true
	case "0":
	default:
		return models.Errorf(models.EInvalid, "exclude is 1 (leave the person's ratings out) or 0 (count them again), not %s", web.Quoted(c.FormValue("exclude")))
	}
	action, msg := models.AuditRatingsCounted, "The browser ratings of "+u.Name+" count again in every report, the alignment, the exports and the API."
	if exclude {
		action, msg = models.AuditRatingsExcluded, "The browser ratings of "+u.Name+" are left out of every report, the alignment, the exports and the API; their reviews stay listed, marked as excluded."
	}
	if err := h.DB.SetRatingsExcluded(ctx, h.workspaceID(c), u.ID, exclude, principalOf(ctx).ActorLabel(), auditOf(c, noted[struct{}](action, u.Email, ""))); err != nil {
		return err
	}
	return redirect(c, "/members#ratings", msg)
}

func (h *Handlers) issueReset(c echo.Context) error {
	p := principalOf(c.Request().Context())
	u, _, err := h.findMember(c)
	if err != nil {
		return err
	}
	if p.Kind != Account {
		return models.Errorf(models.EInvalid, "password resets are issued by a signed-in owner")
	}
	var queue models.QueueLinkMail
	if h.mailOn() {
		queue = h.mailQueue(c, models.LinkReset)
	}
	detail := ""
	if h.mailOn() {
		detail = "mailed to the address"
	}
	issued := auditOf(c, noted[models.PasswordReset](models.AuditResetIssued, u.Email, detail))
	_, token, err := h.DB.IssuePasswordReset(c.Request().Context(), p.User.ID, u.ID, models.ResetTTL, issued, queue)
	if err != nil {
		if models.ErrorCode(err) == models.EUnauthorized {
			return h.renderMembers(c, http.StatusForbidden, "", "", models.ErrorMessage(err))
		}
		return err
	}
	link := absoluteURL(c, "/reset/"+token)
	if h.mailOn() {
		h.Runner.MailQueued()
		return redirect(c, "/members", "A password reset link is on its way to "+u.Name+" at "+u.Email+" (valid 24 hours). Setting the new password signs out every session of "+u.Name+"; their API tokens keep working.")
	}
	return h.renderMembers(c, http.StatusOK, link, "Password reset link for "+u.Name+
		" (valid 24 hours). Setting the new password signs out every session of "+u.Name+"; their API tokens keep working: if the account may be compromised, revoke them on API tokens (/tokens), where owners see every member's tokens.", "")
}

// auditPageSize is how many events one page of the audit log shows.
const auditPageSize = 100

func (h *Handlers) showAudit(c echo.Context) error {
	before, _ := strconv.ParseInt(c.QueryParam("before"), 10, 64)
	evs, err := h.DB.ListAudit(c.Request().Context(), h.workspaceID(c), before, auditPageSize+1)
	if err != nil {
		return err
	}
	v := web.AuditView{Page: page(c, "Audit log"), Events: evs}
	if len(evs) > auditPageSize {
		v.Events = evs[:auditPageSize]
		v.Older = evs[auditPageSize-1].ID
	}
	return render(c, http.StatusOK, web.AuditPage(v))
}

// fieldMessages words a model's field problems (models.NewUser.Problems)
// as a form shows them beside each field, by input id: a sentence each.
func fieldMessages(problems map[string]string) map[string][]string {
	out := make(map[string][]string, len(problems))
	for field, msg := range problems {
		out[field] = []string{upperFirst(msg) + "."}
	}
	return out
}
