package handlers

import (
	"context"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// TestWebhookRefusalAddressFollowsTheModeWhenShown: a webhook delivery
// refused while the server was in local mode is stored as the runner
// words it then ("refused: connecting to 10.20.30.40:8000 is not
// allowed: ..."). The Webhook page's last delivery names that address to
// the local user while local mode lasts, and withholds it (keeping the
// rest of the reason) from an owner once accounts exist. Before, the
// stored outcome was shown as it was to every owner.
func TestWebhookRefusalAddressFollowsTheModeWhenShown(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		local := judge.Egress{ShowAddrs: func(context.Context) bool { return true }}
		var ee *judge.EgressError
		if err := local.CheckContext(ctx, netip.MustParseAddrPort("10.20.30.40:8000")); !asEgress(err, &ee) || !ee.Shown {
			t.Fatalf("%v, want a refusal naming the address", err)
		}
		if rec := env.postForm("/settings/webhook", url.Values{"url": {"https://hooks.example.test/x"}, "on_failed": {"1"}}); rec.Code != http.StatusSeeOther {
			t.Fatalf("save: %d %.300s", rec.Code, rec.Body.String())
		}
		// As the runner records a refused delivery (postOnce).
		outcome := "refused: " + ee.Error() + " (run 7; not tried again)"
		if err := env.db.RecordWebhookDelivery(ctx, env.ws.ID, outcome); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			reader string
			member bool
			named  bool
		}{
			{"the local user, no account yet", false, true},
			{"an owner, once accounts exist", true, false},
		} {
			var cookies []*http.Cookie
			if c.member {
				u := env.createUser(env.ws.ID, "ada@company.com", models.RoleOwner)
				cookies = append(cookies, env.sessionCookie(u))
			}
			rec := env.send(http.MethodGet, "/settings/webhook", nil, "", cookies...)
			if rec.Code != http.StatusOK {
				t.Fatalf("%s: %d", c.reader, rec.Code)
			}
			body := rec.Body.String()
			if strings.Contains(body, "10.20.30.40") != c.named {
				t.Errorf("%s: address named = %v, want %v", c.reader, !c.named, c.named)
			}
			if !strings.Contains(body, "refused: ") || !strings.Contains(body, "private-network addresses are off on this server") || !strings.Contains(body, "not tried again") {
				t.Errorf("%s: the outcome's reason is gone: %.2000s", c.reader, body)
			}
			if !c.named && !strings.Contains(body, "(not shown)") {
				t.Errorf("%s: does not say the address is withheld", c.reader)
			}
		}
	})
}
