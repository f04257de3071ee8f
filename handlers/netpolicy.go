package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// judgeHTTPClient is the HTTP client of the judge calls the dashboard makes
// for workspace wsID (Test connection and its hints, the launch form's
// steps): the server's egress policy, with the workspace's permission to
// reach the private and loopback addresses it allows asked at every
// connection (models.DB.NetworkPermit), so a workspace anyone made cannot
// reach the server's private network. Its connections are its own.
func (h *Handlers) judgeHTTPClient(wsID int64) *http.Client {
	return judge.GrantedClient(h.DB.NetworkPermit(wsID))
}

// judgeFormPage is the judge form with, for a workspace that may not reach
// the private-network or loopback addresses the server allows, a note
// saying that such a base URL needs the operator's grant: the bare
// "not allowed" of a Test connection would not say who can change it.
func (h *Handlers) judgeFormPage(c echo.Context, v web.JudgeFormView) templ.Component {
	v.PrivateNetworkNote = h.privateNetworkNote(c.Request().Context(), workspaceOf(c.Request().Context()))
	return web.JudgeFormPage(v)
}

// privateNetworkNote is the judge form's private-network note for
// workspace wsID; "" when the workspace may reach what the server allows,
// or the server allows neither private nor loopback addresses (its own
// refusal then says so).
func (h *Handlers) privateNetworkNote(ctx context.Context, wsID int64) string {
	p := judge.Current()
	if !p.AllowPrivate && !p.AllowLoopback {
		return ""
	}
	var ng *models.NotGrantedError
	if err := h.DB.PrivateNetworkAllowed(ctx, wsID); !errors.As(err, &ng) {
		return ""
	}
	return fmt.Sprintf("This server lets judges use private-network addresses (10.x, 172.16–31.x, 192.168.x) or this machine's loopback only in the default workspace "+
		"and in workspaces its operator grants, and this workspace (%s) has no grant: a judge here must use a public address, "+
		"or whoever runs BatchEval can grant it with: batcheval admin network grant %s", ng.Slug, ng.Slug)
}
