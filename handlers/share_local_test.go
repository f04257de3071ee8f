package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
)

// A share link made on a dashboard reached as this computer (127.0.0.1,
// localhost, ::1: the address `make run` prints) opens on no one else's
// computer; the page says so and what to send instead. A link with a
// name others can reach carries no such warning.
func TestShareLinkOnThisComputerSaysSo(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 60*time.Second)
		cases := []struct {
			host     string
			wantWarn bool
		}{
			{"127.0.0.1:8080", true},
			{"localhost:8080", true},
			{"[::1]:8080", true},
			{"example.com", false},
		}
		for _, tc := range cases {
			t.Run(tc.host, func(t *testing.T) {
				form := url.Values{"kind": {"run"}, "run_id": {strconv.FormatInt(run.ID, 10)}, "expires": {"7d"}}
				req := httptest.NewRequest(http.MethodPost, "/shares", strings.NewReader(form.Encode()))
				req.Host = tc.host
				req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				body := rec.Body.String()
				if rec.Code != http.StatusOK || !strings.Contains(body, `data-testid="share-url"`) {
					t.Fatalf("status %d, no new link: %s", rec.Code, body)
				}
				i := strings.Index(body, `data-testid="share-this-computer-only"`)
				if (i >= 0) != tc.wantWarn {
					t.Fatalf("warning shown %v, want %v", i >= 0, tc.wantWarn)
				}
				if !tc.wantWarn {
					return
				}
				warn := body[i : i+strings.Index(body[i:], "</p>")]
				for _, want := range []string{"only on this computer", "HTML report", "Deploying for a team"} {
					if !strings.Contains(warn, want) {
						t.Errorf("the warning lacks %q: %s", want, warn)
					}
				}
			})
		}
	})
}
