package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// scrapeMetrics asks for /metrics as Prometheus on this machine would.
func (env *testEnv) scrapeMetrics() *httptest.ResponseRecorder {
	env.t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.RemoteAddr = "127.0.0.1:40000"
	rec := httptest.NewRecorder()
	env.e.ServeHTTP(rec, req)
	return rec
}

// TestMetricsAccess: /metrics covers every workspace, so once accounts
// exist it was a leak to serve it to anyone (judge names of every
// workspace). With a metrics token it takes that token and nothing else;
// without one it answers only this machine, never a request forwarded by
// a proxy for someone else. A session, an owner's included, opens nothing.
func TestMetricsAccess(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		owner := env.createUser(env.ws.ID, "owner@metrics.test", models.RoleOwner)
		const token = "metrics-s3cret-token"
		tests := []struct {
			name    string
			token   string // the server's metrics token
			proxies string // trusted proxies
			remote  string
			header  map[string]string
			session bool
			want    int
		}{
			{name: "no token set, from afar", remote: "192.0.2.1:5000", want: http.StatusForbidden},
			{name: "no token set, owner's session from afar", remote: "192.0.2.1:5000", session: true, want: http.StatusForbidden},
			{name: "no token set, a stray bearer from afar", remote: "192.0.2.1:5000", header: map[string]string{"Authorization": "Bearer " + token}, want: http.StatusForbidden},
			{name: "no token set, IPv4 loopback", remote: "127.0.0.1:5000", want: http.StatusOK},
			{name: "no token set, IPv6 loopback", remote: "[::1]:5000", want: http.StatusOK},
			{name: "no token set, forwarded by an unlisted proxy on this machine", remote: "127.0.0.1:5000",
				header: map[string]string{"X-Forwarded-For": "198.51.100.7"}, want: http.StatusForbidden},
			{name: "no token set, forwarded by a trusted proxy for a client afar", proxies: "127.0.0.1", remote: "127.0.0.1:5000",
				header: map[string]string{"X-Forwarded-For": "198.51.100.7"}, want: http.StatusForbidden},
			{name: "no token set, spoofed X-Forwarded-For from afar", remote: "192.0.2.1:5000",
				header: map[string]string{"X-Forwarded-For": "127.0.0.1"}, want: http.StatusForbidden},
			{name: "token set, none sent", token: token, remote: "192.0.2.1:5000", want: http.StatusUnauthorized},
			{name: "token set, none sent from loopback", token: token, remote: "127.0.0.1:5000", want: http.StatusUnauthorized},
			{name: "token set, wrong one", token: token, remote: "192.0.2.1:5000",
				header: map[string]string{"Authorization": "Bearer " + token + "x"}, want: http.StatusUnauthorized},
			{name: "token set, empty bearer", token: token, remote: "192.0.2.1:5000",
				header: map[string]string{"Authorization": "Bearer "}, want: http.StatusUnauthorized},
			{name: "token set, owner's session only", token: token, remote: "192.0.2.1:5000", session: true, want: http.StatusUnauthorized},
			{name: "token set, the token from afar", token: token, remote: "192.0.2.1:5000",
				header: map[string]string{"Authorization": "Bearer " + token}, want: http.StatusOK},
			{name: "token set, the token, scheme in lower case", token: token, remote: "192.0.2.1:5000",
				header: map[string]string{"Authorization": "bearer " + token}, want: http.StatusOK},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				env.h.MetricsToken = tc.token
				proxies, err := ParseTrustedProxies(tc.proxies)
				if err != nil {
					t.Fatal(err)
				}
				env.h.Network.TrustedProxies = proxies
				env.h.Network.Apply(env.e)
				t.Cleanup(func() {
					env.h.MetricsToken, env.h.Network.TrustedProxies = "", []netip.Prefix(nil)
					env.h.Network.Apply(env.e)
				})
				req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
				req.RemoteAddr = tc.remote
				for k, v := range tc.header {
					req.Header.Set(k, v)
				}
				if tc.session {
					req.AddCookie(env.sessionCookie(owner))
				}
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				body := rec.Body.String()
				if rec.Code != tc.want {
					t.Fatalf("got %d, want %d (body %.300q)", rec.Code, tc.want, body)
				}
				switch tc.want {
				case http.StatusOK:
					if !strings.Contains(body, "batcheval_runs{") {
						t.Errorf("no metrics in the answer: %.300q", body)
					}
				case http.StatusUnauthorized:
					if rec.Header().Get("WWW-Authenticate") != metricsRealm || !strings.Contains(body, "metrics token") {
						t.Errorf("401 without the challenge or the way out: %q, %.300q", rec.Header().Get("WWW-Authenticate"), body)
					}
				case http.StatusForbidden:
					if !strings.Contains(body, "BATCHEVAL_METRICS_TOKEN") {
						t.Errorf("403 does not say how to scrape from elsewhere: %.300q", body)
					}
				}
				if strings.Contains(body, "batcheval_runs{") != (tc.want == http.StatusOK) {
					t.Errorf("metrics shown with status %d", rec.Code)
				}
			})
		}
	})
}

// TestRequireMetricsToken: a worker's own metrics listener takes the
// token when one is set, and is left to its address when none is.
func TestRequireMetricsToken(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("metrics")) })
	tests := []struct {
		name, token, auth string
		want              int
	}{
		{"no token set", "", "", http.StatusOK},
		{"token set, none sent", "t0ken", "", http.StatusUnauthorized},
		{"token set, wrong one", "t0ken", "Bearer t0ke", http.StatusUnauthorized},
		{"token set, basic scheme", "t0ken", "Basic t0ken", http.StatusUnauthorized},
		{"token set, the token", "t0ken", "Bearer t0ken", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			RequireMetricsToken(tc.token, ok).ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("got %d, want %d", rec.Code, tc.want)
			}
			if tc.want == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") != metricsRealm {
				t.Errorf("401 without the challenge")
			}
		})
	}
}
