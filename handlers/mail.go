package handlers

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// Mail, when the operator configured SMTP (Handlers.Mail), carries the
// links that people otherwise hand over: invites, password resets, and the
// links that confirm an address. With mail, an address must be confirmed
// by a mailed link before its account joins a workspace through an invite,
// so holding an invite link no longer lets someone register another
// person's address (the security review's "Mallory registers
// ceo@company.com"): answering an invite makes no account until the link
// mailed to the address is opened, and the name and password are chosen
// there.

// mailOn reports whether the server sends mail.
func (h *Handlers) mailOn() bool { return h.Mail != nil }

// mailQueue queues, in the transaction that makes a link's row, the
// link's mail (kind models.LinkInvite, LinkReset or LinkConfirm): a
// background job sends it (runner/mail.go), tried again for hours when
// the SMTP server is down or answers "try later", so the page answers at
// once. The job makes the link's token when it sends it: any token made
// with the row stops working. Call h.Runner.MailQueued() once the
// transaction has committed.
func (h *Handlers) mailQueue(c echo.Context, kind string) models.QueueLinkMail {
	return h.Runner.MailQueue(kind, h.mailBase(c))
}

// mailBase is the address a mailed link starts with: the operator's
// (MailBaseURL) when set, else the address the page was asked at.
func (h *Handlers) mailBase(c echo.Context) string {
	if h.MailBaseURL != "" {
		return h.MailBaseURL
	}
	return absoluteURL(c, "")
}

// errMailFailed is the page shown when a mail could not be queued.
func errMailFailed(to string) error {
	return echo.NewHTTPError(http.StatusServiceUnavailable, "The mail to "+to+" could not be queued: the server's database did not take it, and nothing was done. Try again in a few minutes, or ask the server's operator.")
}

// answerInviteByMail answers an invite, for a visitor who is not signed
// in, by mailing a link to the address typed; nothing else happens until
// it is opened (showConfirm). The answer reads the same whether the
// address has an account or not.
func (h *Handlers) answerInviteByMail(c echo.Context, token string, inv models.Invite, ws models.Workspace) error {
	ctx := c.Request().Context()
	ec, _, err := h.DB.AnswerInviteByMail(ctx, token, c.FormValue("email"), h.mailQueue(c, models.LinkConfirm))
	if code := models.ErrorCode(err); code == models.EInvalid || code == models.EConflict {
		v := h.inviteView(c, token, inv, ws)
		v.Email = c.FormValue("email")
		if code == models.EInvalid {
			// The address typed is refused (models' checkAddress):
			// said beside it. A conflict is about the link, above.
			v.FieldErrors = map[string][]string{"email": {models.ErrorMessage(err)}}
		} else {
			v.Error = models.ErrorMessage(err)
		}
		return render(c, http.StatusUnprocessableEntity, web.InvitePage(v))
	}
	if err != nil {
		h.Log.Warn("answer an invite by mail", "err", err)
		return errMailFailed(c.FormValue("email"))
	}
	h.Runner.MailQueued()
	return redirect(c, "/invites/"+token, "A link is on its way to "+ec.Email+". Open it to finish joining "+ws.Name+
		" (it works for 48 hours): nothing is done until then.")
}

// mailAddressConfirmation mails the signed-in account a link that
// confirms its address and, with an invite token, joins that invite's
// workspace; back is where the person is sent with the message.
func (h *Handlers) mailAddressConfirmation(c echo.Context, u models.User, inviteToken, workspace, back string) error {
	ec, _, err := h.DB.RequestAddressConfirmation(c.Request().Context(), u.ID, inviteToken, h.mailQueue(c, models.LinkConfirm))
	var limited *models.ConfirmLimitError
	if errors.As(err, &limited) {
		c.Response().Header().Set("Retry-After", strconv.Itoa(max(int(math.Ceil(time.Until(limited.RetryAt).Seconds())), 1)))
		return echo.NewHTTPError(http.StatusTooManyRequests, limited.Error())
	}
	if code := models.ErrorCode(err); code == models.EInvalid || code == models.ENotFound {
		return err
	} else if err != nil {
		h.Log.Warn("ask for a confirmation link", "err", err)
		return errMailFailed(u.Email)
	}
	h.Runner.MailQueued()
	msg := "A link is on its way to " + ec.Email + ": open it to confirm your address (it works for 48 hours)."
	if workspace != "" {
		msg = "To join " + workspace + " your address must be confirmed first: a link is on its way to " + ec.Email +
			". Opening it confirms the address and joins the workspace (it works for 48 hours)."
	}
	return redirect(c, back, msg)
}

// confirmView is the page behind a confirmation link for this visitor.
func (h *Handlers) confirmView(c echo.Context, token string, t models.ConfirmationTarget) web.ConfirmView {
	v := web.ConfirmView{Page: page(c, "Confirm your address"), Token: token, Email: t.Confirmation.Email}
	if t.Invite != nil {
		v.Workspace, v.Role = t.Workspace.Name, string(t.Invite.Role)
	}
	p := principalOf(c.Request().Context())
	switch {
	case p.Kind == Account && p.User.Email == t.Confirmation.Email:
		v.Mode = web.ConfirmSignedIn
	case p.Kind == Account:
		v.Mode, v.SignedInAs = web.ConfirmOtherAccount, p.User.Email
	case t.Account != nil:
		// Only whoever receives the address's mail learns here that it
		// has an account.
		v.Mode = web.ConfirmSignIn
	default:
		v.Mode = web.ConfirmNewAccount
	}
	return v
}

// showConfirm shows what a mailed link does; only its form (a POST) does
// it, so a mail scanner that fetches links changes nothing.
func (h *Handlers) showConfirm(c echo.Context) error {
	token := c.Param("token")
	t, err := h.DB.FindOpenConfirmation(c.Request().Context(), token)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.ConfirmPage(h.confirmView(c, token, t)))
}

// confirm uses a mailed link: a signed-in account with its address
// confirms it (and joins the workspace of the invite it answered); a
// visitor makes the account the invite was answered for, with the name
// and password typed here.
func (h *Handlers) confirm(c echo.Context) error {
	ctx := c.Request().Context()
	token := c.Param("token")
	t, err := h.DB.FindOpenConfirmation(ctx, token)
	if err != nil {
		return err
	}
	v := h.confirmView(c, token, t)
	p := principalOf(ctx)
	switch v.Mode {
	case web.ConfirmSignedIn:
		u, joined, err := h.DB.ConfirmAddress(ctx, token, p.User.ID, auditAs(c, 0, p, joinedByMail(p.User.Email)))
		if err != nil {
			return err
		}
		if joined == nil {
			return redirect(c, "/account", "Your address "+u.Email+" is confirmed.")
		}
		h.Sessions.Put(ctx, sessWorkspaceID, joined.WorkspaceID)
		return redirect(c, "/", "Your address "+u.Email+" is confirmed and you joined "+t.Workspace.Name+" as "+string(joined.Role)+".")
	case web.ConfirmNewAccount:
		// Name and password checked together, each problem beside its
		// field (the address is the one mailed, fine by now).
		n := models.NewUser{Email: t.Confirmation.Email, Name: c.FormValue("name"), Password: c.FormValue("password")}
		if problems := n.Problems(); problems["name"] != "" || problems["password"] != "" {
			delete(problems, "email")
			v.Name, v.FieldErrors = n.Name, fieldMessages(problems)
			return render(c, http.StatusUnprocessableEntity, web.ConfirmPage(v))
		}
		u, inv, err := h.DB.ConfirmSignup(ctx, token, c.FormValue("name"), c.FormValue("password"),
			auditAs(c, 0, Principal{Kind: Anonymous}, joinedByMail(t.Confirmation.Email)))
		if models.ErrorCode(err) == models.EInvalid {
			v.Name, v.Error = c.FormValue("name"), models.ErrorMessage(err)
			return render(c, http.StatusUnprocessableEntity, web.ConfirmPage(v))
		}
		if err != nil {
			return err
		}
		if err := h.startSession(c, u); err != nil {
			return err
		}
		h.Sessions.Put(ctx, sessWorkspaceID, inv.WorkspaceID)
		return redirect(c, "/", "Welcome, "+u.Name+": your address is confirmed and you joined "+t.Workspace.Name+" as "+string(inv.Role)+".")
	case web.ConfirmSignIn:
		return redirect(c, "/login?next="+url.QueryEscape("/confirm/"+token), "Sign in as "+t.Confirmation.Email+", then confirm.")
	}
	return render(c, http.StatusForbidden, web.ConfirmPage(v))
}

// requestConfirmation mails the signed-in person a link that confirms
// their address (their account page's button).
func (h *Handlers) requestConfirmation(c echo.Context) error {
	p := principalOf(c.Request().Context())
	if p.Kind != Account {
		return errNoAccount
	}
	if !h.mailOn() {
		return models.Errorf(models.EInvalid, "this server sends no mail, so addresses cannot be confirmed: the operator can set BATCHEVAL_SMTP_URL")
	}
	return h.mailAddressConfirmation(c, p.User, "", "", "/account")
}

// joinedByMail describes an account with address email joining by an
// invite whose answer it confirmed by mail; the models write fills in the
// workspace and the account (models.ConfirmAddress, ConfirmSignup).
func joinedByMail(email string) func(models.Invite) models.AuditNote {
	return func(inv models.Invite) models.AuditNote {
		return models.AuditNote{Action: models.AuditMemberJoined, Target: email, Detail: "as " + string(inv.Role) + " by invite, address confirmed by mail"}
	}
}
