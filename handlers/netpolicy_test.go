package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestPrivateNetworkNeedsTheOperatorsGrant: with private or loopback
// judges allowed by the operator (here loopback, as the tests' egress
// policy allows it), anyone signed in could make a workspace, point a
// judge at the server's private network and read the status and the
// start of the answer from Test connection. Now the dashboard's calls
// (Test connection, the launch form's steps) reach such an address for
// the default workspace and the ones the operator granted only, saying
// elsewhere what the operator runs; the judge form says it beforehand.
// (Runs and webhooks: runner's TestPrivateNetworkPerWorkspace.)
func TestPrivateNetworkNeedsTheOperatorsGrant(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		var hits atomic.Int64
		internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"internal secret page"}}]}`))
		}))
		defer internal.Close()

		for _, kind := range []string{"default", "granted", "not granted"} {
			reach := kind != "not granted"
			t.Run(kind, func(t *testing.T) {
				ctx := context.Background()
				slug := map[string]string{"default": models.DefaultWorkspaceSlug, "granted": "granted-team", "not granted": "anyones"}[kind]
				must(t, env.db.Gorm.Exec("UPDATE workspaces SET slug = ? WHERE id = ?", slug, env.ws.ID).Error)
				must(t, env.db.Gorm.Exec("DELETE FROM network_grants WHERE workspace_id = ?", env.ws.ID).Error)
				t.Cleanup(func() {
					env.db.Gorm.Exec("DELETE FROM network_grants WHERE workspace_id = ?", env.ws.ID)
					env.db.Gorm.Exec("UPDATE workspaces SET slug = ? WHERE id = ?", models.DefaultWorkspaceSlug, env.ws.ID)
				})
				if kind == "granted" {
					_, _, err := env.db.SetNetworkGrant(ctx, slug, true, "test operator")
					must(t, err)
				}

				// The judge form, before anything is typed.
				form := env.get("/judges/new").Body.String()
				if noted := strings.Contains(form, `data-testid="private-network-note"`); noted == reach {
					t.Errorf("judge form: private-network note shown %v, want %v", noted, !reach)
				}
				if !reach && !strings.Contains(form, "batcheval admin network grant anyones") {
					t.Errorf("judge form's note does not say what the operator runs")
				}

				j := models.Judge{WorkspaceID: env.ws.ID, Name: "Internal " + slug, BaseURL: internal.URL + "/v1", Model: "m",
					Temperature: 0.2, TopP: 0.9, MaxConcurrency: 1, TimeoutSeconds: 10}
				must(t, env.db.Gorm.Create(&j).Error)

				for _, entry := range []struct {
					name string
					call func() string // the error shown, "" for none
				}{
					{"test connection", func() string {
						req := httptest.NewRequest(http.MethodPost, "/judges/"+itoa(j.ID)+"/test", nil)
						req.Header.Set("X-Requested-With", "fetch")
						env.e.ServeHTTP(httptest.NewRecorder(), req)
						stored, err := env.db.FindJudge(ctx, env.ws.ID, j.ID)
						must(t, err)
						return stored.LastTestError
					}},
					{"launch form's steps", func() string {
						c, err := env.h.judgeClient(ctx, j)
						must(t, err)
						if _, err := c.Ping(ctx); err != nil {
							return err.Error()
						}
						return ""
					}},
				} {
					before := hits.Load()
					shown := entry.call()
					if reached := hits.Load() > before; reached != reach {
						t.Errorf("%s: reached the internal address %v, want %v (%q)", entry.name, reached, reach, shown)
					}
					if !reach && !strings.Contains(shown, "batcheval admin network grant anyones") {
						t.Errorf("%s: error %q does not say the workspace needs the operator's grant", entry.name, shown)
					}
					if !reach && strings.Contains(shown, "internal secret page") {
						t.Errorf("%s: the internal answer was shown: %q", entry.name, shown)
					}
				}
			})
		}
	})
}
