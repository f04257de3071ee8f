package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

// TestHostAllowlist: a request whose Host is not one the server answers to
// (what a DNS-rebinding page sends) is refused with 421 and a message, on
// every route but the health checks; allowed names pass whatever their
// case, port or brackets.
func TestHostAllowlist(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		env.h.Network = NetworkPolicy{AllowedHosts: []string{"localhost", "127.0.0.1", "::1", "evals.example.org"}}
		for _, tc := range []struct {
			host, path string
			want       int
		}{
			{"localhost:8080", "/", http.StatusOK},
			{"LOCALHOST.:8080", "/", http.StatusOK},
			{"127.0.0.1:8080", "/judges", http.StatusOK},
			{"[::1]:8080", "/", http.StatusOK},
			{"evals.example.org", "/", http.StatusOK},
			{"rebind.attacker.example:8080", "/", http.StatusMisdirectedRequest},
			{"rebind.attacker.example", "/judges", http.StatusMisdirectedRequest},
			{"127.0.0.1.nip.io:8080", "/", http.StatusMisdirectedRequest},
			{"evals.example.org.attacker.example", "/", http.StatusMisdirectedRequest},
			{"", "/", http.StatusMisdirectedRequest},
			{"rebind.attacker.example", "/healthz", http.StatusOK},
		} {
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			req.Host = tc.host
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("Host %q %s = %d, want %d", tc.host, tc.path, rec.Code, tc.want)
			}
			if tc.want == http.StatusMisdirectedRequest && !strings.Contains(rec.Body.String(), "BATCHEVAL_ALLOWED_HOSTS") {
				t.Errorf("Host %q: the refusal does not say what to do: %q", tc.host, rec.Body)
			}
		}
		// A form post to a rebinding name stores nothing.
		before, _ := env.db.ListProjects(t.Context(), env.ws.ID)
		req := httptest.NewRequest(http.MethodPost, "/projects", strings.NewReader("name=rebound"))
		req.Host = "rebind.attacker.example"
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		after, _ := env.db.ListProjects(t.Context(), env.ws.ID)
		if rec.Code != http.StatusMisdirectedRequest || len(after) != len(before) {
			t.Errorf("rebound post = %d, projects %d -> %d", rec.Code, len(before), len(after))
		}
	})
}

// TestDefaultAllowedHosts: with no list, the loopback names are allowed
// and nothing else.
func TestDefaultAllowedHosts(t *testing.T) {
	var p NetworkPolicy
	for host, want := range map[string]bool{"localhost:1": true, "127.0.0.1": true, "[::1]:9": true, "example.com": false, "10.0.0.1": false} {
		if got := p.allowedHost(host); got != want {
			t.Errorf("allowedHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestTrustedProxies: X-Forwarded-For and X-Forwarded-Proto are believed
// from a trusted proxy only; from anyone else they are dropped, so a client
// can neither choose its address nor pass plain HTTP off as HTTPS.
func TestTrustedProxies(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		proxies, err := ParseTrustedProxies("10.1.0.0/16, 192.0.2.7")
		if err != nil {
			t.Fatal(err)
		}
		env.h.Network.TrustedProxies = proxies
		env.h.Network.Apply(env.e)
		env.e.GET("/test/whoami", func(c echo.Context) error { return c.String(http.StatusOK, c.Scheme()+" "+c.RealIP()) })
		for _, tc := range []struct{ peer, want string }{
			{"10.1.2.3:5000", "https 203.0.113.9"},
			{"192.0.2.7:5000", "https 203.0.113.9"},
			{"198.51.100.4:5000", "http 198.51.100.4"},
			{"127.0.0.1:5000", "http 127.0.0.1"},
		} {
			req := httptest.NewRequest(http.MethodGet, "/test/whoami", nil)
			req.RemoteAddr = tc.peer
			req.Header.Set(echo.HeaderXForwardedFor, "203.0.113.9")
			req.Header.Set(echo.HeaderXForwardedProto, "https")
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			if got := rec.Body.String(); got != tc.want {
				t.Errorf("from %s: scheme and address %q, want %q", tc.peer, got, tc.want)
			}
		}
	})
	if _, err := ParseTrustedProxies("10.0.0.0/8,not-an-address"); err == nil {
		t.Error("a malformed proxy was accepted")
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	got, err := ParseTrustedProxies("10.9.9.9/8, ::1")
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ParseTrustedProxies = %v, %v; want %v", got, err, want)
	}
}

// TestReferrerPolicy: every answer tells the browser not to send page
// addresses (ids, upload tokens) to other sites.
func TestReferrerPolicy(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, path := range []string{"/", "/judges", "/no/such/page"} {
			if got := env.get(path).Header().Get("Referrer-Policy"); got != "same-origin" {
				t.Errorf("%s: Referrer-Policy %q, want same-origin", path, got)
			}
		}
	})
}

// TestSecureCookieBehindTrustedProxy: the flash cookie is Secure when a
// trusted proxy says the request came over HTTPS, and not when anyone else
// says so.
func TestSecureCookieBehindTrustedProxy(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		proxies, _ := ParseTrustedProxies("10.9.0.0/16")
		env.h.Network.TrustedProxies = proxies
		env.h.Network.Apply(env.e)
		for _, tc := range []struct {
			peer   string
			secure bool
		}{{"10.9.0.1:4000", true}, {"198.51.100.4:4000", false}} {
			req := httptest.NewRequest(http.MethodPost, "/projects", strings.NewReader("name=cookie+"+tc.peer))
			req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			req.Header.Set(echo.HeaderXForwardedProto, "https")
			req.RemoteAddr = tc.peer
			rec := httptest.NewRecorder()
			env.e.ServeHTTP(rec, req)
			cks := rec.Result().Cookies()
			if rec.Code != http.StatusSeeOther || len(cks) == 0 {
				t.Fatalf("from %s: status %d, %d cookies", tc.peer, rec.Code, len(cks))
			}
			if cks[0].Secure != tc.secure {
				t.Errorf("from %s: cookie Secure = %v, want %v", tc.peer, cks[0].Secure, tc.secure)
			}
		}
	})
}
