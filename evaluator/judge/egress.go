package judge

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// Egress says where judge calls may connect. The judge's URL is typed by
// whoever edits judges, and its key travels with every call, so without a
// policy the server would fetch from any address it can reach: cloud
// metadata services (credentials), admin pages on the private network,
// services on loopback.
//
// The check runs in the dialer, on the address actually connected to after
// name resolution, so a name that resolves differently from one moment to
// the next (DNS rebinding) cannot slip through; and redirects are never
// followed, so an allowed endpoint cannot bounce a call elsewhere.
type Egress struct {
	// AllowPrivate allows private ranges (10/8, 172.16/12, 192.168/16,
	// 100.64/10, fc00::/7, and the local NAT64 prefix 64:ff9b:1::/48): a
	// judge on the LAN or the Docker network.
	AllowPrivate bool
	// AllowLoopback allows 127/8 and ::1: Ollama or vLLM on this machine.
	AllowLoopback bool
	// AllowAddrs are addresses allowed whatever the above say: the
	// in-process simulated judge's loopback port.
	AllowAddrs []netip.AddrPort
	// LoopbackSetting and PrivateSetting name the operator settings that
	// allow loopback and private addresses, for refusal messages; empty
	// means the judges' (BATCHEVAL_JUDGE_ALLOW_*). Webhooks use the same
	// policy with their own setting.
	LoopbackSetting, PrivateSetting string
	// Grant, when set, is asked before connecting to a private or loopback
	// address the settings above allow (not for AllowAddrs): nil lets the
	// call through, an error refuses it, its text the reason. It is the
	// workspace's permission (models.DB.NetworkPermit): the operator's
	// settings serve the default workspace and the workspaces the operator
	// grants, as anyone signed in can make a workspace of their own. On a
	// connection kept open it is asked again before sending, when
	// grantRecheck has passed since it last said yes.
	Grant Grant
	// ShowAddrs, when set and true, lets a refusal's message name the
	// address refused (and an IPv4 address it leads to): in local mode,
	// where the operator is the only reader and needs it to fix a judge's
	// URL. Otherwise (nil, or false) the message names the host as the URL
	// typed it and the kind of address, never the address: the message
	// reaches the people who edit judges (a run's page, Test connection,
	// the API, webhook deliveries), who are not to learn where the
	// server's internal names lead (reconnaissance for requests forged
	// through the server). The error keeps Addr for the operator's logs.
	// Asked only when a connection is refused.
	ShowAddrs func(ctx context.Context) bool

	// hosts, for tests, is what host names resolve to instead of the
	// system's resolver (a name on the private network, without DNS).
	hosts map[string]string
}

// Grant says whether the workspace a call is made for may reach the
// private-network and loopback addresses the operator's settings allow:
// nil when it may, else an error saying why not and what to do.
type Grant func(ctx context.Context) error

// GrantUnknownError is a Grant's answer when it could not tell whether
// the workspace may reach the address (its database read failed or timed
// out). It is no refusal: the connection fails as a network error, which
// a run retries like an outage, where a refusal would end the run as
// "this server does not call judges at that address" because the
// database dropped one connection.
type GrantUnknownError struct{ Err error }

func (e *GrantUnknownError) Error() string {
	return "could not read whether this workspace may reach private-network addresses (will try again): " + e.Err.Error()
}

func (e *GrantUnknownError) Unwrap() error { return e.Err }

// grantRecheck is how long a connection to a granted private address is
// used without asking the grant again: a revocation reaches a run's open
// connections within it (new connections ask at once).
const grantRecheck = time.Second

// grantTimeout bounds one question to the grant (a database read).
const grantTimeout = 5 * time.Second

// metadataAddrs are the cloud instance-metadata endpoints outside the
// link-local range (which is refused as a whole): AWS IPv6 (fd00:ec2::254),
// Alibaba Cloud (100.100.100.200) and Azure's WireServer (168.63.129.16).
// GCP's metadata.google.internal resolves to 169.254.169.254, link-local.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("168.63.129.16"),
}

// metadataHosts are the names of cloud metadata services. Their addresses
// are refused by the dialer anyway (they resolve to link-local ones); the
// names are refused up front for a clearer message.
var metadataHosts = []string{"metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"}

func metadataHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return slices.Contains(metadataHosts, host)
}

// cgnat is the shared address space (RFC 6598), private in all but name.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// thisNetwork is 0.0.0.0/8, "this host on this network" (RFC 1122): never a
// valid destination (RFC 6890), yet Linux connects to it, 0.0.0.0 on this
// machine and (since 5.3) the rest on the local network. It is also where
// the IPv4-compatible ::2 to ::ff:ffff lead.
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// NAT64 prefixes: on an IPv6-only network, a translator turns a connection
// to 64:ff9b::a.b.c.d (RFC 6052's well-known prefix) into one to the IPv4
// address a.b.c.d, which may be on loopback, the private network or a
// metadata service; 64:ff9b:1::/48 (RFC 8215) is for translators of a
// network's own, whose IPv4 side is that network, private by definition.
var (
	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
)

// Other IPv6 forms that carry an IPv4 address a connection may end up at:
//   - IPv4-compatible ::a.b.c.d (RFC 4291, deprecated): still parsed by
//     every resolver and URL parser, and sent as IPv4 by stacks with an
//     automatic tunnel;
//   - IPv4-translated ::ffff:0:a.b.c.d (RFC 2765, SIIT): a translator
//     connects to a.b.c.d;
//   - 6to4 2002:AABB:CCDD::/48 (RFC 3056): relays send the packets to the
//     IPv4 host AA.BB.CC.DD;
//   - Teredo 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC (RFC 4380): relays
//     reach the client at the inverted CCCC:CCCC, through the server at
//     SSSS:SSSS.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
)

// embeddedV4 is an IPv4 address an IPv6 address leads to, and how.
type embeddedV4 struct {
	addr netip.Addr
	via  string
}

// embeddedIPv4 are the IPv4 addresses a connection to ip may reach, by the
// IPv6 forms that carry one: each is held to the same rules as if it had
// been named directly. None for a plain IPv6 address.
func embeddedIPv4(ip netip.Addr) []embeddedV4 {
	if !ip.Is6() || ip.Is4In6() {
		return nil
	}
	b := ip.As16()
	v4 := func(from int, invert bool) netip.Addr {
		var a [4]byte
		copy(a[:], b[from:from+4])
		if invert {
			for i := range a {
				a[i] ^= 0xff
			}
		}
		return netip.AddrFrom4(a)
	}
	switch {
	case nat64WellKnown.Contains(ip):
		return []embeddedV4{{v4(12, false), "a NAT64 translator (64:ff9b::/96)"}}
	case ipv4Translated.Contains(ip):
		return []embeddedV4{{v4(12, false), "an IPv4-translated address (::ffff:0:a.b.c.d)"}}
	case ipv4Compatible.Contains(ip) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback():
		// :: and ::1 are IPv6's own unspecified and loopback addresses.
		return []embeddedV4{{v4(12, false), "an IPv4-compatible address (::a.b.c.d)"}}
	case sixToFour.Contains(ip):
		return []embeddedV4{{v4(2, false), "6to4 (2002::/16)"}}
	case teredo.Contains(ip):
		return []embeddedV4{{v4(12, true), "Teredo (2001::/32)"}, {v4(4, false), "Teredo (2001::/32), as its server"}}
	}
	return nil
}

// EgressError says a judge call was refused before any byte was sent.
type EgressError struct {
	// Addr is the address refused: for the operator's logs, and named by
	// the message only when Shown.
	Addr netip.AddrPort
	// Reason is the rule that refused it, naming an IPv4 address Addr
	// leads to where there is one (logs, local mode).
	Reason string
	// Host is the host the refused URL named, as typed (a name or an
	// address), when the refusal came from a dial ("" from Check).
	Host string
	// Kind is the kind of address refused ("a private-network address",
	// "a loopback address", ...), which the message names in its stead.
	Kind string
	// Hidden is Reason without any address: the message's when not Shown.
	Hidden string
	// Shown says the message may name Addr: the policy's ShowAddrs said
	// so (local mode). Never for a refusal by the workspace's grant, read
	// by the members of a workspace without it.
	Shown bool
}

func (e *EgressError) Error() string {
	if e.Shown {
		return fmt.Sprintf("connecting to %s is not allowed: %s", e.Addr, e.Reason)
	}
	kind := cmp.Or(e.Kind, "an address this server does not connect to")
	switch _, err := netip.ParseAddr(strings.Trim(e.Host, "[]")); {
	case e.Host == "":
		return fmt.Sprintf("the host resolves to %s (not shown), and connecting to it is not allowed: %s", kind, e.PublicReason())
	case err == nil:
		// An address typed in the URL: naming it tells nothing new.
		return fmt.Sprintf("%s is %s, and connecting to it is not allowed: %s", e.Host, kind, e.PublicReason())
	}
	return fmt.Sprintf("the host %q resolves to %s (not shown), and connecting to it is not allowed: %s", e.Host, kind, e.PublicReason())
}

// The addresses a refusal's message names when Shown (local mode): the
// address refused, as Error words it ("connecting to 10.1.2.3:8000 is not
// allowed: ", "[fd00::1]:443"), and an IPv4 address it leads to, as
// CheckContext words Reason ("it reaches 127.0.0.1 through ").
var (
	shownRefusedAddr = regexp.MustCompile(`connecting to (?:\[[0-9A-Za-z:.%_-]+\]|[0-9]{1,3}(?:\.[0-9]{1,3}){3}):[0-9]+ is not allowed: `)
	shownReachedAddr = regexp.MustCompile(`it reaches [0-9]{1,3}(?:\.[0-9]{1,3}){3} through `)
)

// HideRefusedAddrs is s, a text that may quote a refusal's message (a
// run's or batch's stored error), without the addresses a message Shown
// in local mode names: they become "the address it resolved to (not
// shown)" and "it". A refusal is stored as worded when it happened, and
// local mode can end after (the first account made; the server moved off
// loopback), so pages withhold the address when they show the text unless
// local mode holds then. Other text is returned as it is.
func HideRefusedAddrs(s string) string {
	if !strings.Contains(s, "is not allowed") && !strings.Contains(s, "it reaches ") {
		return s
	}
	s = shownRefusedAddr.ReplaceAllLiteralString(s, "connecting to the address it resolved to (not shown) is not allowed: ")
	return shownReachedAddr.ReplaceAllLiteralString(s, "it reaches it through ")
}

// PublicReason is the rule as the message gives it: Reason when Shown,
// else without any address.
func (e *EgressError) PublicReason() string {
	if e.Shown || e.Hidden == "" && e.Kind == "" {
		// Made by hand, not by CheckContext (tests): Reason is all there is.
		return e.Reason
	}
	return e.Hidden
}

// Check decides whether a connection to addr is allowed.
func (p Egress) Check(addr netip.AddrPort) error {
	return p.CheckContext(context.Background(), addr)
}

// CheckContext is Check, asking p.Grant with ctx when it needs to.
func (p Egress) CheckContext(ctx context.Context, addr netip.AddrPort) error {
	ip := addr.Addr().Unmap()
	addr = netip.AddrPortFrom(ip, addr.Port())
	// The rules' reasons below name no address: Reason and Hidden differ
	// only for an address that leads to another.
	refuse := func(kind, reason string) error {
		return &EgressError{Addr: addr, Kind: kind, Reason: reason, Hidden: reason, Shown: p.showAddrs(ctx)}
	}
	for _, v4 := range embeddedIPv4(ip) {
		// A translator, relay or tunnel connects to v4: the address it
		// reaches is held to the same rules as if it had been named.
		var e *EgressError
		err := p.CheckContext(ctx, netip.AddrPortFrom(v4.addr, addr.Port()))
		if err != nil && !errors.As(err, &e) {
			return err // the grant could not be read: not allowed either
		}
		if e != nil {
			return &EgressError{Addr: addr, Kind: e.Kind, Shown: e.Shown,
				Reason: "it reaches " + v4.addr.String() + " through " + v4.via + ", and " + e.Reason,
				Hidden: "it reaches it through " + v4.via + ", and " + e.Hidden}
		}
	}
	switch {
	case slices.ContainsFunc(metadataAddrs, func(m netip.Addr) bool { return m == ip }):
		return refuse("a cloud metadata service's address", "it is a cloud metadata service")
	case ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast():
		return refuse("a link-local address", "link-local addresses (169.254.0.0/16, fe80::/10) hold cloud metadata services and are never allowed")
	case slices.Contains(p.AllowAddrs, addr):
		return nil
	case ip.IsMulticast() || ip.IsUnspecified() || ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		// 0.0.0.0 and :: would reach this machine: not a host to name.
		return refuse("a multicast, broadcast or unspecified address", "it is not a single host")
	case thisNetwork.Contains(ip):
		return refuse(`an address in 0.0.0.0/8`, `0.0.0.0/8 is "this network", never a destination: Linux sends it to this machine or the local network`)
	case ip.IsLoopback():
		if !p.AllowLoopback {
			return refuse("a loopback address", "loopback addresses are off on this server ("+cmp.Or(p.LoopbackSetting, "BATCHEVAL_JUDGE_ALLOW_LOOPBACK")+")")
		}
		return p.granted(ctx, addr, "a loopback address")
	case ip.IsPrivate() || cgnat.Contains(ip) || nat64Local.Contains(ip):
		if !p.AllowPrivate {
			return refuse("a private-network address", "private-network addresses are off on this server ("+cmp.Or(p.PrivateSetting, "BATCHEVAL_JUDGE_ALLOW_PRIVATE")+")")
		}
		return p.granted(ctx, addr, "a private-network address")
	}
	return nil
}

// showAddrs reports whether p's refusals may name the address refused
// (ShowAddrs).
func (p Egress) showAddrs(ctx context.Context) bool {
	return p.ShowAddrs != nil && p.ShowAddrs(ctx)
}

// granted asks p.Grant, if any, about addr, a private or loopback address
// (kind) the settings allow. Its refusal withholds addr: it is read by the
// members of a workspace without the grant, who are not to learn the
// server's private addresses (what an internal name resolves to).
func (p Egress) granted(ctx context.Context, addr netip.AddrPort, kind string) error {
	if p.Grant == nil {
		return nil
	}
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grantTimeout)
	defer cancel()
	if err := p.Grant(gctx); err != nil {
		var unknown *GrantUnknownError
		if errors.As(err, &unknown) {
			return unknown
		}
		return &EgressError{Addr: addr, Reason: err.Error(), Hidden: err.Error(), Kind: kind}
	}
	return nil
}

// needsGrant reports whether a connection to addr, which Check allowed,
// was allowed by p.Grant (a private or loopback address): such a
// connection asks the grant again before sending (grantedConn).
func (p Egress) needsGrant(addr netip.AddrPort) bool {
	if p.Grant == nil {
		return false
	}
	ip := addr.Addr().Unmap()
	if slices.Contains(p.AllowAddrs, netip.AddrPortFrom(ip, addr.Port())) {
		return false
	}
	asked := false
	probe := p
	probe.Grant = func(context.Context) error { asked = true; return nil }
	return probe.Check(addr) == nil && asked
}

// grantedConn is a connection to a private or loopback address that
// p.Grant allowed: before sending it asks the grant again once
// grantRecheck has passed, so a workspace whose grant is revoked stops
// using the connections it already holds (a run's kept-alive ones).
type grantedConn struct {
	net.Conn
	p      Egress
	addr   netip.AddrPort
	okAt   atomic.Int64 // unix nanoseconds of the grant's last yes
	closed atomic.Bool
}

func (c *grantedConn) Write(b []byte) (int, error) {
	if time.Since(time.Unix(0, c.okAt.Load())) >= grantRecheck {
		if err := c.p.CheckContext(context.Background(), c.addr); err != nil {
			if c.closed.CompareAndSwap(false, true) {
				_ = c.Conn.Close()
			}
			return 0, err
		}
		c.okAt.Store(time.Now().UnixNano())
	}
	return c.Conn.Write(b)
}

// guard wraps a connection made under p that p.Grant allowed.
func (p Egress) guard(c net.Conn) net.Conn {
	if p.Grant == nil {
		return c
	}
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil || !p.needsGrant(ap) {
		return c
	}
	g := &grantedConn{Conn: c, p: p, addr: ap}
	g.okAt.Store(time.Now().UnixNano())
	return g
}

// control is the dialer's hook: it runs after name resolution and before
// the connect system call, for every address tried.
func (p Egress) control(ctx context.Context, network, address string, _ syscall.RawConn) error {
	addr, err := netip.ParseAddrPort(address)
	if err != nil {
		return &EgressError{Reason: fmt.Sprintf("unexpected address %q", address), Hidden: "the address it resolves to could not be read",
			Kind: "an unreadable address"}
	}
	return p.CheckContext(ctx, addr)
}

// dialer is the policy's dialer: every address checked after resolution,
// and a connection allowed by p.Grant wrapped to ask it again (guard).
func (p Egress) dialer() func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: dialKeepAlive, ControlContext: p.control}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		target := addr
		if p.hosts != nil {
			if host, port, err := net.SplitHostPort(addr); err == nil && p.hosts[host] != "" {
				target = net.JoinHostPort(p.hosts[host], port)
			}
		}
		c, err := d.DialContext(ctx, network, target)
		if err != nil {
			if e, ok := refusedConnection(err); ok && e.Host == "" {
				// The host as the URL named it, for the message (which
				// names the address resolved only in local mode).
				if host, _, serr := net.SplitHostPort(addr); serr == nil {
					e.Host = host
				}
			}
			return nil, err
		}
		return p.guard(c), nil
	}
}

// Dial timeouts of the judge transport, as in net/http's default transport.
const (
	dialTimeout         = 30 * time.Second
	dialKeepAlive       = 30 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
	idleConnTimeout     = 90 * time.Second
)

// HTTPClient returns a client that connects only where p allows and never
// follows redirects (a redirect comes back as the 3xx answer itself).
//
// It ignores HTTP_PROXY/HTTPS_PROXY: through a proxy the dialer would see
// the proxy's address and not the judge's, and the check would mean nothing.
func (p Egress) HTTPClient() *http.Client {
	return &http.Client{Transport: p.roundTripper(0, nil), CheckRedirect: noRedirects}
}

// roundTripper is Transport(concurrency, wrap) for HTTPS, and for plain
// HTTP an exchange on the calling goroutine over the same policy's
// connections (h1Transport).
func (p Egress) roundTripper(concurrency int, wrap func(net.Conn) net.Conn) *h1Transport {
	dialer := p.dialer()
	dial := func(ctx context.Context, addr string) (net.Conn, net.Conn, error) {
		raw, err := dialer(ctx, "tcp", addr)
		if err != nil {
			return nil, nil, err
		}
		if wrap != nil {
			return raw, wrap(raw), nil
		}
		return raw, raw, nil
	}
	t := newH1Transport(p.Transport(concurrency, wrap), dial, max(concurrency, http.DefaultMaxIdleConnsPerHost))
	t.policy = p
	return t
}

func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Transport returns a transport that connects only where p allows. It
// keeps up to concurrency idle connections to the judge (at least the
// standard 2) and opens no more than concurrency (when positive), so that a run sending that many calls at once reuses its
// connections instead of opening (and handshaking) new ones, and speaks
// HTTP/2 where the endpoint offers it (one connection then carries many
// calls). wrap, if set, wraps every connection made (the runner fences
// writes with it); the policy's check runs before.
func (p Egress) Transport(concurrency int, wrap func(net.Conn) net.Conn) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	dial := p.dialer()
	tr.DialContext = dial
	if wrap != nil {
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return wrap(c), nil
		}
	}
	// A custom dialer turns net/http's HTTP/2 off unless asked for.
	tr.ForceAttemptHTTP2 = true
	tr.TLSHandshakeTimeout = tlsHandshakeTimeout
	tr.IdleConnTimeout = idleConnTimeout
	tr.MaxIdleConnsPerHost = max(concurrency, http.DefaultMaxIdleConnsPerHost)
	tr.MaxIdleConns = max(tr.MaxIdleConns, tr.MaxIdleConnsPerHost)
	if concurrency > 0 {
		// Without a cap, a call that starts in the instant between another
		// call's response and its connection going back to the pool dials
		// a connection of its own (a handshake, and one more socket than
		// the run ever uses at once). With it, the call waits for that
		// connection instead.
		tr.MaxConnsPerHost = concurrency
	}
	return tr
}

// ClientFor returns a client under the egress policy set by SetEgress (the
// safe default one before, see defaultEgress), never following redirects,
// whose transport is Transport(concurrency, wrap): for callers that need
// their own connections (the runner fences each run's writes), without
// ever losing the policy.
func ClientFor(concurrency int, wrap func(net.Conn) net.Conn) *http.Client {
	return GrantedClientFor(nil, concurrency, wrap)
}

// GrantedClientFor is ClientFor for the calls of one workspace, whose
// permission to reach the private and loopback addresses the policy allows
// is grant (nil: the policy alone decides, as for the default workspace).
// Its connections are its own: a connection another workspace's client
// opened to a private address is never handed to this one.
func GrantedClientFor(grant Grant, concurrency int, wrap func(net.Conn) net.Conn) *http.Client {
	p := policy()
	p.Grant = grant
	return &http.Client{Transport: p.roundTripper(concurrency, wrap), CheckRedirect: noRedirects}
}

// GrantedClient is a judge client of the egress policy for one
// workspace's calls (see GrantedClientFor), with the standard keep-alive:
// Test connection's, the launch form's steps'. Close its idle connections
// when done with it.
func GrantedClient(grant Grant) *http.Client { return GrantedClientFor(grant, 0, nil) }

// Current is the egress policy set by SetEgress (the safe default before):
// for pages that say what a judge may reach.
func Current() Egress { return policy() }

// currentPolicy is the policy last set by SetEgress.
var currentPolicy atomic.Pointer[Egress]

// policy is the policy set by SetEgress, or defaultEgress before.
func policy() Egress {
	if cur := currentPolicy.Load(); cur != nil {
		return *cur
	}
	return defaultEgress
}

// defaultClient is the client of every judge built without its own: set
// once at start-up by SetEgress, read by New. Process-wide on purpose: a
// judge client is built in several places (runs, "Test connection", the
// command line), and none of them may forget the policy.
var defaultClient atomic.Pointer[http.Client]

// defaultEgress is the policy until SetEgress is called: the safe one, as
// a server with no setting has it. Loopback and private addresses are
// refused (link-local and metadata ones always are), so a command, test or
// library user that forgets SetEgress cannot be turned into a way into the
// networks it can reach; each opens what it needs with SetEgress (the
// commands from the operator's settings, tests with local fakes with
// AllowLoopback), or gives a judge its own Config.HTTPClient.
var defaultEgress = Egress{}

// SetEgress sets the policy of every judge client built afterwards without
// its own Config.HTTPClient.
func SetEgress(p Egress) {
	currentPolicy.Store(&p)
	defaultClient.Store(p.HTTPClient())
}

func egressClient() *http.Client {
	if c := defaultClient.Load(); c != nil {
		return c
	}
	c := policy().HTTPClient()
	if defaultClient.CompareAndSwap(nil, c) {
		return c
	}
	return defaultClient.Load()
}

// refusedConnection finds an egress refusal in a transport error.
func refusedConnection(err error) (*EgressError, bool) {
	var e *EgressError
	return e, errors.As(err, &e)
}
