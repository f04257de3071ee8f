package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestRemovedMemberInNoWorkspaceTold: a member of one workspace only, removed
// from it, is told so on the next thing they do; only a form is said to
// have saved nothing (QA review44: opening a page, they read "Nothing you
// sent from its pages was saved" though they had sent nothing).
func TestRemovedMemberInNoWorkspaceTold(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		env.createUser(env.ws.ID, "olive@a.test", models.RoleOwner)
		tests := []struct {
			name       string
			method     string
			path       string
			form       url.Values
			wantSaying bool
		}{
			{"a page", http.MethodGet, "/", nil, false},
			{"a form", http.MethodPost, "/projects", url.Values{"name": {"meant for the team"}}, true},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				u := env.createUser(env.ws.ID, "rita"+string(rune('a'+i))+"@a.test", models.RoleEditor)
				session := env.workspaceCookie(u, env.ws.ID)
				if _, err := env.db.RemoveMember(ctx, env.ws.ID, u.ID, false); err != nil {
					t.Fatal(err)
				}
				rec := env.send(tt.method, tt.path, tt.form, "", session)
				body := rec.Body.String()
				if rec.Code != http.StatusForbidden || !strings.Contains(body, "no longer a member of workspace") {
					t.Fatalf("%s %s after removal = %d, want 403 saying the workspace was left: %.300s", tt.method, tt.path, rec.Code, body)
				}
				if got := strings.Contains(body, "Nothing you sent from its pages was saved"); got != tt.wantSaying {
					t.Errorf("%s %s says nothing sent was saved: %v, want %v", tt.method, tt.path, got, tt.wantSaying)
				}
			})
		}
	})
}
