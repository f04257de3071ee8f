package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// TestSessionCookieSecureBehindTrustedProxy: behind a TLS-terminating
// proxy listed in the trusted proxies, the session cookie set at sign-in is
// Secure when the proxy says the request came over HTTPS, without
// BATCHEVAL_SECURE_COOKIES (README, Security: X-Forwarded-Proto is believed
// "for Secure cookies"); the same header from anyone else, or the proxy
// saying plain HTTP, leaves it off. The session cookie used to look at the
// connection and the setting only.
func TestSessionCookieSecureBehindTrustedProxy(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		env.createUser(env.ws.ID, "ada@a.test", models.RoleOwner)
		proxies, err := ParseTrustedProxies("10.9.0.0/16")
		if err != nil {
			t.Fatal(err)
		}
		env.h.Network.TrustedProxies = proxies
		env.h.Network.Apply(env.e)
		for _, tc := range []struct {
			name, peer, proto string
			wantSecure        bool
		}{
			{"trusted proxy, https", "10.9.0.1:4000", "https", true},
			{"trusted proxy, http", "10.9.0.1:4000", "http", false},
			{"untrusted peer claiming https", "198.51.100.4:4000", "https", false},
			{"untrusted peer, no header", "198.51.100.4:4000", "", false},
		} {
			form := url.Values{"email": {"ada@a.test"}, "password": {testPassword}}
			req := httptest.NewRequest(http.MethodPost, "/login", strings.NewReader(form.Encode()))
			req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			req.RemoteAddr = tc.peer
			if tc.proto != "" {
				req.Header.Set(echo.HeaderXForwardedProto, tc.proto)
				req.Header.Set(echo.HeaderXForwardedFor, "203.0.113.9")
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			ck := env.sessionFrom(rec)
			if rec.Code != http.StatusSeeOther || ck == nil {
				t.Fatalf("%s: sign-in = %d, session cookie %v", tc.name, rec.Code, ck)
			}
			if ck.Secure != tc.wantSecure {
				t.Errorf("%s: session cookie Secure = %v, want %v", tc.name, ck.Secure, tc.wantSecure)
			}
			if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode {
				t.Errorf("%s: session cookie HttpOnly=%v SameSite=%v", tc.name, ck.HttpOnly, ck.SameSite)
			}
			// Signing out clears the cookie with the same flag.
			out := httptest.NewRequest(http.MethodPost, "/logout", nil)
			out.RemoteAddr = tc.peer
			if tc.proto != "" {
				out.Header.Set(echo.HeaderXForwardedProto, tc.proto)
			}
			out.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
			rec = httptest.NewRecorder()
			env.e.ServeHTTP(rec, out)
			cleared := env.sessionFrom(rec)
			if rec.Code != http.StatusSeeOther || cleared == nil || cleared.MaxAge >= 0 {
				t.Fatalf("%s: sign-out = %d, cookie %v", tc.name, rec.Code, cleared)
			}
			if cleared.Secure != tc.wantSecure {
				t.Errorf("%s: cleared cookie Secure = %v, want %v", tc.name, cleared.Secure, tc.wantSecure)
			}
		}
	})
}
