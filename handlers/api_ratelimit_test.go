package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestAPIRateLimitSharedByTwoServers: two server processes (handlers on
// their own connections to one database) share a token's limits. Past
// the requests a minute, either answers 429 rate_limited with Retry-After
// (the seconds left of the minute), as the document describes; past the
// launches a minute, a launch is refused though other requests pass;
// another token is not held back. There was no
// limit: every request was served.
func TestAPIRateLimitSharedByTwoServers(t *testing.T) {
	for _, d := range dbtest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			dsn := dbtest.DSN(t, d)
			env := newTestEnv(t, dbtest.OpenDSN(t, dsn))
			h2, e2 := newTestHandlers(t, dbtest.OpenDSN(t, dsn), env.runner, env.ws, env.sim.URL)
			env2 := *env
			env2.h, env2.e = h2, e2
			servers := []*apiClient{newAPIClient(t, env), newAPIClient(t, &env2)}
			for _, h := range []*Handlers{env.h, h2} {
				h.APIRateLimit, h.APILaunchRateLimit = 6, 2
			}
			user := env.createUser(env.ws.ID, "ci@a.test", models.RoleEditor)
			_, tok := env.apiToken(env.ws.ID, user.ID)
			_, other := env.apiToken(env.ws.ID, user.ID)
			// The counts are of one minute: start well inside one.
			if s := time.Now().Second(); s >= 50 {
				time.Sleep(time.Duration(61-s) * time.Second)
			}

			launch := fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID)
			refusedLaunch := map[string]any{"dataset_id": 999999, "rubric_id": 999999, "judge_id": 999999}
			// Two launches (refused by their checks, but launches all the
			// same), one on each server; the third is over the limit.
			for i, a := range servers {
				if rec := a.json(http.MethodPost, launch, tok, refusedLaunch); rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("launch %d: %d %s", i+1, rec.Code, rec.Body)
				}
			}
			rec := servers[0].json(http.MethodPost, launch, tok, refusedLaunch)
			checkRateLimited(t, rec, "nothing was launched", "BATCHEVAL_API_LAUNCH_RATE_LIMIT")
			// Requests 4 to 6 pass (a GET is no launch); the 7th, on either
			// server, is over.
			for i := 4; i <= 6; i++ {
				if rec := servers[i%2].get("/api/v1/projects", tok); rec.Code != http.StatusOK {
					t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
				}
			}
			for i, a := range servers {
				t.Logf("server %d", i+1)
				checkRateLimited(t, a.get("/api/v1/projects", tok), "its 6 API requests of this minute", "BATCHEVAL_API_RATE_LIMIT")
			}
			if rec := servers[1].get("/api/v1/projects", other); rec.Code != http.StatusOK {
				t.Errorf("another token: %d %s", rec.Code, rec.Body)
			}
			// The operator turns the limit off.
			env.h.APIRateLimit = 0
			if rec := servers[0].get("/api/v1/projects", tok); rec.Code != http.StatusOK {
				t.Errorf("no limit: %d %s", rec.Code, rec.Body)
			}
		})
	}
}

func checkRateLimited(t *testing.T, rec *httptest.ResponseRecorder, says ...string) {
	t.Helper()
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("%d, want 429: %s", rec.Code, rec.Body)
	}
	if s, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || s < 1 || s > 60 {
		t.Errorf("Retry-After %q, want 1 to 60 seconds", rec.Header().Get("Retry-After"))
	}
	if code := errorCode(t, rec); code != "rate_limited" {
		t.Errorf("429 code %q", code)
	}
	msg := decode[APIError](t, rec, http.StatusTooManyRequests).Error.Message
	for _, s := range says {
		if !strings.Contains(msg, s) {
			t.Errorf("%q does not say %q", msg, s)
		}
	}
}
