package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

// TestWebhookSettingsPage: owners set, test and remove the webhook; a bad
// address is refused with a message; a test message to this machine is
// refused by the egress rules when the runner does not allow loopback.
func TestWebhookSettingsPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		var hits atomic.Int32
		recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
		t.Cleanup(recv.Close)

		steps := []struct {
			path     string
			form     url.Values
			want     int
			contains string
		}{
			{"/settings/webhook", url.Values{"url": {"ftp://x.test/"}, "on_finished": {"1"}}, http.StatusUnprocessableEntity, "absolute http:// or https://"},
			{"/settings/webhook", url.Values{"url": {recv.URL + "/hook"}, "base_url": {"https://eval.example.test/"}, "on_failed": {"1"}}, http.StatusSeeOther, ""},
			{"/settings/webhook/test", nil, http.StatusOK, "refused: 127.0.0.1 is a loopback address, and connecting to it is not allowed"},
		}
		for _, s := range steps {
			rec := env.postForm(s.path, s.form)
			if rec.Code != s.want || !strings.Contains(rec.Body.String(), s.contains) {
				t.Fatalf("POST %s %v: %d %.400s", s.path, s.form, rec.Code, rec.Body.String())
			}
		}
		if hits.Load() != 0 {
			t.Errorf("the receiver on loopback was reached %d times", hits.Load())
		}
		wh, err := env.db.FindWebhook(ctx, env.ws.ID)
		if err != nil || wh.BaseURL != "https://eval.example.test" || wh.OnFinished || !wh.OnFailed || !strings.HasPrefix(wh.LastStatus, "refused") {
			t.Fatalf("stored: %+v, %v", wh, err)
		}
		page := env.get("/settings/webhook").Body.String()
		if !strings.Contains(page, recv.URL+"/hook") || !strings.Contains(page, "refused") {
			t.Errorf("settings page: %.600s", page)
		}
		// It states the runner's attempts (it said "three times" of 8).
		if want := "tried up to " + strconv.Itoa(runner.DefaultWebhookAttempts) + " times"; !strings.Contains(page, want) {
			t.Errorf("settings page does not say %q", want)
		}
		if rec := env.postForm("/settings/webhook/remove", nil); rec.Code != http.StatusSeeOther {
			t.Fatalf("remove: %d", rec.Code)
		}
		if _, err := env.db.FindWebhook(ctx, env.ws.ID); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("after removal: %v", err)
		}
		evs, err := env.db.ListAudit(ctx, env.ws.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range evs {
			if e.Action == models.AuditWebhookChanged {
				n++
			}
		}
		if n != 2 {
			t.Errorf("%d webhook audit events, want 2 (set, removed)", n)
		}
	})
}
