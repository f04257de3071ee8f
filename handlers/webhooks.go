package handlers

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// showWebhook shows the workspace's webhook settings (owners).
func (h *Handlers) showWebhook(c echo.Context) error {
	return h.renderWebhook(c, http.StatusOK, nil, "", "")
}

func (h *Handlers) renderWebhook(c echo.Context, status int, typed *models.Webhook, problem, testResult string) error {
	v := web.WebhookView{Page: page(c, "Webhook"), Problem: problem, TestResult: testResult}
	wh, err := h.DB.FindWebhook(c.Request().Context(), h.workspaceID(c))
	switch models.ErrorCode(err) {
	case "":
		v.Hook, v.Exists = wh, true
	case models.ENotFound:
	default:
		return err
	}
	if typed != nil {
		v.Hook = *typed
	}
	return render(c, status, web.WebhookPage(v))
}

// saveWebhook sets the workspace's webhook.
func (h *Handlers) saveWebhook(c echo.Context) error {
	w := models.Webhook{WorkspaceID: h.workspaceID(c), URL: c.FormValue("url"), BaseURL: c.FormValue("base_url"),
		OnFinished: c.FormValue("on_finished") != "", OnFailed: c.FormValue("on_failed") != ""}
	saved, err := h.DB.SaveWebhook(c.Request().Context(), w)
	if models.ErrorCode(err) == models.EInvalid {
		return h.renderWebhook(c, http.StatusUnprocessableEntity, &w, models.ErrorMessage(err), "")
	}
	if err != nil {
		return err
	}
	h.audit(c, models.AuditWebhookChanged, "webhook", "set to "+saved.URL)
	return redirect(c, "/settings/webhook", "Webhook saved.")
}

// removeWebhook stops the workspace's notifications.
func (h *Handlers) removeWebhook(c echo.Context) error {
	if err := h.DB.DeleteWebhook(c.Request().Context(), h.workspaceID(c)); err != nil {
		return err
	}
	h.audit(c, models.AuditWebhookChanged, "webhook", "removed")
	return redirect(c, "/settings/webhook", "Webhook removed.")
}

// testWebhook sends a test message now and shows the outcome (its status
// only: the receiver's answer is never shown).
func (h *Handlers) testWebhook(c echo.Context) error {
	status, err := h.Runner.SendTestWebhook(c.Request().Context(), h.workspaceID(c))
	if err != nil {
		return err
	}
	return h.renderWebhook(c, http.StatusOK, nil, "", status)
}
