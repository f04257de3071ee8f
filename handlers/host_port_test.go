package handlers

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestHostWithBadPortRefused: an allowed name with a port that is no
// port (letters, punctuation, out of range) is refused with 421 like a
// name the server does not answer to. The address a share link, an invite
// link or (in local mode without a base URL) a mailed link names is built
// from the Host the request sent: the allowlist compared the name alone,
// so POST /api/v1/shares with Host "localhost:80;evil.example" answered
// 201 with the link http://localhost:80;evil.example/s/..., an address
// the sender chose and no browser reaches this server at.
func TestHostWithBadPortRefused(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		f := newMatrixFixture(t, env)
		env.h.Network = NetworkPolicy{AllowedHosts: []string{"localhost", "127.0.0.1", "::1"}}
		for _, tc := range []struct {
			host string
			want int
		}{
			{"localhost:8080", http.StatusCreated},
			{"localhost", http.StatusCreated},
			{"[::1]:65535", http.StatusCreated},
			{"127.0.0.1:1", http.StatusCreated},
			{"localhost:80;evil.example", http.StatusMisdirectedRequest},
			{"localhost:80,evil.example", http.StatusMisdirectedRequest},
			{"localhost:80!.evil.example", http.StatusMisdirectedRequest},
			{"localhost:80%2F%2Fevil.example", http.StatusMisdirectedRequest},
			{"localhost:abc", http.StatusMisdirectedRequest},
			{"localhost:99999", http.StatusMisdirectedRequest},
			{"localhost:0", http.StatusMisdirectedRequest},
			{"localhost:+80", http.StatusMisdirectedRequest},
			{"[::1]:8o", http.StatusMisdirectedRequest},
		} {
			req := httptest.NewRequest(http.MethodPost, "/api/v1/shares", strings.NewReader(`{"kind":"run","run_id":`+strconv.FormatInt(f.run.ID, 10)+`}`))
			req.Host = tc.host
			req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
			req.Header.Set("Authorization", "Bearer "+f.tokens[f.editor.ID])
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			body := rec.Body.String()
			if rec.Code != tc.want {
				t.Errorf("Host %q: %d, want %d (%.200q)", tc.host, rec.Code, tc.want, body)
				continue
			}
			if tc.want == http.StatusCreated && !strings.Contains(body, `"url":"http://`+tc.host+`/s/`) {
				t.Errorf("Host %q: the link does not name the host asked for: %.300q", tc.host, body)
			}
			if tc.want == http.StatusMisdirectedRequest && (!strings.Contains(body, "not a port number") || !strings.Contains(body, strconv.Quote(tc.host))) {
				t.Errorf("Host %q: the refusal does not say what is wrong: %q", tc.host, body)
			}
		}
		// Only the allowed hosts' requests made a link.
		links, err := env.db.ListShareLinks(t.Context(), env.ws.ID)
		must(t, err)
		if len(links) != 1+4 { // the fixture's and the four allowed ones
			t.Errorf("%d share links, want 5", len(links))
		}
	})
}
