package handlers

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/runner"
)

// With BATCHEVAL_WEBHOOK_ALLOW_PRIVATE (or loopback webhooks) set, a
// workspace without the operator's grant learned that its webhook may not
// use a private address only when a message or the test was refused. The
// webhook page now says it beforehand, naming the grant command, and only
// when it is so: not when the settings allow no such address, not in the
// default workspace, not in a granted one.
func TestWebhookPageSaysPrivateNetworkNeedsTheGrant(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		kept := env.h.Runner
		t.Cleanup(func() {
			env.h.Runner = kept
			env.db.Gorm.Exec("DELETE FROM network_grants WHERE workspace_id = ?", env.ws.ID)
			env.db.Gorm.Exec("UPDATE workspaces SET slug = ? WHERE id = ?", models.DefaultWorkspaceSlug, env.ws.ID)
		})
		tests := []struct {
			name              string
			private, loopback bool
			slug              string
			granted           bool
			want              string // in the note; "" for no note
		}{
			{"private allowed, not granted", true, false, "anyones", false, "reach private-network addresses (10.x, 172.16–31.x, 192.168.x) only in the default workspace"},
			{"loopback allowed, not granted", false, true, "anyones", false, "reach this machine&#39;s loopback only"},
			{"both allowed, not granted", true, true, "anyones", false, "private-network addresses (10.x, 172.16–31.x, 192.168.x) and this machine&#39;s loopback"},
			{"private allowed, granted", true, false, "granted-team", true, ""},
			{"private allowed, default workspace", true, false, models.DefaultWorkspaceSlug, false, ""},
			{"nothing allowed", false, false, "anyones", false, ""},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				r, err := runner.New(runner.Config{DB: env.db, Log: slog.New(slog.DiscardHandler),
					Webhooks: runner.WebhookConfig{AllowPrivate: tc.private, AllowLoopback: tc.loopback}})
				must(t, err)
				env.h.Runner = r
				must(t, env.db.Gorm.Exec("UPDATE workspaces SET slug = ? WHERE id = ?", tc.slug, env.ws.ID).Error)
				must(t, env.db.Gorm.Exec("DELETE FROM network_grants WHERE workspace_id = ?", env.ws.ID).Error)
				if tc.granted {
					_, _, err := env.db.SetNetworkGrant(ctx, tc.slug, true, "test operator")
					must(t, err)
				}
				page := env.get("/settings/webhook").Body.String()
				noted := strings.Contains(page, `data-testid="private-network-note"`)
				if noted != (tc.want != "") {
					t.Fatalf("note shown %v, want %v", noted, tc.want != "")
				}
				if tc.want == "" {
					return
				}
				for _, want := range []string{tc.want, "this workspace (anyones) has no grant", "batcheval admin network grant anyones", `aria-describedby="wh-url-network"`} {
					if !strings.Contains(page, want) {
						t.Errorf("the page lacks %q", want)
					}
				}
			})
		}
	})
}
