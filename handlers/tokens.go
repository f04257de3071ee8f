package handlers

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/internal/stamp"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// Audit actions of API tokens.
const (
	auditTokenCreated = "api-token-created"
	auditTokenRevoked = "api-token-revoked"
)

// tokenTTLs are the expiry choices of the tokens form (web.TokenExpiries
// names them); "never" is for automation that must not stop on a date.
var tokenTTLs = map[string]time.Duration{
	"30d":   30 * 24 * time.Hour,
	"90d":   90 * 24 * time.Hour,
	"1y":    365 * 24 * time.Hour,
	"never": 0,
}

// defaultTokenExpiry is the form's preselected choice, and the one used
// when a form sends none.
const defaultTokenExpiry = "30d"

// showTokens lists the person's API tokens in the current workspace.
func (h *Handlers) showTokens(c echo.Context) error {
	return h.renderTokens(c, http.StatusOK, web.TokensView{})
}

func (h *Handlers) renderTokens(c echo.Context, status int, v web.TokensView) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	v.Page, v.Workspace, v.Role = page(c, "API tokens"), p.Workspace.Name, string(p.Role)
	v.Now = time.Now().UTC()
	if v.Expires == "" {
		v.Expires = defaultTokenExpiry
	}
	if v.Scope == "" {
		// Full by default: what tokens always did.
		v.Scope = models.TokenScopeFull
	}
	if p.Kind != Account {
		v.NeedsAccount = true
		return render(c, status, web.TokensPage(v))
	}
	ts, err := h.DB.ListAPITokens(ctx, p.Workspace.ID, p.User.ID)
	if err != nil {
		return err
	}
	v.Tokens = ts
	if p.Role.AtLeast(models.RoleOwner) {
		all, err := h.DB.ListWorkspaceAPITokens(ctx, p.Workspace.ID)
		if err != nil {
			return err
		}
		for _, t := range all {
			if t.UserID != p.User.ID {
				v.MemberTokens = append(v.MemberTokens, t)
			}
		}
		ms, err := h.DB.ListMembers(ctx, p.Workspace.ID)
		if err != nil {
			return err
		}
		v.MemberRoles = make(map[int64]models.Role, len(ms))
		for _, m := range ms {
			v.MemberRoles[m.User.ID] = m.Role
		}
	}
	// A token shown once must not be kept by a cache on the way back.
	c.Response().Header().Set("Cache-Control", "no-store")
	return render(c, status, web.TokensPage(v))
}

// createToken makes a token and shows it, once.
func (h *Handlers) createToken(c echo.Context) error {
	p := principalOf(c.Request().Context())
	if p.Kind != Account {
		return models.Errorf(models.EInvalid, "API tokens belong to an account: create one at /setup first")
	}
	expires := c.FormValue("expires")
	if expires == "" {
		expires = defaultTokenExpiry
	}
	scope := c.FormValue("scope")
	if scope == "" {
		scope = models.TokenScopeFull
	}
	ttl, ok := tokenTTLs[expires]
	if !ok {
		return h.renderTokens(c, http.StatusUnprocessableEntity, web.TokensView{Error: "Choose an expiry from the list.", Name: c.FormValue("name"), Scope: scope})
	}
	made := auditOf(c, func(t models.APIToken) models.AuditNote {
		detail := web.TokenExpiry(t.ExpiresAt, time.Now())
		if t.ReadOnly() {
			detail += ", read-only"
		}
		return models.AuditNote{Action: auditTokenCreated, Target: tokenTarget(t), Detail: detail}
	})
	t, secret, err := h.DB.CreateScopedAPIToken(c.Request().Context(), p.Workspace.ID, p.User.ID, c.FormValue("name"), ttl, scope, made)
	if err != nil {
		if models.ErrorCode(err) == models.EInvalid {
			return h.renderTokens(c, http.StatusUnprocessableEntity, web.TokensView{Error: models.ErrorMessage(err), Name: c.FormValue("name"), Expires: expires, Scope: scope})
		}
		return err
	}
	return h.renderTokens(c, http.StatusCreated, web.TokensView{NewToken: secret, NewTokenName: t.Name, NewTokenExpires: t.ExpiresAt})
}

// revokeToken revokes one of the person's own tokens in this workspace,
// or, for an owner, any member's token of this workspace.
func (h *Handlers) revokeToken(c echo.Context) error {
	t, err := h.revokeTokenByID(c)
	if err != nil {
		return err
	}
	return redirect(c, "/tokens", "Token "+web.Quoted(t.Name)+" revoked: it no longer works.")
}

// revokeTokenByID revokes the token named by :id as the page and the API
// do: people revoke their own tokens; owners any token of the workspace.
// A token out of reach is not found, never forbidden, so nobody learns
// which ids exist.
func (h *Handlers) revokeTokenByID(c echo.Context) (models.APIToken, error) {
	id, err := paramID(c, "id")
	if err != nil {
		return models.APIToken{}, err
	}
	ctx := c.Request().Context()
	p := principalOf(ctx)
	var t models.APIToken
	revoked := auditOf(c, func(t models.APIToken) models.AuditNote {
		detail := ""
		if t.UserID != p.User.ID {
			detail = "a token of member " + strconv.FormatInt(t.UserID, 10)
		}
		return models.AuditNote{Action: auditTokenRevoked, Target: tokenTarget(t), Detail: detail}
	})
	switch {
	case p.Kind != Account && p.Kind != Token:
		return t, models.Errorf(models.ENotFound, "token %d does not exist", id)
	case p.Kind == Token && p.APIToken.ReadOnly() && id != p.TokenID:
		// A read-only token changes nothing but itself: revoking it is how
		// a script (or whoever found it) gives it up, but a leaked one must
		// not switch off its person's other tokens, the full ones a nightly
		// job runs on included. Refused whatever the id, so it tells
		// nothing of which ids exist.
		return t, echo.NewHTTPError(http.StatusForbidden, "This token is read-only: it may revoke itself, not another token. "+
			"Revoke that one on the API tokens page (/tokens) or with a token with full access.")
	case p.Role.AtLeast(models.RoleOwner):
		t, err = h.DB.RevokeWorkspaceAPIToken(ctx, p.Workspace.ID, id, revoked)
	default:
		t, err = h.DB.RevokeAPIToken(ctx, p.Workspace.ID, p.User.ID, id, revoked)
	}
	return t, err
}

// tokenTarget names a token in the audit log by its shown prefix and name.
func tokenTarget(t models.APIToken) string {
	return "API token " + t.Prefix + "… (" + t.Name + ")"
}

// APIToken is an access token as the API lists it (never the token itself).
type APIToken struct {
	ID         int64       `json:"id"`
	Name       string      `json:"name"`
	Prefix     string      `json:"prefix"`
	UserID     int64       `json:"user_id"`
	UserName   string      `json:"user_name"`
	CreatedAt  stamp.Time  `json:"created_at"`
	LastUsedAt *stamp.Time `json:"last_used_at"`
	RevokedAt  *stamp.Time `json:"revoked_at"`
	// ExpiresAt is when the token stops working; null never expires.
	ExpiresAt *stamp.Time `json:"expires_at"`
	// Current is true for the token this request was made with.
	Current bool `json:"current"`
	// Scope is "full" (what its person's role allows) or "read" (reads
	// only, whatever the role).
	Scope string `json:"scope"`
	// UserLeft is true when the token's person is no longer a member of
	// the workspace (an owner removed them, which revoked the token), as
	// the API tokens page marks them and a share link's created_by_left.
	UserLeft bool `json:"user_left"`
}

func apiToken(t models.APIToken, userName string, current int64) APIToken {
	return APIToken{ID: t.ID, Name: t.Name, Prefix: t.Prefix, UserID: t.UserID, UserName: userName, CreatedAt: stamp.Of(t.CreatedAt),
		LastUsedAt: stamp.OfPtr(t.LastUsedAt), RevokedAt: stamp.OfPtr(t.RevokedAt), ExpiresAt: stamp.OfPtr(t.ExpiresAt), Current: t.ID == current, Scope: t.Scope}
}

// apiListTokens lists the caller's tokens in this workspace; an owner's
// list holds every member's.
func (h *Handlers) apiListTokens(c echo.Context) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	limit, after, err := pageParams(c)
	if err != nil {
		return err
	}
	// The page's tokens and one more, read in the database
	// (TestAPIListsReadTheirPage).
	idOf := func(t models.MemberAPIToken) int64 { return t.ID }
	// Only an owner's list holds other people's tokens; the caller is a
	// member.
	members := map[int64]bool{p.User.ID: true}
	conv := func(t models.MemberAPIToken) APIToken {
		out := apiToken(t.APIToken, t.UserName, p.TokenID)
		out.UserLeft = !members[t.UserID]
		return out
	}
	var ts []models.MemberAPIToken
	switch {
	case p.Kind != Token:
		// The local user has no tokens.
	case p.Role.AtLeast(models.RoleOwner):
		if ts, err = h.DB.ListWorkspaceAPITokensAfter(ctx, p.Workspace.ID, after, limit+1); err != nil {
			return err
		}
		ms, err := h.DB.ListMembers(ctx, p.Workspace.ID)
		if err != nil {
			return err
		}
		for _, m := range ms {
			members[m.User.ID] = true
		}
	default:
		mine, err := h.DB.ListAPITokensAfter(ctx, p.Workspace.ID, p.User.ID, after, limit+1)
		if err != nil {
			return err
		}
		for _, t := range mine {
			ts = append(ts, models.MemberAPIToken{APIToken: t, UserName: p.User.Name})
		}
	}
	return c.JSON(http.StatusOK, keysetPage(ts, limit, idOf, conv))
}

// apiRevokeToken revokes a token (the caller's own, or as owner any of the
// workspace); a script may revoke the very token it calls with.
func (h *Handlers) apiRevokeToken(c echo.Context) error {
	t, err := h.revokeTokenByID(c)
	if err != nil {
		return err
	}
	p := principalOf(c.Request().Context())
	name, left := p.User.Name, false
	if t.UserID != p.User.ID {
		name = ""
		if u, err := h.DB.FindUser(c.Request().Context(), t.UserID); err == nil {
			name = u.Name
		}
		_, err := h.DB.MemberRole(c.Request().Context(), p.Workspace.ID, t.UserID)
		switch {
		case models.ErrorCode(err) == models.ENotFound:
			left = true
		case err != nil:
			return err
		}
	}
	out := apiToken(t, name, p.TokenID)
	out.UserLeft = left
	return c.JSON(http.StatusOK, out)
}
