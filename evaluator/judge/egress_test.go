package judge

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

// localMode is an Egress.ShowAddrs that always says yes: refusals name
// the address, as in local mode. The tests of the rules below read the
// addresses in the reasons; TestEgressRefusalOutsideLocalMode, the
// messages without them.
func localMode(context.Context) bool { return true }

func TestEgressCheck(t *testing.T) {
	sim := netip.MustParseAddrPort("127.0.0.1:40001")
	strict := Egress{AllowAddrs: []netip.AddrPort{sim}, ShowAddrs: localMode}
	open := Egress{AllowPrivate: true, AllowLoopback: true, AllowAddrs: []netip.AddrPort{netip.MustParseAddrPort("169.254.169.254:80")}}
	for _, tc := range []struct {
		addr          string
		strict, open  bool
		reasonPartial string // of the strict refusal
	}{
		{"93.184.216.34:443", true, true, ""},
		{"[2606:4700::1111]:443", true, true, ""},
		{"169.254.169.254:80", false, false, "link-local"},
		{"[::ffff:169.254.169.254]:80", false, false, "link-local"},
		{"169.254.170.2:80", false, false, "link-local"},
		{"[fe80::1]:80", false, false, "link-local"},
		{"[fd00:ec2::254]:80", false, false, "metadata"},
		{"100.100.100.200:80", false, false, "metadata"},
		{"168.63.129.16:80", false, false, "metadata"},
		{"10.0.0.5:11434", false, true, "BATCHEVAL_JUDGE_ALLOW_PRIVATE"},
		{"172.17.0.2:8000", false, true, "private"},
		{"192.168.1.10:8000", false, true, "private"},
		{"100.64.0.1:8000", false, true, "private"},
		{"[fd12:3456::1]:8000", false, true, "private"},
		{"127.0.0.1:11434", false, true, "BATCHEVAL_JUDGE_ALLOW_LOOPBACK"},
		{"[::1]:11434", false, true, "loopback"},
		{"0.0.0.0:11434", false, false, "not a single host"},
		{"127.0.0.1:40001", true, true, ""}, // the simulated judge
		{"239.1.1.1:80", false, false, "not a single host"},
		// NAT64 (an IPv6-only network's translator): the IPv4 address
		// reached is held to the same rules.
		{"[64:ff9b::a9fe:a9fe]:80", false, false, "169.254.169.254 through a NAT64"},
		{"[64:ff9b::100.100.100.200]:80", false, false, "metadata"},
		{"[64:ff9b::7f00:1]:11434", false, true, "127.0.0.1 through a NAT64 translator (64:ff9b::/96), and loopback"},
		{"[64:ff9b::10.0.0.5]:11434", false, true, "private"},
		{"[64:ff9b::0.0.0.0]:80", false, false, "not a single host"},
		{"[64:ff9b::5db8:d822]:443", true, true, ""}, // 93.184.216.34, public
		{"[64:ff9b:1::a00:5]:443", false, true, "private"},
		// IPv4-compatible addresses (::a.b.c.d, deprecated but still
		// accepted by resolvers and URL parsers) reach a.b.c.d.
		{"[::127.0.0.1]:11434", false, true, "127.0.0.1 through an IPv4-compatible address (::a.b.c.d), and loopback"},
		{"[::10.0.0.1]:8000", false, true, "10.0.0.1 through an IPv4-compatible"},
		{"[::169.254.169.254]:80", false, false, "169.254.169.254 through an IPv4-compatible address (::a.b.c.d), and link-local"},
		{"[::100.100.100.200]:80", false, false, "metadata"},
		{"[::5db8:d822]:443", true, true, ""}, // 93.184.216.34, public
		// IPv4-translated addresses (::ffff:0:a.b.c.d, SIIT).
		{"[::ffff:0:127.0.0.1]:11434", false, true, "127.0.0.1 through an IPv4-translated address"},
		{"[::ffff:0:169.254.169.254]:80", false, false, "link-local"},
		{"[::ffff:0:10.0.0.1]:80", false, true, "private"},
		{"[::ffff:0:93.184.216.34]:443", true, true, ""},
		// 6to4 (2002:AABB:CCDD::/48 is reached through the IPv4 host AA.BB.CC.DD).
		{"[2002:7f00:0001::1]:11434", false, true, "127.0.0.1 through 6to4 (2002::/16), and loopback"},
		{"[2002:a9fe:a9fe::]:80", false, false, "169.254.169.254 through 6to4"},
		{"[2002:0a00:0001::5]:8000", false, true, "10.0.0.1 through 6to4"},
		{"[2002:c0a8:0101::1]:8000", false, true, "192.168.1.1 through 6to4"},
		{"[2002:5db8:d822::1]:443", true, true, ""}, // 93.184.216.34, public
		// Teredo (2001:0:SERVER:flags:port:~CLIENT): the client's IPv4
		// address is stored inverted, the server's as is; both are reached.
		{"[2001:0:5db8:d822:0:0:80ff:fffe]:11434", false, true, "127.0.0.1 through Teredo (2001::/32), and loopback"},
		{"[2001:0:5db8:d822:0:0:5601:5601]:80", false, false, "169.254.169.254 through Teredo"},
		{"[2001:0:5db8:d822:0:0:f5ff:fffe]:8000", false, true, "10.0.0.1 through Teredo"},
		{"[2001:0:0a00:0001:0:0:a247:27dd]:8000", false, true, "10.0.0.1 through Teredo"}, // the server's address
		{"[2001:0:5db8:d822:8000:63bf:a247:27dd]:443", true, true, ""},                    // server and client 93.184.216.34, public
		// ::1 is IPv6's own loopback, not 0.0.0.1; :: stays "not a host".
		{"[::1]:80", false, true, "loopback addresses are off"},
		{"[::]:80", false, false, "not a single host"},
		// 0.0.0.0/8 ("this network") and the IPv6 forms that lead there.
		{"0.1.2.3:80", false, false, `0.0.0.0/8 is "this network"`},
		{"[::2]:80", false, false, "0.0.0.2 through an IPv4-compatible"},
	} {
		addr := netip.MustParseAddrPort(tc.addr)
		err := strict.Check(addr)
		if (err == nil) != tc.strict {
			t.Errorf("strict policy, %s: %v, want allowed=%v", tc.addr, err, tc.strict)
		}
		if err != nil && !strings.Contains(err.Error(), tc.reasonPartial) {
			t.Errorf("strict policy, %s: %q does not say %q", tc.addr, err, tc.reasonPartial)
		}
		// Even an explicit allowance cannot open metadata or link-local.
		if err := open.Check(addr); (err == nil) != tc.open {
			t.Errorf("open policy, %s: %v, want allowed=%v", tc.addr, err, tc.open)
		}
	}
}

// TestEgressRefusesThisNetwork: the addresses of 0.0.0.0/8 other than
// 0.0.0.0 ("this network": Linux connects to them, on this machine or the
// local network), and every IPv6 form that leads to one (IPv4-compatible
// ::2 to ::ff:ffff, IPv4-mapped, IPv4-translated, NAT64, 6to4, Teredo), are
// refused under every policy, the error naming the address and the rule.
func TestEgressRefusesThisNetwork(t *testing.T) {
	const rule = `0.0.0.0/8 is "this network", never a destination`
	for _, tc := range []struct{ addr, named, via string }{
		{"0.1.2.3:80", "0.1.2.3:80", ""},
		{"0.0.0.1:11434", "0.0.0.1:11434", ""},
		{"0.255.255.255:443", "0.255.255.255:443", ""},
		{"[::ffff:0.1.2.3]:80", "0.1.2.3:80", ""}, // IPv4-mapped: the IPv4 address itself
		{"[::2]:80", "[::2]:80", "it reaches 0.0.0.2 through an IPv4-compatible address (::a.b.c.d), and "},
		{"[::ff:ffff]:80", "[::ff:ffff]:80", "it reaches 0.255.255.255 through an IPv4-compatible address"},
		{"[::0.1.2.3]:80", "[::1:203]:80", "it reaches 0.1.2.3 through an IPv4-compatible address"},
		{"[::ffff:0:0.1.2.3]:80", "[::ffff:0:1:203]:80", "it reaches 0.1.2.3 through an IPv4-translated address"},
		{"[64:ff9b::0.1.2.3]:80", "[64:ff9b::1:203]:80", "it reaches 0.1.2.3 through a NAT64 translator (64:ff9b::/96), and "},
		{"[2002:0001:0203::1]:80", "[2002:1:203::1]:80", "it reaches 0.1.2.3 through 6to4 (2002::/16), and "},
		{"[2001:0:5db8:d822:0:0:fffe:fdfc]:80", "[2001:0:5db8:d822::fffe:fdfc]:80", "it reaches 0.1.2.3 through Teredo (2001::/32), and "},
	} {
		for name, p := range map[string]Egress{
			"strict": {ShowAddrs: localMode},
			"open":   {AllowPrivate: true, AllowLoopback: true, ShowAddrs: localMode},
		} {
			err := p.Check(netip.MustParseAddrPort(tc.addr))
			var e *EgressError
			if !errors.As(err, &e) {
				t.Errorf("%s policy, %s: %v, want a refusal", name, tc.addr, err)
				continue
			}
			if want := "connecting to " + tc.named + " is not allowed: " + tc.via; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s policy, %s: %q does not start %q", name, tc.addr, err, want)
			}
			if !strings.Contains(err.Error(), rule) {
				t.Errorf("%s policy, %s: %q does not name the rule %q", name, tc.addr, err, rule)
			}
		}
	}
	// :: and ::1 are IPv6's own, not 0.0.0.0/8; 0.0.0.0 stays "not a host".
	for addr, want := range map[string]string{"[::]:80": "not a single host", "[::1]:80": "loopback addresses are off", "0.0.0.0:80": "not a single host"} {
		if err := (Egress{}).Check(netip.MustParseAddrPort(addr)); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "this network") {
			t.Errorf("%s: %v, want %q", addr, err, want)
		}
	}
}

// TestRedirectNotFollowed: an endpoint that redirects (here to another
// service on loopback) gets no second request sent anywhere; the call fails
// at once with a redirect error, under the default client and a policy's.
func TestRedirectNotFollowed(t *testing.T) {
	internal := newFake(t, ok)
	redirector := newFake(t, reply{status: http.StatusFound, header: map[string]string{"Location": internal.srv.URL + "/v1/chat/completions"}})
	for name, client := range map[string]*http.Client{
		"default": nil,
		"policy":  Egress{AllowLoopback: true}.HTTPClient(),
	} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(redirector)
			cfg.HTTPClient = client
			_, err := mustNew(t, cfg).Complete(t.Context(), simpleRequest())
			e := judgeError(t, err)
			if e.Kind != KindRefused || e.Status != http.StatusFound || e.Attempts != 1 {
				t.Errorf("error %+v, want refused, status 302, one attempt", e)
			}
			if !strings.Contains(e.Error(), "never follow redirects") || !strings.Contains(e.Error(), "127.0.0.1") {
				t.Errorf("error %q does not explain the redirect", e)
			}
			if internal.hits() != 0 {
				t.Errorf("the redirect target got %d requests", internal.hits())
			}
		})
	}
}

// TestEgressRefusedBeforeConnect: a judge at the cloud metadata address is
// refused in the dialer, after resolution and before any connection, even
// with private and loopback judges allowed; the same for a private address
// when private judges are off, and for loopback when loopback is off.
func TestEgressRefusedBeforeConnect(t *testing.T) {
	other := newFake(t, ok)
	u, _ := url.Parse(other.srv.URL)
	for _, tc := range []struct {
		name, baseURL string
		policy        Egress
		want          string
	}{
		{"metadata", "http://169.254.169.254/latest/v1", Egress{AllowPrivate: true, AllowLoopback: true}, "link-local"},
		{"metadata on another port", "http://169.254.169.254:8080/v1", Egress{AllowPrivate: true, AllowLoopback: true}, "link-local"},
		{"private when off", "http://10.255.255.1:9/v1", Egress{AllowLoopback: true}, "private-network addresses are off"},
		{"loopback when off", other.srv.URL + "/v1", Egress{AllowPrivate: true}, "loopback addresses are off"},
		{"loopback by name when off", "http://localhost:" + u.Port() + "/v1", Egress{}, "loopback addresses are off"},
		// IPv6 forms that carry an IPv4 address, typed as the judge's URL.
		{"IPv4-compatible loopback", "http://[::127.0.0.1]:" + u.Port() + "/v1", Egress{AllowPrivate: true}, "127.0.0.1 through an IPv4-compatible address"},
		{"IPv4-compatible metadata", "http://[::169.254.169.254]/latest/v1", Egress{AllowPrivate: true, AllowLoopback: true}, "link-local"},
		{"6to4 loopback", "http://[2002:7f00:1::]:" + u.Port() + "/v1", Egress{AllowPrivate: true}, "127.0.0.1 through 6to4"},
		{"6to4 metadata", "http://[2002:a9fe:a9fe::]/v1", Egress{AllowPrivate: true, AllowLoopback: true}, "link-local"},
		// 0.0.0.0/8 is never a destination, whatever the settings.
		{"this network", "http://0.1.2.3:" + u.Port() + "/v1", Egress{AllowPrivate: true, AllowLoopback: true}, `0.1.2.3:` + u.Port() + ` is not allowed: 0.0.0.0/8 is "this network"`},
		{"IPv4-compatible this network", "http://[::2]:" + u.Port() + "/v1", Egress{AllowPrivate: true, AllowLoopback: true}, "it reaches 0.0.0.2 through an IPv4-compatible address"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.policy
			p.ShowAddrs = localMode
			client := p.HTTPClient()
			cfg := Config{BaseURL: tc.baseURL, Model: "m", Timeout: 5 * time.Second, MaxAttempts: 3, MinBackoff: time.Millisecond, HTTPClient: client}
			start := time.Now()
			_, err := mustNew(t, cfg).Complete(t.Context(), simpleRequest())
			e := judgeError(t, err)
			var ee *EgressError
			if e.Kind != KindRefused || !errors.As(err, &ee) || e.Attempts != 1 {
				t.Fatalf("error %+v (%v), want a refusal after one attempt", e, err)
			}
			if !strings.Contains(e.Error(), tc.want) {
				t.Errorf("error %q does not say %q", e, tc.want)
			}
			// A refused dial never waits for a network: it fails at once.
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("refusal took %s", d)
			}
		})
	}
	if other.hits() != 0 {
		t.Errorf("the loopback service got %d requests", other.hits())
	}
}

// TestEgressAllowsListedLoopbackPort: the simulated judge's own port works
// when loopback judges are otherwise off.
func TestEgressAllowsListedLoopbackPort(t *testing.T) {
	sim := newFake(t, ok)
	u, _ := url.Parse(sim.srv.URL)
	ap := netip.MustParseAddrPort(u.Host)
	cfg := testConfig(sim)
	cfg.HTTPClient = Egress{AllowAddrs: []netip.AddrPort{ap}}.HTTPClient()
	if _, err := mustNew(t, cfg).Complete(t.Context(), simpleRequest()); err != nil {
		t.Fatalf("the listed loopback port was refused: %v", err)
	}
}

// TestMetadataHostNamesRefused: the metadata services' names are refused
// before any lookup, whatever they resolve to here.
func TestMetadataHostNamesRefused(t *testing.T) {
	for _, u := range []string{"http://metadata.google.internal/computeMetadata/v1", "http://METADATA.google.internal./v1", "http://metadata/v1"} {
		_, err := New(Config{BaseURL: u, Model: "m"})
		var e *Error
		if !errors.As(err, &e) || e.Kind != KindRefused || !strings.Contains(e.Error(), "metadata") {
			t.Errorf("New(%s) = %v, want a refusal", u, err)
		}
	}
}

// TestRefusedDialOpensNoConnection: the refusal happens before connect, so
// the refused service never even accepts a TCP connection.
func TestRefusedDialOpensNoConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	cfg := Config{BaseURL: "http://" + ln.Addr().String() + "/v1", Model: "m", MaxAttempts: 2, MinBackoff: time.Millisecond,
		HTTPClient: Egress{AllowPrivate: true}.HTTPClient()}
	_, err = mustNew(t, cfg).Complete(t.Context(), simpleRequest())
	if e := judgeError(t, err); e.Kind != KindRefused {
		t.Fatalf("error %v, want refused", err)
	}
	select {
	case <-accepted:
		t.Fatal("the refused dial connected")
	case <-time.After(200 * time.Millisecond):
	}
	// Control: the same address with loopback allowed does connect.
	cfg.MaxAttempts = 1
	cfg.HTTPClient = Egress{AllowLoopback: true}.HTTPClient()
	_, _ = mustNew(t, cfg).Complete(t.Context(), simpleRequest())
	select {
	case <-accepted:
	case <-time.After(2 * time.Second):
		t.Fatal("the allowed dial never connected: the check proves nothing")
	}
}

// TestRedirectAdviceNeverOffersARefusedTarget: a redirect's target is
// offered as the base URL to use only when this server would call it;
// otherwise the error says the redirect is refused, and why, without
// naming the target (regression: "use the address it redirects to as the
// base URL. Details: it points to http://169.254.169.254" advised a cloud
// metadata address, loopback on a server with loopback judges off, and
// plain http from an https base URL).
func TestRedirectAdviceNeverOffersARefusedTarget(t *testing.T) {
	strict := Egress{LoopbackSetting: "BATCHEVAL_JUDGE_ALLOW_LOOPBACK"}
	local := Egress{AllowLoopback: true}
	// lookup resolves the test's names without the network.
	lookup := func(_ context.Context, _, host string) ([]netip.Addr, error) {
		switch host {
		case "metadata.attacker.example":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		case "public.example", "api.example", "api2.example":
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		}
		return nil, errors.New("no such host")
	}
	for _, tc := range []struct {
		name, from, to string
		policy         Egress
		refused        string // part of the reason; "" when offered
		unresolved     bool   // a name that does not resolve: neither refused nor offered
	}{
		{"public https", "https://api.example/v1", "https://api2.example:8443/v1", strict, "", false},
		{"public by name", "https://api.example/v1", "https://public.example/v1", strict, "", false},
		{"http to https", "http://api.example/v1", "https://api.example/v1", strict, "", false},
		{"metadata address", "http://api.example/v1", "http://169.254.169.254/latest", local, "link-local", false},
		{"metadata address, https base", "https://api.example/v1", "https://169.254.169.254/latest", local, "link-local", false},
		{"metadata name", "http://api.example/v1", "http://metadata.google.internal/v1", local, "cloud metadata service", false},
		{"name resolving to metadata", "http://api.example/v1", "http://metadata.attacker.example/v1", local, "link-local", false},
		{"metadata through NAT64", "http://api.example/v1", "http://[64:ff9b::a9fe:a9fe]/v1", local, "link-local", false},
		{"Alibaba metadata", "http://api.example/v1", "http://100.100.100.200/v1", local, "metadata", false},
		{"loopback, loopback off", "http://api.example/v1", "http://127.0.0.1:11434/v1", strict, "loopback addresses are off on this server (BATCHEVAL_JUDGE_ALLOW_LOOPBACK)", false},
		{"localhost, loopback off", "http://api.example/v1", "http://localhost:11434/v1", strict, "loopback addresses are off", false},
		{"loopback in local mode", "http://127.0.0.1:8000/v1", "http://127.0.0.1:11434/v1", local, "", false},
		{"private, private off", "http://api.example/v1", "http://10.0.0.5:8000/v1", strict, "private-network addresses are off", false},
		{"https to http", "https://api.example/v1", "http://api.example/v1", local, "from https to plain http", false},
		{"https to http on loopback in local mode", "https://127.0.0.1:8443/v1", "http://127.0.0.1:8000/v1", local, "from https to plain http", false},
		{"unresolvable name", "http://api.example/v1", "http://nowhere.example/v1", strict, "", true},
		{"unresolvable name, https downgrade", "https://api.example/v1", "http://nowhere.example/v1", strict, "from https to plain http", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from, _ := url.Parse(tc.from)
			to, _ := url.Parse(tc.to)
			why, resolved := refusedRedirect(t.Context(), tc.policy, from, to, lookup)
			if why == "" && resolved == tc.unresolved {
				t.Fatalf("resolved %v, want %v", resolved, !tc.unresolved)
			}
			if tc.refused == "" && why != "" {
				t.Fatalf("refused (%s), want the target offered", why)
			}
			if tc.refused != "" && !strings.Contains(why, tc.refused) {
				t.Fatalf("reason %q, want one saying %q", why, tc.refused)
			}
			if why != "" && strings.Contains(why, to.Hostname()) && to.Hostname() != "localhost" {
				t.Errorf("the reason %q names the refused target", why)
			}
		})
	}
}

// TestRefusedRedirectSaysSo: a call redirected to a cloud metadata address
// fails with an error that says the redirect is refused and does not offer
// the address, in full and in the client's own words; one redirected to
// an address this server calls still offers it; one redirected to a name
// that does not resolve names it without offering it (regression: "use the
// address it redirects to as the base URL" for a name the connection
// check could not look up, which might later resolve to a refused address).
func TestRefusedRedirectSaysSo(t *testing.T) {
	for _, tc := range []struct {
		location   string
		refused    bool
		unresolved bool
	}{
		{"http://169.254.169.254/latest/meta-data/", true, false},
		{"http://metadata.google.internal/computeMetadata/v1/", true, false},
		{"https://93.184.216.34:8443/v1/chat/completions", false, false},
		// .invalid never resolves (RFC 6761).
		{"https://judge.nowhere.invalid/v1/chat/completions", false, true},
	} {
		t.Run(tc.location, func(t *testing.T) {
			redirector := newFake(t, reply{status: http.StatusMovedPermanently, header: map[string]string{"Location": tc.location}})
			_, err := mustNew(t, testConfig(redirector)).Complete(t.Context(), simpleRequest())
			e := judgeError(t, err)
			text := e.Error()
			own, ok := OwnWords(text)
			if e.Kind != KindRefused || e.Status != http.StatusMovedPermanently || !ok {
				t.Fatalf("error %+v (%q), want refused, 301, in the client's own words", e, text)
			}
			target, _ := url.Parse(tc.location)
			if tc.refused {
				if strings.Contains(text, target.Hostname()) || strings.Contains(text, "use the address it redirects to") {
					t.Errorf("the error %q offers the refused target", text)
				}
				if !strings.Contains(own, "the redirect is refused") || !strings.Contains(text, "Details: the redirect is refused: it leads to") {
					t.Errorf("the error %q does not say the redirect is refused and why", text)
				}
				return
			}
			if tc.unresolved {
				if strings.Contains(text, "use the address it redirects to") || strings.Contains(text, "is refused") {
					t.Errorf("the error %q offers or refuses a target it could not check", text)
				}
				if !strings.Contains(own, "to a name this server cannot resolve") || !strings.Contains(text, "it points to https://judge.nowhere.invalid, a name this server cannot resolve") {
					t.Errorf("the error %q does not say the target's name does not resolve", text)
				}
				return
			}
			if !strings.Contains(text, "use the address it redirects to") || !strings.Contains(text, "it points to https://93.184.216.34:8443") {
				t.Errorf("the error %q does not offer the allowed target", text)
			}
		})
	}
}

// TestEgressRefusalOutsideLocalMode: a judge whose host name resolves to
// an address the server's settings refuse. Outside local mode (the server
// serves accounts: its message reaches whoever edits judges, through a
// run's page, Test connection and the API) the message names the host as
// typed, the kind of address and the setting to change, never the address
// resolved, nor an IPv4 address it leads to. In local mode the operator,
// its only reader, gets the address. Before, every message named it,
// telling a workspace's members where the server's internal names lead.
func TestEgressRefusalOutsideLocalMode(t *testing.T) {
	hosts := map[string]string{"llm.corp.internal": "10.1.2.3", "gpu.corp.internal": "2002:c0a8:102::1", "ollama.corp.internal": "127.0.0.9"}
	for _, tc := range []struct {
		name, url, hidden string
		policy            Egress
		want              string
	}{
		{"private by name", "http://llm.corp.internal:8000/v1", "10.1.2.3", Egress{AllowLoopback: true},
			`the host "llm.corp.internal" resolves to a private-network address (not shown), and connecting to it is not allowed: private-network addresses are off on this server (BATCHEVAL_JUDGE_ALLOW_PRIVATE)`},
		{"6to4 leading to a private address", "http://gpu.corp.internal:8000/v1", "192.168.1.2", Egress{AllowLoopback: true, PrivateSetting: "BATCHEVAL_JUDGE_ALLOW_PRIVATE or --judge-allow-private"},
			`the host "gpu.corp.internal" resolves to a private-network address (not shown), and connecting to it is not allowed: it reaches it through 6to4 (2002::/16), and private-network addresses are off on this server (BATCHEVAL_JUDGE_ALLOW_PRIVATE or --judge-allow-private)`},
		{"loopback by name", "http://ollama.corp.internal:11434/v1", "127.0.0.9", Egress{AllowPrivate: true},
			`the host "ollama.corp.internal" resolves to a loopback address (not shown), and connecting to it is not allowed: loopback addresses are off on this server (BATCHEVAL_JUDGE_ALLOW_LOOPBACK)`},
		{"private address typed", "http://10.1.2.3:8000/v1", "", Egress{},
			`10.1.2.3 is a private-network address, and connecting to it is not allowed: private-network addresses are off on this server`},
	} {
		for _, local := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, local mode %v", tc.name, local), func(t *testing.T) {
				p := tc.policy
				p.hosts = hosts
				if local {
					p.ShowAddrs = localMode
				} else {
					// Asked, and saying no: as a server with accounts.
					p.ShowAddrs = func(context.Context) bool { return false }
				}
				hc := p.HTTPClient()
				defer hc.CloseIdleConnections()
				c := mustNew(t, Config{BaseURL: tc.url, Model: "m", MaxAttempts: 1, Timeout: 5 * time.Second, HTTPClient: hc})
				_, err := c.Ping(t.Context())
				var je *Error
				var ee *EgressError
				if !errors.As(err, &je) || je.Kind != KindRefused || !errors.As(err, &ee) {
					t.Fatalf("Ping: %v, want refused by the egress policy", err)
				}
				msg := err.Error()
				resolved := ee.Addr.Addr().String()
				switch {
				case local && !strings.Contains(msg, "connecting to "+ee.Addr.String()+" is not allowed"):
					t.Errorf("local mode: %q does not name the address %s", msg, ee.Addr)
				case !local && !strings.Contains(msg, tc.want):
					t.Errorf("%q\ndoes not say\n%q", msg, tc.want)
				case !local && tc.hidden != "" && (strings.Contains(msg, tc.hidden) || strings.Contains(msg, resolved)):
					t.Errorf("%q names the address resolved (%s, %s)", msg, tc.hidden, resolved)
				}
				if local && tc.hidden != "" && !strings.Contains(msg, tc.hidden) {
					t.Errorf("local mode: %q does not name %s", msg, tc.hidden)
				}
				// The error keeps the address for the operator's logs.
				if !ee.Addr.IsValid() || (tc.hidden != "" && !strings.Contains(ee.Reason+resolved, tc.hidden)) {
					t.Errorf("the error lost the address: %+v", ee)
				}
				// Stored as worded in local mode and shown after it ended
				// (HideRefusedAddrs), the message and the run's error
				// quoting it name neither address, and keep the rest.
				for _, text := range []string{msg, je.InRun()} {
					shown := HideRefusedAddrs(text)
					typed := !local && strings.Contains(tc.url, "//"+resolved+":") // named as typed: nothing new
					if (tc.hidden != "" && strings.Contains(shown, tc.hidden)) || (strings.Contains(shown, resolved) && !typed) {
						t.Errorf("%q shown as %q names the address", text, shown)
					}
					if local && (!strings.Contains(shown, "(not shown)") || !strings.Contains(shown, "addresses are off on this server")) {
						t.Errorf("%q shown as %q says neither that the address is withheld nor the setting", text, shown)
					}
					if !local && shown != text {
						t.Errorf("a message without the address changed when shown: %q -> %q", text, shown)
					}
				}
			})
		}
	}
}
