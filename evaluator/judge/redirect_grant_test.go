package judge

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// TestRedirectAdviceAsksTheGrant: the advice after a judge's redirect
// judged its target by the operator's settings alone, so a workspace
// without the grant whose judge redirected to a private address was told
// to use that address as its base URL, one its calls are refused. The
// target is now judged under the client's own policy, the workspace's
// grant included; redirects are still never followed.
func TestRedirectAdviceAsksTheGrant(t *testing.T) {
	const location = "http://10.0.0.5:8000/v1/chat/completions"
	refuse := func(context.Context) error {
		return errors.New("private-network and loopback addresses need the operator's grant for this workspace (batcheval admin network grant anyones)")
	}
	for _, tc := range []struct {
		name    string
		grant   Grant
		offered bool
	}{
		{"no grant asked (the default workspace)", nil, true},
		{"granted", func(context.Context) error { return nil }, true},
		{"not granted", refuse, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			redirector := newFake(t, reply{status: http.StatusTemporaryRedirect, header: map[string]string{"Location": location}})
			u, _ := url.Parse(redirector.srv.URL)
			fake := netip.MustParseAddrPort(u.Host)
			// The fake judge is on loopback, let through by AllowAddrs
			// (which asks no grant); the redirect leads to a private
			// address the operator allows.
			p := Egress{AllowPrivate: true, AllowAddrs: []netip.AddrPort{fake}, Grant: tc.grant}
			cfg := testConfig(redirector)
			cfg.HTTPClient = p.HTTPClient()
			_, err := mustNew(t, cfg).Complete(t.Context(), simpleRequest())
			e := judgeError(t, err)
			text := e.Error()
			if e.Kind != KindRefused || e.Status != http.StatusTemporaryRedirect {
				t.Fatalf("error %+v (%q), want refused, 307", e, text)
			}
			if got := redirector.hits(); got != 1 {
				t.Errorf("%d calls reached the judge, want 1 (redirects are never followed)", got)
			}
			offered := strings.Contains(text, "use the address it redirects to") && strings.Contains(text, "it points to http://10.0.0.5:8000")
			if offered != tc.offered {
				t.Fatalf("target offered %v, want %v: %q", offered, tc.offered, text)
			}
			if !tc.offered {
				if strings.Contains(text, "10.0.0.5") {
					t.Errorf("the error names the refused target: %q", text)
				}
				if !strings.Contains(text, "the redirect is refused") || !strings.Contains(text, "batcheval admin network grant anyones") {
					t.Errorf("the error does not say the redirect is refused for want of the grant: %q", text)
				}
			}
		})
	}
}
