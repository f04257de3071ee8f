package handlers

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestUnroutedAddressesSayWhatToDo: an address no route answers said only
// "Not Found", and a button's address opened as a page (a POST-only route
// such as /runs/1/pause, opened from the history or reloaded) only "Method
// Not Allowed", on the page as in the API's JSON. Each now says what
// happened and what to do; the statuses are unchanged.
func TestUnroutedAddressesSayWhatToDo(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range []struct {
			method, path string
			status       int
			want         []string
		}{
			{http.MethodGet, "/no-such-page", http.StatusNotFound, []string{"no page at this address", "typo"}},
			{http.MethodGet, fmt.Sprintf("/projects/%d/pause", env.project.ID), http.StatusNotFound, []string{"no page at this address"}},
			{http.MethodGet, "/runs/1/pause", http.StatusMethodNotAllowed, []string{"a button", "(POST)", "Go back to the page and use its button"}},
			{http.MethodGet, "/api/v1/runz", http.StatusNotFound, []string{`"code":"not_found"`, "no endpoint at GET /api/v1/runz", "/api/v1/openapi.json"}},
			{http.MethodDelete, "/api/v1/projects", http.StatusMethodNotAllowed, []string{`"code":"method_not_allowed"`, "DELETE /api/v1/projects is not an endpoint", "takes GET or POST"}},
		} {
			rec := env.do(tc.method, tc.path, nil, "")
			if rec.Code != tc.status {
				t.Errorf("%s %s = %d, want %d", tc.method, tc.path, rec.Code, tc.status)
				continue
			}
			body := rec.Body.String()
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("%s %s: the answer lacks %q:\n%.600s", tc.method, tc.path, w, body)
				}
			}
			for _, bare := range []string{`"error-message">Not Found<`, `"error-message">Method Not Allowed<`, `"message":"Not Found"`, `"message":"Method Not Allowed"`} {
				if strings.Contains(body, bare) {
					t.Errorf("%s %s still answers the bare %s", tc.method, tc.path, bare)
				}
			}
		}
	})
}
