package judge

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestEgressGrant: a workspace's grant (Egress.Grant) is asked only about
// the private and loopback addresses the operator's settings allow, never
// about public ones, the listed simulated judge or the ones refused anyway,
// and its refusal is the check's reason.
func TestEgressGrant(t *testing.T) {
	sim := netip.MustParseAddrPort("127.0.0.1:7001")
	for _, tc := range []struct {
		addr      string
		grant     error // nil: granted
		wantAsked bool
		wantErr   string // "" allowed
	}{
		{"10.0.0.5:9200", nil, true, ""},
		{"10.0.0.5:9200", errors.New("no grant for ws"), true, "no grant for ws"},
		{"127.0.0.1:11434", errors.New("no grant for ws"), true, "no grant for ws"},
		{"[::ffff:192.168.1.2]:80", errors.New("no grant for ws"), true, "no grant for ws"},
		{"[2002:c0a8:0102::1]:80", errors.New("no grant for ws"), true, "no grant for ws"}, // 6to4 of 192.168.1.2
		{"93.184.216.34:443", errors.New("no grant for ws"), false, ""},
		{"127.0.0.1:7001", errors.New("no grant for ws"), false, ""}, // the simulated judge
		{"169.254.169.254:80", nil, false, "link-local"},
	} {
		var asked bool
		p := Egress{AllowPrivate: true, AllowLoopback: true, AllowAddrs: []netip.AddrPort{sim},
			Grant: func(context.Context) error { asked = true; return tc.grant }}
		err := p.Check(netip.MustParseAddrPort(tc.addr))
		if asked != tc.wantAsked {
			t.Errorf("%s: grant asked %v, want %v", tc.addr, asked, tc.wantAsked)
		}
		var ee *EgressError
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v, want allowed", tc.addr, err)
		case tc.wantErr != "" && (!errors.As(err, &ee) || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: %v, want an egress refusal saying %q", tc.addr, err, tc.wantErr)
		}
	}
}

// TestGrantedClientAsksAgainOnAKeptConnection: a client for a workspace
// asks its grant when it connects to a loopback judge, and, on the
// connection it keeps, again before sending once grantRecheck has passed:
// a revoked grant stops the next call without a new connection, and no
// byte of it reaches the judge.
func TestGrantedClientAsksAgainOnAKeptConnection(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"ok"}}]}`))
	}))
	defer srv.Close()
	var revoked atomic.Bool
	grant := func(context.Context) error {
		if revoked.Load() {
			return errors.New("grant revoked")
		}
		return nil
	}
	hc := GrantedClientFor(grant, 1, nil)
	defer hc.CloseIdleConnections()
	c := mustNew(t, Config{BaseURL: srv.URL + "/v1", Model: "m", MaxAttempts: 1, Timeout: 5 * time.Second, HTTPClient: hc})
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatalf("granted: %v", err)
	}
	revoked.Store(true)
	time.Sleep(grantRecheck + 100*time.Millisecond)
	_, err := c.Ping(context.Background())
	var je *Error
	if !errors.As(err, &je) || je.Kind != KindRefused || !strings.Contains(err.Error(), "grant revoked") {
		t.Errorf("after the revocation: %v, want refused saying the grant was revoked", err)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the judge got %d requests, want 1 (none after the revocation)", n)
	}
}

// BenchmarkGrantedCall: what a workspace's grant costs a run's calls to a
// loopback judge on a kept-alive connection, against the same calls under
// the policy alone, in one process. The grant stands in for the database
// read (models.DB.NetworkPermit) with a 100 µs wait and counts its asks:
// it is asked when the connection is made and then at most once a second.
func BenchmarkGrantedCall(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"ok"}}]}`))
	}))
	defer srv.Close()
	for _, bc := range []struct {
		name  string
		grant bool
	}{{"policy alone", false}, {"granted workspace", true}} {
		b.Run(bc.name, func(b *testing.B) {
			var asks atomic.Int64
			var grant Grant
			if bc.grant {
				grant = func(context.Context) error { asks.Add(1); time.Sleep(100 * time.Microsecond); return nil }
			}
			hc := GrantedClientFor(grant, 1, nil)
			defer hc.CloseIdleConnections()
			c := mustNew(b, Config{BaseURL: srv.URL + "/v1", Model: "m", MaxAttempts: 1, Timeout: 5 * time.Second, HTTPClient: hc})
			ctx := context.Background()
			for b.Loop() {
				if _, err := c.Ping(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(asks.Load())/float64(b.N), "asks/op")
		})
	}
}

// TestGrantRefusalWithholdsTheAddress: a refusal by the workspace's grant
// is read by the members of a workspace without it, so it says what kind
// of address the host resolves to, never the address (which would tell
// them where the server's internal names lead); the error keeps the
// address for the operator.
func TestGrantRefusalWithholdsTheAddress(t *testing.T) {
	noGrant := func(context.Context) error { return errors.New("no grant for ws") }
	p := Egress{AllowPrivate: true, AllowLoopback: true, Grant: noGrant}
	for _, tc := range []struct {
		addr, hidden, kind string
	}{
		{"10.20.30.40:80", "10.20.30.40", "a private-network address (not shown)"},
		{"[fd12:3456::7]:80", "fd12:3456::7", "a private-network address (not shown)"},
		{"[2002:c0a8:0102::1]:80", "192.168.1.2", "a private-network address (not shown)"}, // 6to4
		{"[2002:c0a8:0102::1]:80", "2002:c0a8:102::1", "a private-network address (not shown)"},
		{"127.0.0.5:11434", "127.0.0.5", "a loopback address (not shown)"},
	} {
		addr := netip.MustParseAddrPort(tc.addr)
		err := p.Check(addr)
		var ee *EgressError
		if !errors.As(err, &ee) {
			t.Fatalf("%s: %v, want an egress refusal", tc.addr, err)
		}
		if msg := err.Error(); strings.Contains(msg, tc.hidden) || !strings.Contains(msg, tc.kind) || !strings.Contains(msg, "no grant for ws") {
			t.Errorf("%s: %q, want it to say %q and the grant's reason, without %s", tc.addr, msg, tc.kind, tc.hidden)
		}
		if ee.Addr != netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port()) {
			t.Errorf("%s: the error keeps %v, want the address for the operator", tc.addr, ee.Addr)
		}
	}
	// A refusal by the server's own settings names the address in local
	// mode only (TestEgressRefusalOutsideLocalMode); the grant's never
	// does, even there.
	if err := (Egress{Grant: noGrant, ShowAddrs: localMode}).Check(netip.MustParseAddrPort("10.20.30.40:80")); err == nil || !strings.Contains(err.Error(), "10.20.30.40") {
		t.Errorf("private addresses off, local mode: %v, want the address named", err)
	}
	if err := (Egress{AllowPrivate: true, Grant: noGrant, ShowAddrs: localMode}).Check(netip.MustParseAddrPort("10.20.30.40:80")); err == nil || strings.Contains(err.Error(), "10.20.30.40") {
		t.Errorf("no grant, local mode: %v, want the address withheld", err)
	}

	// Through a client, as Test connection calls: a name resolving to a
	// loopback address the workspace may not reach.
	hc := GrantedClient(noGrant)
	defer hc.CloseIdleConnections()
	c := mustNew(t, Config{BaseURL: "http://localhost:9/v1", Model: "m", MaxAttempts: 1, Timeout: 5 * time.Second, HTTPClient: hc})
	_, err := c.Ping(context.Background())
	var je *Error
	if !errors.As(err, &je) || je.Kind != KindRefused {
		t.Fatalf("Ping: %v, want refused", err)
	}
	if msg := err.Error(); strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, "::1") || !strings.Contains(msg, "a loopback address (not shown)") {
		t.Errorf("Ping: %q, want the loopback address withheld", msg)
	}
}

// TestGrantUnknownIsNotARefusal: when the grant cannot be read (its
// database dropped the connection), the check is no refusal (the run would
// end as "this server does not call judges at that address") but an error
// a call retries; an address that leads to a private one through an
// embedded IPv4 is held back too, never allowed for want of an answer.
func TestGrantUnknownIsNotARefusal(t *testing.T) {
	down := func(context.Context) error { return &GrantUnknownError{Err: errors.New("connection reset by peer")} }
	p := Egress{AllowPrivate: true, AllowLoopback: true, Grant: down}
	for _, addr := range []string{"10.0.0.5:9200", "127.0.0.1:11434", "[2002:c0a8:0102::1]:80"} {
		err := p.Check(netip.MustParseAddrPort(addr))
		var ee *EgressError
		var unknown *GrantUnknownError
		if err == nil || errors.As(err, &ee) || !errors.As(err, &unknown) {
			t.Errorf("%s: %v, want the grant's unknown answer, not a refusal and not allowed", addr, err)
		}
	}

	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"ok"}}]}`))
	}))
	defer srv.Close()
	var asks atomic.Int64
	flaky := func(context.Context) error {
		if asks.Add(1) == 1 {
			return &GrantUnknownError{Err: errors.New("connection reset by peer")}
		}
		return nil
	}
	for _, tc := range []struct {
		attempts int
		wantErr  bool
	}{{1, true}, {3, false}} {
		asks.Store(0)
		hc := GrantedClientFor(flaky, 1, nil)
		c := mustNew(t, Config{BaseURL: srv.URL + "/v1", Model: "m", MaxAttempts: tc.attempts, MinBackoff: time.Millisecond,
			Timeout: 5 * time.Second, HTTPClient: hc})
		_, err := c.Complete(context.Background(), simpleRequest())
		hc.CloseIdleConnections()
		var je *Error
		switch {
		case tc.wantErr && (!errors.As(err, &je) || je.Kind == KindRefused):
			t.Errorf("one attempt while the grant is unreadable: %v, want an error that is not a refusal", err)
		case tc.wantErr && !je.Temporary():
			t.Errorf("one attempt while the grant is unreadable: kind %s, want one a run retries", je.Kind)
		case !tc.wantErr && err != nil:
			t.Errorf("%d attempts, the grant readable again on the second: %v, want an answer", tc.attempts, err)
		}
	}
}
