package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestAPITokenUnderAnotherScheme (tryout46): a token sent in an
// Authorization header under another scheme than Bearer ("token bev_…" as
// some APIs take it, the bare token, Basic) gets 401 saying the header was
// not read and how to write it, never echoing the header (it may be the
// secret). Before, it was told "Sign in first", as if it had sent nothing,
// and looked for a sign-in the API does not have. No header at all still
// says to sign in with a token; Bearer keeps working.
func TestAPITokenUnderAnotherScheme(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		u := env.createUser(env.ws.ID, "scheme@a.test", models.RoleViewer)
		_, secret := env.apiToken(env.ws.ID, u.ID)
		for _, tc := range []struct {
			name, header string
			want         int
			says         []string
		}{
			{"GitHub's token scheme", "token " + secret, http.StatusUnauthorized, []string{"not as a Bearer token", "Authorization: Bearer <token>"}},
			{"the bare token", secret, http.StatusUnauthorized, []string{"not as a Bearer token", "Authorization: Bearer <token>"}},
			{"Basic", "Basic Ym9iOnNlY3JldA==", http.StatusUnauthorized, []string{"not as a Bearer token"}},
			{"no header", "", http.StatusUnauthorized, []string{"Sign in first", "Authorization: Bearer <token>"}},
			{"a token not copied whole", "Bearer " + secret[:len(secret)-1], http.StatusUnauthorized, []string{"not valid", "make a new one on the API tokens page (/tokens)"}},
			{"Bearer", "Bearer " + secret, http.StatusOK, nil},
			{"bearer in lower case", "bearer " + secret, http.StatusOK, nil},
		} {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/projects", nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("%s: %d %.300s, want %d", tc.name, rec.Code, rec.Body, tc.want)
				continue
			}
			if tc.want != http.StatusUnauthorized {
				continue
			}
			var e APIError
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Code != "unauthorized" {
				t.Errorf("%s: body %.300s is not an unauthorized error (%v)", tc.name, rec.Body, err)
			}
			for _, s := range tc.says {
				if !strings.Contains(e.Error.Message, s) {
					t.Errorf("%s: %q lacks %q", tc.name, e.Error.Message, s)
				}
			}
			if strings.Contains(rec.Body.String(), secret[4:]) {
				t.Errorf("%s: the refusal echoes the token: %s", tc.name, rec.Body)
			}
			if !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: 401 without WWW-Authenticate: Bearer", tc.name)
			}
		}
	})
}
