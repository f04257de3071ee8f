package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestRelayedRequestIsNotTheLocalUser: a loopback server with no account
// treats whoever reaches it as its local user, owner of the default
// workspace, on the grounds that only people on this machine reach a
// loopback address. A reverse proxy on the same machine (nginx or Caddy
// in front of `serve --addr 127.0.0.1:8080`, listed as trusted or not)
// breaks those grounds: every visitor of the proxy reached the dashboard
// as its owner, and the first to open /setup made themselves its owner.
// A request that carries a forwarding header naming a client elsewhere
// is now nobody's: pages ask for a sign-in, the API answers 401, and
// /setup is refused with a way forward; a request straight from this
// machine, or relayed for a client on it, stays the local user's.
func TestRelayedRequestIsNotTheLocalUser(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		proxies, err := ParseTrustedProxies("127.0.0.1")
		must(t, err)
		cases := []struct {
			name    string
			trusted bool
			peer    string
			headers map[string]string
			local   bool
		}{
			{name: "straight from this machine", peer: "127.0.0.1:50000", local: true},
			{name: "an unlisted proxy on this machine, X-Forwarded-For", peer: "127.0.0.1:50000",
				headers: map[string]string{"X-Forwarded-For": "203.0.113.9"}},
			{name: "an unlisted proxy on this machine, Forwarded", peer: "127.0.0.1:50000",
				headers: map[string]string{"Forwarded": "for=203.0.113.9"}},
			{name: "an unlisted proxy on this machine, X-Real-IP", peer: "127.0.0.1:50000",
				headers: map[string]string{"X-Real-IP": "203.0.113.9"}},
			{name: "a trusted proxy, for a client elsewhere", trusted: true, peer: "127.0.0.1:50000",
				headers: map[string]string{"X-Forwarded-For": "203.0.113.9"}},
			{name: "a trusted proxy, for a client on this machine", trusted: true, peer: "127.0.0.1:50000",
				headers: map[string]string{"X-Forwarded-For": "127.0.0.1"}, local: true},
		}
		for _, tc := range cases {
			env.h.Network.TrustedProxies = nil
			if tc.trusted {
				env.h.Network.TrustedProxies = proxies
			}
			env.h.Network.Apply(env.e)
			send := func(method, path string, form url.Values) *httptest.ResponseRecorder {
				var req *http.Request
				if form != nil {
					req = httptest.NewRequest(method, path, strings.NewReader(form.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				} else {
					req = httptest.NewRequest(method, path, nil)
				}
				req.RemoteAddr = tc.peer
				for k, v := range tc.headers {
					req.Header.Set(k, v)
				}
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				return rec
			}
			page, api := send(http.MethodGet, "/", nil), send(http.MethodGet, "/api/v1/projects", nil)
			setupPage := send(http.MethodGet, "/setup", nil)
			if tc.local {
				if page.Code != http.StatusOK || api.Code != http.StatusOK || setupPage.Code != http.StatusOK {
					t.Errorf("%s: projects page %d, API %d, setup page %d, want 200 (the local user)", tc.name, page.Code, api.Code, setupPage.Code)
				}
				continue
			}
			if page.Code != http.StatusUnauthorized || api.Code != http.StatusUnauthorized {
				t.Errorf("%s: projects page %d, API %d, want 401 (not the local user)", tc.name, page.Code, api.Code)
			}
			if setupPage.Code != http.StatusForbidden || !strings.Contains(setupPage.Body.String(), "admin create-user") {
				t.Errorf("%s: setup page %d, want 403 saying how to make the first owner (%.300q)", tc.name, setupPage.Code, setupPage.Body.String())
			}
			rec := send(http.MethodPost, "/setup", url.Values{"email": {"mallory@example.com"}, "name": {"Mallory"}, "password": {"correct horse battery staple 9"}})
			exist, err := env.db.HasUsers(context.Background())
			must(t, err)
			if rec.Code != http.StatusForbidden || exist {
				t.Fatalf("%s: POST /setup %d, an account made: %v; want 403 and none", tc.name, rec.Code, exist)
			}
		}
	})
}
