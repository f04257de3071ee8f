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
// another token is not held back. Every answer carries the RateLimit
// header fields; the limit holds across the turn of a minute. (There was
// no limit; then the answers said nothing of it, and a new minute gave a
// new allowance at once.)
func TestAPIRateLimitSharedByTwoServers(t *testing.T) {
	parallelTest(t)
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
			// The servers' requests are counted at one moment (the limits'
			// clock held still): what the headers say is then exact.
			at := time.Date(2026, 12, 5, 12, 0, 59, 0, time.UTC)
			for _, h := range []*Handlers{env.h, h2} {
				h.rateClock = func() time.Time { return at }
			}

			launch := fmt.Sprintf("/api/v1/projects/%d/runs", env.project.ID)
			refusedLaunch := map[string]any{"dataset_id": 999999, "rubric_id": 999999, "judge_id": 999999}
			// Two launches (refused by their checks, but launches all the
			// same), one on each server; the third is over the limit.
			// Each answer says where the token stands (RateLimit-Policy,
			// RateLimit): a launch under both limits.
			for i, a := range servers {
				rec := a.json(http.MethodPost, launch, tok, refusedLaunch)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("launch %d: %d %s", i+1, rec.Code, rec.Body)
				}
				checkRateHeaders(t, rec, `"requests";q=6;w=60, "launches";q=2;w=60`,
					fmt.Sprintf(`"requests";r=%d;t=%d, "launches";r=%d;t=%d`, 5-i, 10*(i+1), 1-i, 30*(i+1)))
			}
			rec := servers[0].json(http.MethodPost, launch, tok, refusedLaunch)
			checkRateLimited(t, rec, "nothing was launched", "BATCHEVAL_API_LAUNCH_RATE_LIMIT")
			checkRateHeaders(t, rec, `"requests";q=6;w=60, "launches";q=2;w=60`, `"requests";r=3;t=30, "launches";r=0;t=60`)
			if got := rec.Header().Get("Retry-After"); got != "30" {
				t.Errorf("refused launch: Retry-After %q, want 30 (a launch comes back every 30 s)", got)
			}
			// Requests 4 to 6 pass (a GET is no launch); the 7th, on either
			// server, is over.
			for i := 4; i <= 6; i++ {
				rec := servers[i%2].get("/api/v1/projects", tok)
				if rec.Code != http.StatusOK {
					t.Fatalf("request %d: %d %s", i, rec.Code, rec.Body)
				}
				checkRateHeaders(t, rec, `"requests";q=6;w=60`, fmt.Sprintf(`"requests";r=%d;t=%d`, 6-i, 10*i))
			}
			for i, a := range servers {
				t.Logf("server %d", i+1)
				rec := a.get("/api/v1/projects", tok)
				checkRateLimited(t, rec, "its 6 API requests of this minute", "BATCHEVAL_API_RATE_LIMIT")
				checkRateHeaders(t, rec, `"requests";q=6;w=60`, `"requests";r=0;t=60`)
				if got := rec.Header().Get("Retry-After"); got != "10" {
					t.Errorf("refused request: Retry-After %q, want 10 (a request comes back every 10 s)", got)
				}
			}
			// Across the turn of the minute, a second later: what that
			// second gave back (6/60 of a request: none), not a new minute's
			// six. Ten seconds on, one request.
			at = at.Add(time.Second)
			checkRateLimited(t, servers[1].get("/api/v1/projects", tok), "its 6 API requests")
			at = at.Add(9 * time.Second)
			if rec := servers[0].get("/api/v1/projects", tok); rec.Code != http.StatusOK {
				t.Errorf("ten seconds after the limit: %d %s", rec.Code, rec.Body)
			}
			checkRateLimited(t, servers[1].get("/api/v1/projects", tok), "its 6 API requests")
			if rec := servers[1].get("/api/v1/projects", other); rec.Code != http.StatusOK {
				t.Errorf("another token: %d %s", rec.Code, rec.Body)
			}
			// The operator turns the limit off: no RateLimit fields either.
			env.h.APIRateLimit = 0
			if rec := servers[0].get("/api/v1/projects", tok); rec.Code != http.StatusOK || rec.Header().Get("RateLimit") != "" || rec.Header().Get("RateLimit-Policy") != "" {
				t.Errorf("no limit: %d %v %s", rec.Code, rec.Header(), rec.Body)
			}
		})
	}
}

func checkRateHeaders(t *testing.T, rec *httptest.ResponseRecorder, policy, left string) {
	t.Helper()
	if got := rec.Header().Get("RateLimit-Policy"); got != policy {
		t.Errorf("RateLimit-Policy %q, want %q", got, policy)
	}
	if got := rec.Header().Get("RateLimit"); got != left {
		t.Errorf("RateLimit %q, want %q", got, left)
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
