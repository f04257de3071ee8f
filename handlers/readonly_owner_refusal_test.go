package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestReadOnlyTokenRefusalNamesRole (forms45): a read-only token is refused
// a route its person's role would not allow either, and the 403 says both
// limits (the token is read-only, the person's role and the role needed),
// so nobody is sent to make a full-access token that would be refused too.
// A route the person's role allows still says only that the token is
// read-only. Before, an editor's read-only token on an owner-only route was
// told only to make a token with full access.
func TestReadOnlyTokenRefusalNamesRole(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		api := newAPIClient(t, env)
		judge := map[string]string{"name": "j", "base_url": "https://judge.example/v1", "model": "m"}
		for _, tc := range []struct {
			role           models.Role
			method, target string
			body           any
			want, notWant  []string
		}{
			{models.RoleEditor, http.MethodPost, "/api/v1/judges", judge,
				[]string{"read-only", "your role in this workspace (editor)", "it needs owner", "Ask an owner", "/tokens"}, nil},
			{models.RoleOwner, http.MethodPost, "/api/v1/judges", judge,
				[]string{"read-only", "needs owner", "/tokens"}, []string{"your role"}},
			{models.RoleEditor, http.MethodPost, "/api/v1/projects", map[string]string{"name": "p"},
				[]string{"read-only", "needs editor", "/tokens"}, []string{"your role"}},
		} {
			u := env.createUser(env.ws.ID, string(tc.role)+"-"+strings.TrimPrefix(tc.target, "/api/v1/")+"@a.test", tc.role)
			_, secret, err := env.db.CreateScopedAPIToken(context.Background(), env.ws.ID, u.ID, "reader", 0, models.TokenScopeRead)
			if err != nil {
				t.Fatal(err)
			}
			rec := api.json(tc.method, tc.target, secret, tc.body)
			var e APIError
			_ = json.Unmarshal(rec.Body.Bytes(), &e)
			if rec.Code != http.StatusForbidden || e.Error.Code != "forbidden" {
				t.Errorf("%s's read-only token on %s %s = %d %q, want 403 forbidden", tc.role, tc.method, tc.target, rec.Code, e.Error.Message)
				continue
			}
			for _, w := range tc.want {
				if !strings.Contains(e.Error.Message, w) {
					t.Errorf("%s's read-only token on %s: %q lacks %q", tc.role, tc.target, e.Error.Message, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(e.Error.Message, w) {
					t.Errorf("%s's read-only token on %s: %q says %q though the role allows it", tc.role, tc.target, e.Error.Message, w)
				}
			}
		}
	})
}
