package runner

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// asWorkspace makes the env's workspace the default one ("default"), one
// the operator granted the private network ("granted"), or one anyone
// could have made ("not granted"): its slug and grant are what the policy
// reads. The default workspace is put back when the test ends.
func (env *testEnv) asWorkspace(t *testing.T, kind string) {
	t.Helper()
	ctx := context.Background()
	slug := map[string]string{"default": models.DefaultWorkspaceSlug, "granted": "granted-team", "not granted": "anyones"}[kind]
	if err := env.db.Gorm.Exec("UPDATE workspaces SET slug = ? WHERE id = ?", slug, env.ws.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := env.db.Gorm.Exec("DELETE FROM network_grants WHERE workspace_id = ?", env.ws.ID).Error; err != nil {
		t.Fatal(err)
	}
	if kind == "granted" {
		if _, changed, err := env.db.SetNetworkGrant(ctx, slug, true, "test operator"); err != nil || !changed {
			t.Fatalf("grant: changed %v, %v", changed, err)
		}
	}
	t.Cleanup(func() {
		env.db.Gorm.Exec("DELETE FROM network_grants WHERE workspace_id = ?", env.ws.ID)
		env.db.Gorm.Exec("UPDATE workspaces SET slug = ? WHERE id = ?", models.DefaultWorkspaceSlug, env.ws.ID)
	})
}

// TestPrivateNetworkPerWorkspace: the operator's permission to reach
// private-network and loopback addresses (here loopback, as the tests'
// egress policy allows it) was the whole server's, and anyone signed in
// can make a workspace: its judge pointed at the server's private network
// ran there, and its webhook posted there. Now each entry point that
// connects (a run's calls, the webhook of its end, the test message)
// reaches such an address for the default workspace and granted ones
// only; elsewhere it is refused saying what the operator does.
func TestPrivateNetworkPerWorkspace(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, kind := range []string{"default", "granted", "not granted"} {
			reach := kind != "not granted"
			t.Run(kind, func(t *testing.T) {
				ctx := context.Background()
				env.asWorkspace(t, kind)
				rc := newReceiver(t)
				if _, err := env.db.SaveWebhook(ctx, models.Webhook{WorkspaceID: env.ws.ID, URL: rc.srv.URL + "/hook",
					OnFinished: true, OnFailed: true}); err != nil {
					t.Fatal(err)
				}
				fj := newFakeJudge(t, simjudge.Options{Seed: 3}, nil)
				r := env.startRunner(Config{Webhooks: WebhookConfig{AllowLoopback: true, Backoff: 5 * time.Millisecond, Timeout: 5 * time.Second, Attempts: 1}})

				// A run's judge calls.
				run := env.launch(r, env.newRun(fj.URL(), 1, 2, 10))
				run = env.waitFinished(run.ID, 60*time.Second)
				fj.mu.Lock()
				calls := fj.total
				fj.mu.Unlock()
				if reach {
					if run.Status != models.RunSucceeded || calls == 0 {
						t.Errorf("run: %s (%q) after %d calls, want succeeded", run.Status, run.Error, calls)
					}
				} else {
					if run.Status != models.RunFailed || calls != 0 {
						t.Errorf("run: %s after %d calls to the loopback judge, want failed with none", run.Status, calls)
					}
					if !strings.Contains(run.Error, "batcheval admin network grant anyones") || !strings.Contains(run.Error, "default workspace") {
						t.Errorf("run's error %q does not say the workspace needs the operator's grant", run.Error)
					}
				}

				// The webhook of the run's end.
				env.waitJobDone(run)
				r.WaitNotifications()
				if got := len(rc.messages()); (got > 0) != reach {
					t.Errorf("webhook of the run's end: %d posts, want reached %v", got, reach)
				}
				wh, err := env.db.FindWebhook(ctx, env.ws.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !reach && !strings.Contains(wh.LastStatus, "batcheval admin network grant anyones") {
					t.Errorf("webhook's recorded outcome %q does not say the workspace needs the operator's grant", wh.LastStatus)
				}

				// The settings page's test message.
				before := len(rc.messages())
				status, err := r.SendTestWebhook(ctx, env.ws.ID)
				if err != nil {
					t.Fatal(err)
				}
				if reached := len(rc.messages()) > before; reached != reach {
					t.Errorf("test webhook: %q, reached %v, want %v", status, reached, reach)
				}
				if !reach && !strings.Contains(status, "batcheval admin network grant anyones") {
					t.Errorf("test webhook's outcome %q does not say the workspace needs the operator's grant", status)
				}
				// The refusals, read by the workspace's members, say what
				// kind of address the host is; the webhook's URL names
				// 127.0.0.1 itself, so the message may (a name's address
				// is never named: judge.TestEgressRefusalOutsideLocalMode).
				for what, msg := range map[string]string{"test webhook's outcome": status, "webhook's recorded outcome": wh.LastStatus} {
					if !reach && !strings.Contains(msg, "refused: 127.0.0.1 is a loopback address, and connecting to it is not allowed") {
						t.Errorf("%s %q names the address the workspace may not reach, or not its kind", what, msg)
					}
				}
			})
		}
	})
}

// TestRevokedGrantStopsTheRun: a run of a granted workspace whose grant is
// revoked while it runs sends nothing more to the private address, not
// even on the connection it holds open, and fails saying why.
func TestRevokedGrantStopsTheRun(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		env.asWorkspace(t, "granted")
		revoked := make(chan struct{})
		fj := newFakeJudge(t, simjudge.Options{Seed: 3}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			if c.Total == 1 {
				if _, changed, err := env.db.SetNetworkGrant(ctx, "granted-team", false, "test operator"); err != nil || !changed {
					t.Errorf("revoke: changed %v, %v", changed, err)
				}
				close(revoked)
				// Past the time a kept-alive connection is used without
				// asking the grant again.
				time.Sleep(1100 * time.Millisecond)
			}
			return false
		})
		r := env.startRunner(Config{})
		// One call at a time: every call after the first goes on the
		// first's kept-alive connection, or a new one.
		run := env.launch(r, env.newRun(fj.URL(), 3, 1, 10))
		run = env.waitFinished(run.ID, 60*time.Second)
		<-revoked
		fj.mu.Lock()
		calls := fj.total
		fj.mu.Unlock()
		if calls != 1 {
			t.Errorf("the judge got %d calls, want only the one before the revocation", calls)
		}
		if run.Status != models.RunFailed || !strings.Contains(run.Error, "batcheval admin network grant granted-team") {
			t.Errorf("run: %s (%q), want failed saying the workspace needs the operator's grant", run.Status, run.Error)
		}
		var audit []models.AuditEvent
		if err := env.db.Gorm.Where("workspace_id = ? AND action IN ?", env.ws.ID, []string{models.AuditNetworkGranted, models.AuditNetworkRevoked}).Order("id").Find(&audit).Error; err != nil {
			t.Fatal(err)
		}
		if len(audit) != 2 || audit[0].Action != models.AuditNetworkGranted || audit[1].Action != models.AuditNetworkRevoked || audit[1].Actor != "test operator" {
			t.Errorf("audit log: %+v, want the grant then the revocation by the test operator", audit)
		}
	})
}
