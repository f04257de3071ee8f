package handlers

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestHSTSOverHTTPSOnly: an answer to a request that came over HTTPS (a
// trusted proxy saying so, or BATCHEVAL_SECURE_COOKIES for TLS ended in
// front) carries Strict-Transport-Security, pages and share pages alike;
// plain HTTP, and an untrusted peer claiming HTTPS, get none. There was
// none at all: after one visit over HTTPS, a typed http:// address still
// went out in clear, with the session cookie's path open to a downgrade.
func TestHSTSOverHTTPSOnly(t *testing.T) {
	env := newTestEnv(t, dbtest.Open(t, models.SQLite))
	proxies, err := ParseTrustedProxies("10.9.0.0/16")
	if err != nil {
		t.Fatal(err)
	}
	env.h.Network.TrustedProxies = proxies
	env.h.Network.Apply(env.e)
	for _, tc := range []struct {
		name, peer, proto string
		secureCookies     bool
		want              string
	}{
		{name: "trusted proxy, https", peer: "10.9.0.1:4000", proto: "https", want: hsts},
		{name: "trusted proxy, http", peer: "10.9.0.1:4000", proto: "http"},
		{name: "untrusted peer claiming https", peer: "198.51.100.4:4000", proto: "https"},
		{name: "plain HTTP", peer: "198.51.100.4:4000"},
		{name: "BATCHEVAL_SECURE_COOKIES", peer: "198.51.100.4:4000", secureCookies: true, want: hsts},
	} {
		env.h.SecureCookies = tc.secureCookies
		for _, path := range []string{"/login", "/s/no-such-token", "/no/such/page"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.RemoteAddr = tc.peer
			if tc.proto != "" {
				req.Header.Set(echo.HeaderXForwardedProto, tc.proto)
				req.Header.Set(echo.HeaderXForwardedFor, "203.0.113.9")
			}
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			if got := rec.Header().Get("Strict-Transport-Security"); got != tc.want {
				t.Errorf("%s, %s (%d): Strict-Transport-Security %q, want %q", tc.name, path, rec.Code, got, tc.want)
			}
		}
	}
	env.h.SecureCookies = false
}
