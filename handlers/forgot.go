package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// "Forgot password?": with mail, someone who cannot sign in types their
// address and a reset link is mailed to it if it is an account's
// confirmed address. The page answers the same, at once, whether or not
// it is: the request is only queued here, and the job that runs later
// (runner.LinkForgot) looks the address up, makes the link, audits it in
// the account's workspaces and queues its mail. So neither the words nor
// the time of the answer tell whether an address has an account.
//
// Requests are limited per address typed and per client address, counted
// in the sign-in tries' table (a request is stored as a failed try under
// "forgot:"-prefixed keys, which no sign-in counts).

const (
	forgotWindow         = time.Hour
	maxForgotsPerEmail   = 3
	maxForgotsPerAddress = 10
	forgotKey            = "forgot:"
)

// errNoForgotWithoutMail is why the form is not offered without mail.
var errNoForgotWithoutMail = models.Errorf(models.ENotFound, "this server sends no mail, so it cannot mail a reset link: ask an owner of your workspace for one, or the server's operator (batcheval admin reset-link)")

func (h *Handlers) showForgot(c echo.Context) error {
	if !h.mailOn() {
		return errNoForgotWithoutMail
	}
	return render(c, http.StatusOK, web.ForgotPage(web.ForgotView{Page: page(c, "Forgot password?")}))
}

func (h *Handlers) forgot(c echo.Context) error {
	if !h.mailOn() {
		return errNoForgotWithoutMail
	}
	ctx := c.Request().Context()
	raw := c.FormValue("email")
	fail := func(status int, msg string) error {
		return render(c, status, web.ForgotPage(web.ForgotView{Page: page(c, "Forgot password?"), Email: raw, Error: msg}))
	}
	email := strings.ToLower(strings.TrimSpace(raw))
	if len(email) > maxLoginFieldLength || !strings.Contains(email, "@") {
		// About the address typed: said beside its field.
		return render(c, http.StatusUnprocessableEntity, web.ForgotPage(web.ForgotView{Page: page(c, "Forgot password?"), Email: raw,
			FieldErrors: map[string][]string{"email": {"Type your account's address, like ada@example.com."}}}))
	}
	addr := loginClient(c.RealIP())
	now := loginNow()
	attempt, err := h.DB.BeginLoginAttempt(ctx, forgotKey+email, forgotKey+addr, now)
	if err != nil {
		return err
	}
	since := now.Add(-forgotWindow)
	byEmail, byAddress, err := h.DB.RecentLoginFailures(ctx, forgotKey+email, forgotKey+addr, since)
	if err != nil {
		return err
	}
	if byEmail > maxForgotsPerEmail || byAddress > maxForgotsPerAddress {
		if err := h.DB.EndLoginAttempt(ctx, attempt.ID, false); err != nil {
			return err
		}
		until, err := h.DB.LoginPausedUntil(ctx, forgotKey+email, forgotKey+addr, since, forgotWindow, maxForgotsPerEmail, maxForgotsPerAddress)
		if err != nil {
			return err
		}
		if !until.After(now) {
			until = now.Add(forgotWindow)
		}
		c.Response().Header().Set("Retry-After", strconv.FormatInt(int64((until.Sub(now)+time.Second-1)/time.Second), 10))
		return fail(http.StatusTooManyRequests, "Too many reset links were asked for "+email+" or from your network: try again after "+
			until.UTC().Format("15:04")+" UTC, or ask an owner of your workspace for a reset link.")
	}
	if err := h.Runner.QueueMail(ctx, runner.MailArgs{Link: runner.LinkForgot, Email: email, From: c.RealIP(), Base: h.mailBase(c)}); err != nil {
		return errMailFailed(email)
	}
	return redirect(c, "/login", "If "+email+" is the confirmed address of an account, a link to choose a new password is on its way to it (it works once, for 24 hours). "+
		"No mail after a few minutes? Look in your spam folder, or ask an owner of your workspace for a reset link.")
}
