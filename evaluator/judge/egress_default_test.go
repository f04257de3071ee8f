package judge

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain opts this package's tests in to loopback judges: their fake
// endpoints listen on 127.0.0.1, which the default policy refuses. A test
// of the default itself unsets it (unsetEgress).
func TestMain(m *testing.M) {
	SetEgress(Egress{AllowLoopback: true})
	os.Exit(m.Run())
}

// unsetEgress puts the package back as if SetEgress had never been called,
// for the rest of t.
func unsetEgress(t *testing.T) {
	p, c := currentPolicy.Load(), defaultClient.Load()
	currentPolicy.Store(nil)
	defaultClient.Store(nil)
	t.Cleanup(func() {
		currentPolicy.Store(p)
		defaultClient.Store(c)
	})
}

// TestDefaultEgressIsSafe: a process that never sets the policy (a command
// that forgets to, a library user) gets the safe one, not an open one: a
// judge without a client of its own, and the runner's clients (ClientFor),
// refuse loopback and private addresses before connecting, and still
// refuse link-local ones. Setting a policy opens what it says.
func TestDefaultEgressIsSafe(t *testing.T) {
	unsetEgress(t)
	fake := newFake(t, ok)
	for _, tc := range []struct {
		name, baseURL string
		client        func() *http.Client
		want          string
	}{
		{"default client, loopback", fake.srv.URL + "/v1", nil, "loopback addresses are off"},
		{"default client, private", "http://10.255.255.1:9/v1", nil, "private-network addresses are off"},
		{"default client, metadata", "http://169.254.169.254/v1", nil, "link-local"},
		{"runner client, loopback", fake.srv.URL + "/v1", func() *http.Client { return ClientFor(2, nil) }, "loopback addresses are off"},
		{"runner client, private", "http://10.255.255.1:9/v1", func() *http.Client { return ClientFor(2, nil) }, "private-network addresses are off"},
		{"runner client, 6to4 loopback", "http://[2002:7f00:1::]/v1", func() *http.Client { return ClientFor(2, nil) }, "loopback addresses are off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{BaseURL: tc.baseURL, Model: "m", Timeout: 5 * time.Second, MaxAttempts: 2, MinBackoff: time.Millisecond}
			if tc.client != nil {
				cfg.HTTPClient = tc.client()
			}
			_, err := mustNew(t, cfg).Complete(t.Context(), simpleRequest())
			e := judgeError(t, err)
			if _, refused := refusedConnection(err); e.Kind != KindRefused || !refused {
				t.Fatalf("error %+v (%v), want an egress refusal", e, err)
			}
			if !strings.Contains(e.Error(), tc.want) {
				t.Errorf("error %q does not say %q", e, tc.want)
			}
		})
	}
	if n := fake.hits(); n != 0 {
		t.Fatalf("the loopback endpoint got %d requests under the default policy", n)
	}
	// Control: the same endpoint answers once loopback is allowed, so the
	// refusals above are the policy's and not a broken fake's.
	SetEgress(Egress{AllowLoopback: true})
	for name, client := range map[string]*http.Client{"default client": nil, "runner client": ClientFor(2, nil)} {
		cfg := testConfig(fake)
		cfg.HTTPClient = client
		if _, err := mustNew(t, cfg).Complete(t.Context(), simpleRequest()); err != nil {
			t.Errorf("%s with loopback allowed: %v", name, err)
		}
	}
}
