package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// showWebhook shows the workspace's webhook settings (owners).
func (h *Handlers) showWebhook(c echo.Context) error {
	v, err := h.webhookView(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, web.WebhookPage(v))
}

// webhookView is the settings page over the stored webhook: its form
// filled from it and carrying its revision (NoWebhookRevision when none
// is set), so that a save applies only over what the page showed.
func (h *Handlers) webhookView(c echo.Context) (web.WebhookView, error) {
	v := web.WebhookView{Page: page(c, "Webhook"), Revision: models.NoWebhookRevision, Attempts: runner.DefaultWebhookAttempts}
	wh, err := h.DB.FindWebhook(c.Request().Context(), h.workspaceID(c))
	switch models.ErrorCode(err) {
	case "":
		wh.LastStatus = shownWebhookOutcome(c.Request().Context(), wh.LastStatus)
		v.Hook, v.Exists, v.Revision = wh, true, wh.Revision()
		v.Problem = wh.URLProblem
	case models.ENotFound:
	default:
		return v, err
	}
	v.PrivateNetworkNote, err = h.webhookNetworkNote(c.Request().Context(), h.workspaceID(c))
	return v, err
}

// shownWebhookOutcome is a delivery's outcome as stored ("refused: ..."
// quotes the egress refusal as worded when it happened, naming the
// address refused while the server was in local mode) as the request's
// reader may read it: the address withheld (judge.HideRefusedAddrs)
// unless the reader is the local user now (showsRefusedAddrs), as on the
// run and batch pages.
func shownWebhookOutcome(ctx context.Context, outcome string) string {
	if showsRefusedAddrs(ctx) {
		return outcome
	}
	return judge.HideRefusedAddrs(outcome)
}

// webhookNetworkNote is the webhook page's note for workspace wsID when
// the operator lets webhooks reach private-network or loopback addresses
// (BATCHEVAL_WEBHOOK_ALLOW_PRIVATE, loopback in local mode or with
// BATCHEVAL_WEBHOOK_ALLOW_LOOPBACK) but the workspace has no grant: such
// an address was refused only when a message or the test was sent. ""
// when the settings allow neither (the page's own text and the refusal
// say enough) or the workspace may use them. The settings are this
// process's, which sends the test message (Runner.WebhookNetwork).
func (h *Handlers) webhookNetworkNote(ctx context.Context, wsID int64) (string, error) {
	if h.Runner == nil {
		return "", nil
	}
	private, loopback := h.Runner.WebhookNetwork()
	if !private && !loopback {
		return "", nil
	}
	var ng *models.NotGrantedError
	switch err := h.DB.PrivateNetworkAllowed(ctx, wsID); {
	case err == nil:
		return "", nil
	case !errors.As(err, &ng):
		return "", err
	}
	var reach string
	switch {
	case private && loopback:
		reach = "private-network addresses (10.x, 172.16–31.x, 192.168.x) and this machine's loopback"
	case private:
		reach = "private-network addresses (10.x, 172.16–31.x, 192.168.x)"
	default:
		reach = "this machine's loopback"
	}
	return fmt.Sprintf("This server lets webhooks reach %s only in the default workspace and in workspaces its operator grants, "+
		"and this workspace (%s) has no grant: a message to such an address is refused, so use a public address, "+
		"or ask whoever runs BatchEval to grant it with: batcheval admin network grant %s", reach, ng.Slug, ng.Slug), nil
}

// showTyped puts the settings the person posted in the form, keeping the
// stored delivery outcome shown beside it.
func showTyped(v *web.WebhookView, typed models.Webhook) {
	typed.LastStatus, typed.LastSentAt = v.Hook.LastStatus, v.Hook.LastSentAt
	v.Hook, v.Typed = typed, true
}

// saveWebhook sets the workspace's webhook, over the state the form was
// opened on (its hidden revision).
func (h *Handlers) saveWebhook(c echo.Context) error {
	w := models.Webhook{WorkspaceID: h.workspaceID(c), URL: c.FormValue("url"), BaseURL: c.FormValue("base_url"),
		OnFinished: c.FormValue("on_finished") != "", OnFailed: c.FormValue("on_failed") != ""}
	revision := c.FormValue("revision")
	// The audit log names the receiving site only: the rest of such an
	// address is often its secret.
	_, err := h.DB.SaveWebhookIf(c.Request().Context(), w, expectRevision(revision), auditOf(c, func(saved models.Webhook) models.AuditNote {
		return models.AuditNote{Action: models.AuditWebhookChanged, Target: "webhook", Detail: "set to " + models.WebhookSite(saved.URL)}
	}))
	switch models.ErrorCode(err) {
	case "":
	case models.EInvalid:
		v, verr := h.webhookView(c)
		if verr != nil {
			return verr
		}
		// Shown again to be fixed: still a save over what was opened.
		showTyped(&v, w)
		v.Problem, v.Revision = models.ErrorMessage(err), revision
		return render(c, http.StatusUnprocessableEntity, web.WebhookPage(v))
	case models.EChanged:
		return h.webhookSavedMeanwhile(c, w)
	default:
		return err
	}
	return redirect(c, "/settings/webhook", "Webhook saved.")
}

// webhookSavedMeanwhile answers a save refused because another owner
// saved or removed the webhook after the form was opened: the form again
// with the person's settings kept, what the other owner left stored, and
// that state's revision, so that saving again replaces it knowingly.
func (h *Handlers) webhookSavedMeanwhile(c echo.Context, typed models.Webhook) error {
	v, err := h.webhookView(c)
	if err != nil {
		return err
	}
	if v.Exists {
		stored := v.Hook
		v.SavedMeanwhile = &stored
		v.Problem = "Not saved: another owner saved the webhook after you opened this page. Here is what they saved; your settings are kept in the form. Save again to replace theirs with yours."
	} else {
		v.Problem = "Not saved: another owner removed the webhook after you opened this page. Your settings are kept in the form: save again to set it anew."
	}
	showTyped(&v, typed)
	return render(c, http.StatusConflict, web.WebhookPage(v))
}

// removeWebhook stops the workspace's notifications: those of the webhook
// its page showed (the form's hidden revision), as saving does. When
// another owner saved new settings meanwhile, nothing is removed and the
// page shows what they saved, with its revision, to remove knowingly.
func (h *Handlers) removeWebhook(c echo.Context) error {
	err := h.DB.DeleteWebhookIf(c.Request().Context(), h.workspaceID(c), expectRevision(c.FormValue("revision")),
		auditOf(c, noted[struct{}](models.AuditWebhookChanged, "webhook", "removed")))
	switch models.ErrorCode(err) {
	case "":
	case models.EChanged:
		v, verr := h.webhookView(c)
		if verr != nil {
			return verr
		}
		if v.Exists {
			stored := v.Hook
			v.SavedMeanwhile = &stored
		}
		v.Problem = "Not removed: another owner saved the webhook after you opened this page. Here is what they saved; remove it again if it should go."
		return render(c, http.StatusConflict, web.WebhookPage(v))
	default:
		return err
	}
	return redirect(c, "/settings/webhook", "Webhook removed.")
}

// testWebhook sends a test message now and shows the outcome (its status
// only: the receiver's answer is never shown).
func (h *Handlers) testWebhook(c echo.Context) error {
	status, err := h.Runner.SendTestWebhook(c.Request().Context(), h.workspaceID(c))
	if err != nil {
		return err
	}
	v, err := h.webhookView(c)
	if err != nil {
		return err
	}
	v.TestResult = shownWebhookOutcome(c.Request().Context(), status)
	return render(c, http.StatusOK, web.WebhookPage(v))
}
