package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"math"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxTopLogprobs is the OpenAI API's limit for top_logprobs.
const maxTopLogprobs = 20

// schemaName is the response_format json_schema name; the judge's
// structured answer is a list of scores.
const schemaName = "scores"

// buildRequest turns r into the request body, rejecting what no endpoint
// would accept before spending an attempt on it.
func (c *Client) buildRequest(r Request) (chatRequest, *Error) {
	invalid := func(format string, args ...any) *Error {
		return &Error{Kind: KindBadRequest, Message: fmt.Sprintf(format, args...)}
	}
	if len(r.Messages) == 0 {
		return chatRequest{}, invalid("no messages to send")
	}
	switch {
	case r.N < 0:
		return chatRequest{}, invalid("n is %d: it must be 0 or more", r.N)
	case r.MaxTokens < 0:
		return chatRequest{}, invalid("max tokens is %d: it must be 0 (no cap) or more", r.MaxTokens)
	case r.TopLogprobs < 0 || r.TopLogprobs > maxTopLogprobs:
		return chatRequest{}, invalid("top logprobs is %d: it must be between 0 and %d", r.TopLogprobs, maxTopLogprobs)
	}

	msgs := make([]chatMessage, len(r.Messages))
	for i, m := range r.Messages {
		switch m.Role {
		case "system", "user", "assistant":
			msgs[i] = chatMessage{Content: m.Content, Role: m.Role}
		default:
			return chatRequest{}, invalid("message %d has role %q: use system, user or assistant", i+1, m.Role)
		}
	}

	p := chatRequest{
		Model:    c.cfg.Model,
		Messages: msgs,
		Seed:     r.Seed,
	}
	if !c.cfg.DefaultSamplingOnly {
		p.Temperature = sentFloat{V: r.Temperature, Sent: true}
		if r.TopP > 0 {
			p.TopP = r.TopP
		}
	}
	// max_completion_tokens counts the model's hidden reasoning too: the
	// answer asked for gets room for it (SentCap), else a reasoning model
	// spends the whole cap thinking and answers nothing (paid for all the
	// same).
	if c.cfg.TokenLimit == TokenLimitMaxCompletionTokens {
		p.MaxCompletionTokens = c.cfg.SentCap(r.MaxTokens)
	} else {
		p.MaxTokens = c.cfg.SentCap(r.MaxTokens)
	}
	if r.N > 1 {
		p.N = r.N
	}
	p.ReasoningEffort = string(c.cfg.ReasoningEffort) // "" is left out
	p.Logprobs = r.Logprobs || r.TopLogprobs > 0
	p.TopLogprobs = r.TopLogprobs // 0 is left out
	switch {
	case r.JSONSchema != nil:
		p.ResponseFormat = &responseFormat{
			Type:       "json_schema",
			JSONSchema: &jsonSchemaFormat{Name: schemaName, Schema: r.JSONSchema, Strict: true},
		}
	case r.JSONMode:
		p.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	return p, nil
}

// attempt makes one HTTP attempt under its own timeout. encErr is why the
// body could not be encoded: the attempt fails with it, as it did when the
// SDK encoded the body inside the attempt.
func (c *Client) attempt(ctx context.Context, body []byte, encErr error) (Response, *Error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()

	var httpResp *http.Response
	var raw []byte
	err := encErr
	start := time.Now()
	if err == nil {
		httpResp, raw, err = c.send(actx, body)
	}
	latency := time.Since(start)

	switch {
	case ctx.Err() != nil:
		return Response{}, &Error{Kind: KindCancelled, Err: context.Cause(ctx)}
	case httpResp != nil && httpResp.StatusCode >= 400:
		return Response{}, c.statusError(httpResp, raw)
	case httpResp != nil && httpResp.StatusCode >= 300:
		return Response{}, redirectError(actx, c.egress(), httpResp)
	case err != nil:
		return Response{}, c.transportError(actx, err, httpResp != nil)
	}
	resp, e := c.decode(raw)
	if e != nil {
		e.Status = httpResp.StatusCode
		return Response{}, e
	}
	resp.Latency = latency
	return resp, nil
}

// maxErrorBody bounds how much of an error body is read for its message.
const maxErrorBody = 64 << 10

// statusError reports an HTTP error status; body is the start of the
// error body, nil when it could not be read.
func (c *Client) statusError(res *http.Response, body []byte) *Error {
	kind, _ := kindForStatus(res.StatusCode)
	if kind == KindRateLimited && outOfQuota(body) {
		// OpenAI answers an account without credit 429 too: waiting
		// does not help, adding credit does.
		kind = KindPayment
	}
	e := &Error{
		Kind:       kind,
		Status:     res.StatusCode,
		RetryAfter: parseRetryAfter(res.Header, time.Now()),
		Message:    c.redact(errorMessage(body)),
	}
	if kind == KindBadRequest {
		e.Unsupported = unsupportedIn(body)
	}
	if page, title := htmlPage(body); page {
		// An API answers its errors in JSON: a web page comes from
		// something in front of it (a proxy, firewall, gateway or
		// sign-in page) or from a web server that is not the API. A 401
		// or 403 page is that thing refusing the call, not the API
		// refusing the key (the base URL is no way to the API from
		// here, as for a 2xx page); a 404 page is a path the API does
		// not have, not a model it lacks; a 5xx page is a gateway that
		// got no answer from the API, which may come back, so it stays
		// a retried server failure, as a 429 page stays a rate limit.
		// The page's title is the detail, not its markup.
		e.webPage = true
		e.Message = c.redact(webPageMessage(title))
		if res.StatusCode == http.StatusForbidden || res.StatusCode == http.StatusUnauthorized {
			e.Kind = KindNotAPI
		}
	}
	return e
}

// outOfQuota reports whether an error body is OpenAI's answer to an account
// out of credit (HTTP 429, error code or type "insufficient_quota"), as
// opposed to a rate limit that passes.
func outOfQuota(body []byte) bool {
	var v struct {
		Error struct {
			Code any    `json:"code"`
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return false
	}
	code, _ := v.Error.Code.(string)
	return code == "insufficient_quota" || v.Error.Type == "insufficient_quota"
}

// redirectError reports a 3xx answer: redirects are not followed, since an
// allowed endpoint could otherwise send the call (and its key) anywhere.
// Only the scheme and host of the target are told, to help fix the URL,
// and only when this server would call it for this client under p
// (refusedRedirect): a target it refuses (a cloud metadata address,
// loopback when loopback judges are off, a private address the operator
// allows but the workspace has no grant for, plain http from an https
// base URL) is never offered as the base URL to use; the error says the
// redirect is refused, and why.
func redirectError(ctx context.Context, p Egress, res *http.Response) *Error {
	e := &Error{Kind: KindRefused, Status: res.StatusCode}
	u, err := url.Parse(res.Header.Get("Location"))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return e
	}
	var from *url.URL
	if res.Request != nil {
		from = res.Request.URL
	}
	why, resolved := refusedRedirect(ctx, p, from, u, net.DefaultResolver.LookupNetIP)
	switch {
	case why != "":
		e.redirect = redirectRefused
		e.Message = "the redirect is refused: " + why
	case !resolved:
		// Not checked, so not offered: the name may resolve later to an
		// address this server refuses, and a base URL that cannot be
		// reached is no advice either.
		e.redirect = redirectUnresolved
		e.Message = "it points to " + cleanText(u.Scheme+"://"+u.Host) + ", a name this server cannot resolve"
	default:
		e.Message = "it points to " + cleanText(u.Scheme+"://"+u.Host)
	}
	return e
}

// egress is the policy c's calls connect under, the workspace's grant
// included: its transport's when it is one of this package's (every
// client the server builds), else the process's (a caller's own client).
func (c *Client) egress() Egress {
	if t, ok := c.cfg.HTTPClient.Transport.(*h1Transport); ok {
		return t.policy
	}
	return policy()
}

// redirectLookupTimeout bounds the name lookup of a redirect's target.
const redirectLookupTimeout = 2 * time.Second

// refusedRedirect says why this server would refuse to call to, the target
// of a redirect answered to a request for from, under the policy p; ""
// when it would call it. It refuses what it would refuse as a base URL (the
// dialer's check, Egress.Check, on the target's addresses: its literal
// address, localhost's loopback, or what lookup finds for a name within
// redirectLookupTimeout; p.Grant asked as a connection would ask it), a
// cloud metadata service's name, and a
// downgrade from https to plain http, which would send the call and its
// API key unencrypted. The reasons never name the target. resolved is
// false when the target is a name that lookup could not resolve (and no
// reason refused it before the lookup): it is neither refused nor
// checked, so it must not be offered as a base URL either.
func refusedRedirect(ctx context.Context, p Egress, from, to *url.URL, lookup func(context.Context, string, string) ([]netip.Addr, error)) (why string, resolved bool) {
	if from != nil && strings.EqualFold(from.Scheme, "https") && strings.EqualFold(to.Scheme, "http") {
		return "it leads from https to plain http, which would send the calls and the API key unencrypted", true
	}
	host := strings.TrimSuffix(strings.ToLower(to.Hostname()), ".")
	if metadataHost(host) {
		return "it leads to a cloud metadata service, which judge calls never reach", true
	}
	port := uint16(80)
	if strings.EqualFold(to.Scheme, "https") {
		port = 443
	}
	if n, err := strconv.ParseUint(to.Port(), 10, 16); err == nil {
		port = uint16(n)
	}
	var addrs []netip.Addr
	switch ip, err := netip.ParseAddr(host); {
	case err == nil:
		addrs = []netip.Addr{ip.WithZone("")}
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	case lookup != nil:
		lctx, cancel := context.WithTimeout(ctx, redirectLookupTimeout)
		addrs, _ = lookup(lctx, "ip", host)
		cancel()
	}
	for _, a := range addrs {
		var ee *EgressError
		if errors.As(p.CheckContext(ctx, netip.AddrPortFrom(a, port)), &ee) {
			return "it leads to an address this server does not call judges at: " + ee.PublicReason(), true
		}
	}
	return "", len(addrs) > 0
}

func (c *Client) transportError(actx context.Context, err error, gotResponse bool) *Error {
	var netErr net.Error
	var ns *NotSent
	if ee, ok := refusedConnection(err); ok {
		// Refused in the dialer: nothing was sent.
		return &Error{Kind: KindRefused, Message: ee.Error(), Err: err}
	}
	switch {
	case errors.As(err, &ns):
		return &Error{Kind: KindCancelled, Message: ns.Err.Error(), Err: ns}
	case errors.Is(err, errAnswerTooLarge):
		return &Error{Kind: KindMalformed, Message: errAnswerTooLarge.Error(), Err: err}
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, limit: c.cfg.Timeout, Err: err}
	case errors.As(err, &netErr) && netErr.Timeout():
		return &Error{Kind: KindTimeout, Message: c.redact(err.Error()), Err: err}
	case gotResponse:
		// The status arrived but the body broke off.
		return &Error{Kind: KindNetwork, Message: c.redact(err.Error()), Err: err}
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return &Error{Kind: KindNetwork, Message: c.redact(err.Error()), Err: err}
	}
	// Nothing was sent: the request could not be built (its body could not
	// be encoded), and building it again will fail the same way.
	return &Error{Kind: KindBadRequest, Message: c.redact("could not build the request: " + err.Error()), Err: err}
}

// decode turns a 2xx body into a Response; anything unusable is malformed.
func (c *Client) decode(raw []byte) (Response, *Error) {
	if page, title := htmlPage(raw); page {
		// A web page with a success status: the web interface of a
		// chat front end, a sign-in page or a proxy, never the API.
		// Asking again gets the same page.
		return Response{}, &Error{Kind: KindNotAPI, Message: c.redact(webPageMessage(title))}
	}
	if !validJSON(raw) {
		// Only to word the error as before: encoding/json's syntax error.
		err := json.Unmarshal(raw, new(struct{}))
		if err == nil {
			err = errors.New("invalid JSON") // not expected: Valid said no
		}
		return Response{}, &Error{Kind: KindMalformed, Message: c.redact("the body is not JSON: " + err.Error()), Err: err}
	}
	cc, err := parseCompletion(raw)
	if err != nil {
		return Response{}, &Error{Kind: KindMalformed, Message: c.redact("the body is not JSON: " + err.Error()), Err: err}
	}
	if len(cc.Choices) == 0 {
		msg := "the answer has no choices"
		if m := errorMessage(raw); m != "" {
			// Some proxies answer 200 with an error object.
			msg += ": " + m
		}
		// Billed all the same when the endpoint reports usage.
		return Response{}, &Error{Kind: KindMalformed, Message: c.redact(msg),
			PromptTokens: int(cc.PromptTokens), CompletionTokens: int(cc.CompletionTokens)}
	}
	resp := Response{
		Choices:          cc.Choices,
		PromptTokens:     int(cc.PromptTokens),
		CompletionTokens: int(cc.CompletionTokens),
		Model:            cc.Model,
	}
	if resp.Model == "" {
		resp.Model = c.cfg.Model
	}
	return resp, nil
}

// htmlPage reports whether a body is an HTML page rather than JSON, and
// its title (whitespace collapsed, cut to 80 characters; empty when it has
// none).
func htmlPage(raw []byte) (bool, string) {
	head := strings.TrimSpace(strings.TrimPrefix(string(raw[:min(len(raw), 4096)]), "\ufeff"))
	start := strings.ToLower(head[:min(len(head), 14)])
	page := false
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body", "<!--"} {
		if strings.HasPrefix(start, p) {
			page = true
		}
	}
	if !page {
		return false, ""
	}
	m := htmlTitle.FindStringSubmatch(head)
	if m == nil {
		return true, ""
	}
	title := strings.Join(strings.Fields(html.UnescapeString(m[1])), " ")
	if r := []rune(title); len(r) > 80 {
		title = string(r[:80]) + "…"
	}
	return true, title
}

// webPageMessage is an Error's detail for a body that is a web page with
// title ("" when it has none). The title is the page's text, quoted; the
// pages that show it escape it.
func webPageMessage(title string) string {
	if title == "" {
		return "the body is a web page, not JSON"
	}
	return fmt.Sprintf("the body is a web page titled %q, not JSON", title)
}

// htmlTitle finds a page's title in its first bytes.
var htmlTitle = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title`)

// maxRetryAfter caps a parsed Retry-After so absurd values cannot overflow
// a Duration; anything this long is "too long" under any sane ceiling.
const maxRetryAfter = 30 * 24 * time.Hour

// parseRetryAfter reads how long the endpoint asked us to wait: OpenAI's
// retry-after-ms (milliseconds, more precise) first, then the standard
// Retry-After as seconds or an HTTP date. 0 when absent or unparsable.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	seconds := func(v string, unit time.Duration) (time.Duration, bool) {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false
		}
		if f <= 0 {
			return 0, true
		}
		if f*float64(unit) > float64(maxRetryAfter) {
			return maxRetryAfter, true
		}
		return time.Duration(f * float64(unit)), true
	}
	if v := h.Get("retry-after-ms"); v != "" {
		if d, ok := seconds(v, time.Millisecond); ok {
			return d
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if d, ok := seconds(v, time.Second); ok {
		return d
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxRetryAfter)
	}
	return 0
}

// maxMessageRunes keeps server explanations readable in a page or log.
const maxMessageRunes = 300

// errorMessage pulls the explanation out of a JSON error body in the shapes
// OpenAI-compatible servers use: {"error":{"message":...,"type":...}}
// (OpenAI, OpenRouter, Ollama), {"error":"..."}, {"message":...} (vLLM) and
// {"detail":...} (FastAPI). Anything else (plain text, HTML) gives "": a
// judge URL can point at any service, and its raw answer must not be
// relayed to whoever typed that URL. The result is one line of printable
// text, at most maxMessageRunes long.
func errorMessage(body []byte) string {
	body = []byte(strings.TrimSpace(string(body)))
	if len(body) == 0 || !json.Valid(body) {
		return ""
	}
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	var nested struct {
		Message  string          `json:"message"`
		Type     string          `json:"type"`
		Metadata json.RawMessage `json:"metadata"`
	}
	var s string
	switch {
	case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
		msg := nested.Message
		// OpenRouter's "Provider returned error" says nothing: the
		// provider's own message, passed on in metadata.raw, does.
		if raw := providerRaw(nested.Metadata); raw != nil {
			if inner := errorMessage(raw); inner != "" {
				msg += ": " + inner
			}
		}
		if nested.Type != "" {
			return truncate(nested.Type + ": " + msg)
		}
		return truncate(msg)
	case json.Unmarshal(v.Error, &s) == nil && s != "":
		return truncate(s)
	case v.Message != "":
		return truncate(v.Message)
	case json.Unmarshal(v.Detail, &s) == nil && s != "":
		return truncate(s)
	}
	return ""
}

// cleanText makes outside text one line of printable characters: control
// and formatting characters (escape sequences, bidi overrides) are dropped
// and runs of white space become one space.
func cleanText(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError:
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func truncate(s string) string {
	s = cleanText(s)
	if r := []rune(s); len(r) > maxMessageRunes {
		return string(r[:maxMessageRunes]) + "…"
	}
	return s
}

// redact removes the API key, and whatever the text quotes of it
// (RedactKey: "Incorrect API key provided: sk-abc1****wxyz", its first
// characters), and the credentials a base URL stored before they were
// refused holds, from text that came from outside, in case an endpoint or
// transport error echoes them back (the HTTP client names the address it
// called, user name included).
func (c *Client) redact(s string) string {
	return RedactKey(RedactURLIn(s, c.cfg.BaseURL), c.cfg.APIKey)
}
