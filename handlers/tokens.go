package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// Audit actions of API tokens.
const (
	auditTokenCreated = "api-token-created"
	auditTokenRevoked = "api-token-revoked"
)

// showTokens lists the person's API tokens in the current workspace.
func (h *Handlers) showTokens(c echo.Context) error {
	return h.renderTokens(c, http.StatusOK, web.TokensView{})
}

func (h *Handlers) renderTokens(c echo.Context, status int, v web.TokensView) error {
	ctx := c.Request().Context()
	p := principalOf(ctx)
	v.Page, v.Workspace, v.Role = page(c, "API tokens"), p.Workspace.Name, string(p.Role)
	if p.Kind != Account {
		v.NeedsAccount = true
		return render(c, status, web.TokensPage(v))
	}
	ts, err := h.DB.ListAPITokens(ctx, p.Workspace.ID, p.User.ID)
	if err != nil {
		return err
	}
	v.Tokens = ts
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
	t, secret, err := h.DB.CreateAPIToken(c.Request().Context(), p.Workspace.ID, p.User.ID, c.FormValue("name"))
	if err != nil {
		if models.ErrorCode(err) == models.EInvalid {
			return h.renderTokens(c, http.StatusUnprocessableEntity, web.TokensView{Error: models.ErrorMessage(err), Name: c.FormValue("name")})
		}
		return err
	}
	h.audit(c, auditTokenCreated, "API token "+t.Prefix+"… ("+t.Name+")", "")
	return h.renderTokens(c, http.StatusCreated, web.TokensView{NewToken: secret, NewTokenName: t.Name})
}

// revokeToken revokes one of the person's own tokens in this workspace.
func (h *Handlers) revokeToken(c echo.Context) error {
	id, err := paramID(c, "id")
	if err != nil {
		return err
	}
	p := principalOf(c.Request().Context())
	if p.Kind != Account {
		return models.Errorf(models.ENotFound, "token %d does not exist", id)
	}
	t, err := h.DB.RevokeAPIToken(c.Request().Context(), p.Workspace.ID, p.User.ID, id)
	if err != nil {
		return err
	}
	h.audit(c, auditTokenRevoked, "API token "+t.Prefix+"… ("+t.Name+")", "")
	return redirect(c, "/tokens", "Token \""+t.Name+"\" revoked: it no longer works.")
}
