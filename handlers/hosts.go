package handlers

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// DefaultAllowedHosts are the host names a server answers to when the
// operator lists none: the loopback names a browser on the same machine
// uses. Any other Host header is what a DNS-rebinding page sends (its own
// name, resolved to 127.0.0.1), so it is refused.
var DefaultAllowedHosts = []string{"localhost", "127.0.0.1", "::1"}

// referrerPolicy keeps page addresses (which hold ids and upload tokens)
// from being sent to other sites when someone follows a link.
const referrerPolicy = "same-origin"

// forwardedHeaders are believed only from a trusted proxy: from anyone else
// they would let a client choose its address (rate limits, logs) or make a
// plain-HTTP request look like HTTPS (Secure cookies).
var forwardedHeaders = []string{
	echo.HeaderXForwardedFor, echo.HeaderXRealIP, echo.HeaderXForwardedProto, echo.HeaderXForwardedProtocol,
	echo.HeaderXForwardedSsl, echo.HeaderXUrlScheme, "X-Forwarded-Host", "Forwarded",
}

// NetworkPolicy says which names the server answers to and which peers are
// proxies whose forwarding headers are believed.
type NetworkPolicy struct {
	// AllowedHosts are the host names (without port) requests may carry in
	// their Host header; empty means DefaultAllowedHosts.
	AllowedHosts []string
	// TrustedProxies are the addresses of reverse proxies (TLS terminators)
	// in front of the server. Only their X-Forwarded-For and
	// X-Forwarded-Proto are used: the client address comes from the first
	// untrusted hop, and c.Scheme() is "https" when the proxy says so.
	TrustedProxies []netip.Prefix
}

// ParseTrustedProxies reads a comma-separated list of CIDR ranges or single
// addresses (e.g. "10.0.0.0/8, 192.168.1.5").
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if p, err := netip.ParsePrefix(item); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR range (e.g. 10.0.0.0/8)", item)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// ParseAllowedHosts reads a comma-separated list of host names; a port, if
// given, is ignored (the check is on the name).
func ParseAllowedHosts(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if h := normalHost(item); h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// normalHost lower-cases a Host value and drops its port, brackets and
// trailing dot, so "LOCALHOST.:8080" and "[::1]:80" compare as names.
func normalHost(h string) string {
	h = strings.TrimSpace(h)
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// hostPortValid reports whether a Host header's port, if it names one, is
// a port: 1 to 65535 in decimal digits. The name alone decides whether a
// host is allowed, but the links this server hands out (share and invite
// links, mailed links without a base URL) are built from the whole Host:
// "localhost:80;evil.example" passed as localhost and became the link
// http://localhost:80;evil.example/s/..., an address its sender chose.
func hostPortValid(host string) bool {
	_, port, err := net.SplitHostPort(strings.TrimSpace(host))
	if err != nil || port == "" {
		return true // no port, or not host:port at all: the name check decides
	}
	if len(port) > 5 || strings.Trim(port, "0123456789") != "" {
		return false
	}
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535
}

func (p NetworkPolicy) allowedHost(host string) bool {
	allowed := p.AllowedHosts
	if len(allowed) == 0 {
		allowed = DefaultAllowedHosts
	}
	if !hostPortValid(host) {
		return false
	}
	host = normalHost(host)
	for _, a := range allowed {
		if normalHost(a) == host {
			return true
		}
	}
	return false
}

// forwardedByUntrustedKey marks (in the Echo context) a request that came
// with forwarding headers from a peer that is not a trusted proxy.
const forwardedByUntrustedKey = "forwarded-by-untrusted-peer"

// localClient reports whether a request comes from this machine: its
// connection's peer is a loopback address and so is the client as the
// trusted proxies tell it (c.RealIP, see Apply). A request that an
// unlisted proxy forwarded is not local, even from a proxy on this
// machine: it speaks for someone else.
func (p NetworkPolicy) localClient(c echo.Context) bool {
	if forwarded, _ := c.Get(forwardedByUntrustedKey).(bool); forwarded {
		return false
	}
	return loopbackAddr(c.Request().RemoteAddr) && loopbackAddr(c.RealIP())
}

// relayed reports whether a proxy forwarded the request for a client
// elsewhere: it names a client (X-Forwarded-For, X-Real-IP, Forwarded),
// and that client is not on this machine as a trusted proxy tells it (a
// proxy nobody listed is not believed: whoever it speaks for, it is not
// the person at this machine). Such a request is never the local user's
// (localPrincipal) and cannot make the first owner (setup): a loopback
// listener behind a reverse proxy on the same machine is reachable from
// wherever the proxy is. A proxy that names no client cannot be told from
// a browser on this machine.
func (p NetworkPolicy) relayed(c echo.Context) bool {
	if named, _ := c.Get(clientNamedKey).(bool); !named {
		return false
	}
	return !p.trustedPeer(c.Request().RemoteAddr) || !loopbackAddr(c.RealIP())
}

// clientNamedKey marks (in the Echo context) a request with a header
// naming the client a proxy forwarded it for (clientHeaders), trusted or
// not.
const clientNamedKey = "forwarded-for-client"

// clientHeaders are the forwarding headers that name a client.
var clientHeaders = []string{echo.HeaderXForwardedFor, echo.HeaderXRealIP, "Forwarded"}

// loopbackAddr reports whether an address ("127.0.0.1:5555", "::1") is a
// loopback address.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

func (p NetworkPolicy) trustedPeer(remoteAddr string) bool {
	if len(p.TrustedProxies) == 0 {
		return false
	}
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, pr := range p.TrustedProxies {
		if pr.Contains(a) {
			return true
		}
	}
	return false
}

// trustOptions trusts exactly the configured proxies (not, as Echo does by
// default, every loopback and private address).
func (p NetworkPolicy) trustOptions() []echo.TrustOption {
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, pr := range p.TrustedProxies {
		opts = append(opts, echo.TrustIPRange(&net.IPNet{IP: pr.Addr().AsSlice(), Mask: net.CIDRMask(pr.Bits(), pr.Addr().BitLen())}))
	}
	return opts
}

// Apply sets how e finds a request's client and scheme: behind trusted
// proxies, c.RealIP() reads X-Forwarded-For up to the first untrusted hop
// and c.Scheme() believes X-Forwarded-Proto (so cookies can be marked
// Secure behind a TLS terminator); otherwise both come from the connection
// itself, never from a header the client wrote.
func (p NetworkPolicy) Apply(e *echo.Echo) {
	if len(p.TrustedProxies) == 0 {
		e.IPExtractor = echo.ExtractIPDirect()
		e.SchemeExtractor = echo.ExtractSchemeDirect()
		return
	}
	e.IPExtractor = echo.ExtractIPFromXFFHeader(p.trustOptions()...)
	e.SchemeExtractor = echo.ExtractSchemeFromHeaders(p.trustOptions()...)
}

// guardNetwork refuses requests whose Host the server does not answer to
// (DNS rebinding), drops forwarding headers that did not come from a
// trusted proxy, and sets the Referrer-Policy. The health checks answer
// whatever the Host, so that probes by address keep working; they reveal
// nothing.
func (h *Handlers) guardNetwork(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		c.Response().Header().Set("Referrer-Policy", referrerPolicy)
		if tokenInAddress(req.URL.Path) {
			// Every answer under a share link's, an invite's or a
			// password reset's address, not only its pages: a refusal (a
			// wrong host name, a busy server, an address the routes do
			// not know, such as the link with a slash a chat app added)
			// has the token in its address too.
			keepShareAddressPrivate(c.Response().Header())
		}
		for _, name := range clientHeaders {
			if req.Header.Get(name) != "" {
				c.Set(clientNamedKey, true)
			}
		}
		if !h.Network.trustedPeer(req.RemoteAddr) {
			for _, name := range forwardedHeaders {
				if req.Header.Get(name) != "" {
					// A proxy nobody listed forwarded this request: its
					// peer address is the proxy's, not the client's
					// (see localClient).
					c.Set(forwardedByUntrustedKey, true)
				}
				req.Header.Del(name)
			}
		}
		if p := req.URL.Path; p != "/healthz" && p != "/readyz" && !hostPortValid(req.Host) {
			h.Log.Warn("refused a request whose Host names no port number", "host", req.Host, "remote", req.RemoteAddr)
			return c.String(http.StatusMisdirectedRequest, fmt.Sprintf(
				"The address asked for (Host %q) has a port that is not a port number (1 to 65535): open the server at its address, e.g. http://%s:8080/.\n",
				req.Host, normalHost(req.Host)))
		}
		if p := req.URL.Path; p != "/healthz" && p != "/readyz" && !h.Network.allowedHost(req.Host) {
			h.Log.Warn("refused a request for a host name this server does not answer to", "host", req.Host, "remote", req.RemoteAddr)
			return c.String(http.StatusMisdirectedRequest, fmt.Sprintf(
				"This server does not answer to the host name %q. If you run it and meant to reach it by this name, add the name to BATCHEVAL_ALLOWED_HOSTS.\n",
				normalHost(req.Host)))
		}
		return next(c)
	}
}

// tokenInAddress says whether an address holds a secret token: a share
// link's, an invite's or a password reset's (sent by email or chat, and
// worth a workspace's reports or an account to whoever reads it).
func tokenInAddress(path string) bool {
	for _, base := range []string{shareBase(""), "/invites/", "/reset/"} {
		if strings.HasPrefix(path, base) {
			return true
		}
	}
	return false
}
