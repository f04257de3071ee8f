package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestPasswordResetSaysTokensKeepWorking: a password reset signs out every
// session of the account but, by choice, leaves its API tokens working (a
// reset is mostly for a forgotten password; scripts keep running). The
// owner's reset link, the reset page and the confirmation said nothing of
// them, so an owner resetting a compromised account believed it shut out.
// Each now says the tokens keep working and where to revoke them.
func TestPasswordResetSaysTokensKeepWorking(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		ed := env.createUser(env.ws.ID, "ed@a.test", models.RoleEditor)
		_, token := env.apiToken(env.ws.ID, ed.ID)
		apiAsEd := func() int {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/judges", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			return rec.Code
		}
		issued := env.send(http.MethodPost, "/members/"+itoa(ed.ID)+"/reset", nil, "", env.sessionCookie(owner))
		m := onceLinkRE.FindStringSubmatch(issued.Body.String())
		if issued.Code != http.StatusOK || m == nil {
			t.Fatalf("issue reset = %d", issued.Code)
		}
		resetPage := env.get("/reset/" + m[2])
		done := env.send(http.MethodPost, "/reset/"+m[2], url.Values{"password": {"a brand new passphrase"}}, "")
		if done.Code != http.StatusSeeOther {
			t.Fatalf("reset = %d", done.Code)
		}
		for what, text := range map[string]string{
			"owner's reset link": issued.Body.String(), "reset page": resetPage.Body.String(), "confirmation": flashText(t, done),
		} {
			if !strings.Contains(text, "API tokens keep working") || !strings.Contains(text, "/tokens") {
				t.Errorf("%s does not say the API tokens keep working and where to revoke them", what)
			}
		}
		if code := apiAsEd(); code != http.StatusOK {
			t.Errorf("ed's token after the reset = %d, want 200 (tokens are kept, as the pages say)", code)
		}
	})
}
