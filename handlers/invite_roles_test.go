package handlers

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestInviteRolesSayWhoRates: the invite form described the roles as
// "viewer: reads" and "editor: creates and launches", so an owner inviting
// someone to review samples could not tell that a viewer cannot rate them
// (only editors and owners do). Each choice says whether it rates samples.
func TestInviteRolesSayWhoRates(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		rec := env.send(http.MethodGet, "/members", nil, "", env.sessionCookie(owner))
		if rec.Code != http.StatusOK {
			t.Fatalf("members page = %d", rec.Code)
		}
		body := rec.Body.String()
		_, body, found := strings.Cut(body, `id="invite-role"`)
		if !found {
			t.Fatal("the members page has no invite form")
		}
		for _, tc := range []struct{ role, want string }{
			{"viewer", `cannot rate samples`},
			{"editor", `rates samples`},
		} {
			option := regexp.MustCompile(`<option value="` + tc.role + `"[^>]*>([^<]*)</option>`).FindStringSubmatch(body)
			if option == nil {
				t.Fatalf("the invite form offers no %s", tc.role)
			}
			if !regexp.MustCompile(regexp.QuoteMeta(tc.want)).MatchString(option[1]) {
				t.Errorf("the invite choice %q does not say %q", option[1], tc.want)
			}
		}
	})
}
