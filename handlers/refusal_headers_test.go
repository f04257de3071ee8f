package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestRefusalsCarryTheSecurityHeaders: the answers of the checks that run
// before a route (a cross-site post refused with 403, a form body over
// its limit with 413, a host name not allowed with 421) carry the CSP,
// X-Frame-Options and nosniff as every other answer does (README:
// "Every answer carries a Content-Security-Policy"). They had none: the
// 403 and 413 are HTML pages of this site (with the theme form in their
// header), which a page of any site could post into a frame of its own,
// and the 421 text quoting the Host name went without nosniff.
func TestRefusalsCarryTheSecurityHeaders(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	u := env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
	ck := env.sessionCookie(u)
	for _, tc := range []struct {
		name string
		req  func() *http.Request
		code int
	}{
		{"cross-site post", func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/theme", strings.NewReader(url.Values{"theme": {"dark"}, "back": {"/"}}.Encode()))
			r.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			r.Header.Set("Origin", "https://elsewhere.example")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
			return r
		}, http.StatusForbidden},
		{"form body over its limit", func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, "/theme", strings.NewReader("theme=dark&back="+strings.Repeat("a", maxFormBody+10)))
			r.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			return r
		}, http.StatusRequestEntityTooLarge},
		{"host name not allowed", func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Host = "rebound.example"
			return r
		}, http.StatusMisdirectedRequest},
	} {
		req := tc.req()
		req.AddCookie(ck)
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		if rec.Code != tc.code {
			t.Errorf("%s: %d, want %d", tc.name, rec.Code, tc.code)
		}
		h := rec.Header()
		if csp := h.Get("Content-Security-Policy"); csp != contentSecurityPolicy {
			t.Errorf("%s (%d): Content-Security-Policy %q, want %q", tc.name, rec.Code, csp, contentSecurityPolicy)
		}
		for name, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"} {
			if got := h.Get(name); got != want {
				t.Errorf("%s (%d): %s = %q, want %q", tc.name, rec.Code, name, got, want)
			}
		}
	}
}
