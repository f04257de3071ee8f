package judge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// ErrorKind classifies why a judge call failed, so callers can decide
// between retrying later, snoozing, and giving up without reading text.
type ErrorKind string

// The kinds of judge failure.
const (
	KindRateLimited ErrorKind = "rate_limited" // HTTP 429: slow down or wait RetryAfter
	KindAuth        ErrorKind = "auth"         // HTTP 401/403 (not a web page): the key is wrong or lacks access
	KindBadRequest  ErrorKind = "bad_request"  // HTTP 400/422 and other 4xx, or an invalid Request
	KindNotFound    ErrorKind = "not_found"    // HTTP 404: wrong base URL or model name
	KindPayment     ErrorKind = "payment"      // HTTP 402, or OpenAI's 429 insufficient_quota: the account is out of credits
	KindServer      ErrorKind = "server"       // HTTP 5xx and 409: the endpoint failed
	KindTimeout     ErrorKind = "timeout"      // no answer within Config.Timeout, or HTTP 408
	KindNetwork     ErrorKind = "network"      // the endpoint could not be reached
	KindMalformed   ErrorKind = "malformed"    // the answer is not a usable chat completion
	KindNotAPI      ErrorKind = "not_api"      // a 2xx or 403 answer that is a web page (HTML): the base URL is no API, or a proxy in front of it refuses
	KindCancelled   ErrorKind = "cancelled"    // the caller's context ended
	KindRefused     ErrorKind = "refused"      // the egress policy forbids the address, or the endpoint redirected
)

// Error is the only error type Complete and Ping return. It never carries
// the API key: server-supplied text is scrubbed of it before it is stored.
type Error struct {
	Kind ErrorKind
	// Status is the HTTP status of the last attempt; 0 when no HTTP answer came.
	Status int
	// Attempts is how many HTTP attempts were made before giving up.
	Attempts int
	// RetryAfter is how long the endpoint asked us to wait (Retry-After or
	// retry-after-ms), 0 when it did not say.
	RetryAfter time.Duration
	// Message is the detail behind Kind: the endpoint's own explanation,
	// the transport error, or what is wrong with the Request.
	Message string
	// Err is the underlying cause, if any.
	Err error
	// PromptTokens and CompletionTokens are the usage the endpoint
	// reported with answers it was billed for but that could not be used
	// (a 200 with usage and no choices), summed over the call's attempts. The caller counts
	// them in the run's tokens and cost: the provider charged them.
	PromptTokens, CompletionTokens int
	// ExtraCalls counts the paid calls behind this failure beyond the
	// call itself: a hedged copy that failed too (hedge.go), whose tokens
	// are in PromptTokens and CompletionTokens and whose attempts in
	// Attempts.
	ExtraCalls int
	// NeverSent is set when attempts were made but none of them wrote its
	// request out (the connection could not be opened, or the call ended
	// while it was being opened): the endpoint never saw the call, so it
	// is not a paid call. Set by Client; an Error built elsewhere leaves
	// it false and counts as sent, the safe side for the run's spend.
	NeverSent bool
	// Cached is set on a refusal given back by the answer cache: an
	// identical request was refused before, and the caller asked for
	// refusals to be kept (KeepRefusal). The call never reached the
	// endpoint (Attempts is 0); it is one of the run's calls, answered
	// from the cache like a stored answer.
	Cached bool
	// Hint names the change to the judge's settings that the failure
	// calls for, when the client can tell it from its own settings (an
	// Azure OpenAI per-deployment address without ?api-version=, or its
	// key sent as a Bearer token: azureDeploymentHint); "" otherwise.
	// Every call with those settings fails the same way. Error leaves it
	// out (Test connection shows it apart); InRun ends with it.
	Hint string
	// Unsupported names the request parameter a 400 refused for the model
	// (unsupportedIn: max_tokens, or a temperature or top_p other than the
	// default), "" otherwise. The judge's settings decide what is sent;
	// Hint says which one to change when the judge does not have it yet.
	Unsupported Unsupported

	// redirect says what this server makes of a redirect's target
	// (refusedRedirect): only a target it would call is offered as the
	// base URL; a refused one is said to be refused, and one whose name
	// does not resolve is named but not offered.
	redirect redirectTarget

	// webPage is set on an HTTP error status (403, 5xx) whose body is a
	// web page (HTML) rather than the API's JSON error: something in
	// front of the API answered. Used only to word Error().
	webPage bool

	// limit is the per-attempt timeout or the Retry-After ceiling that was
	// hit, used only to word Error().
	limit time.Duration
}

// Error says in plain English what went wrong and what to check. It is
// the text users read (runs, batches and waits store it as it is), so it
// opens with what happened, never with a code path such as "judge: ".
func (e *Error) Error() string { return e.text(false) }

// InRun is Error worded for the error of a run the failure stopped: where
// Error says what to do in words that fit wherever it shows (Test
// connection too, where there is no run), InRun names the run's next step
// (an account out of credits: add credits, then resume the run).
func (e *Error) InRun() string { return e.text(true) }

func (e *Error) text(inRun bool) string {
	var b strings.Builder
	b.WriteString(e.summary())
	if inRun && e.Kind == KindPayment {
		b.WriteString(", then resume the run")
	}
	if e.Message != "" {
		b.WriteString(". Details: ")
		b.WriteString(e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, "; gave up after %d attempts", e.Attempts)
	}
	if inRun && e.Hint != "" {
		// The endpoint's message may end a sentence of its own.
		if !strings.HasSuffix(b.String(), ".") {
			b.WriteString(".")
		}
		b.WriteString(" ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *Error) summary() string {
	switch e.Kind {
	case KindRateLimited:
		if e.limit > 0 && e.RetryAfter > e.limit {
			return fmt.Sprintf("the endpoint is rate limiting (HTTP 429) and asked to wait %s, longer than the %s we wait for: try again later or lower the request rate", e.RetryAfter, e.limit)
		}
		return "the endpoint is rate limiting (HTTP 429): lower the concurrency or request rate, or check the account's quota"
	case KindAuth:
		if e.Status == http.StatusForbidden {
			return "the endpoint refused access (HTTP 403): check the API key has access to this model"
		}
		return fmt.Sprintf("the endpoint refused the API key (HTTP %d): check the key", e.Status)
	case KindBadRequest:
		if e.Status == 0 {
			return "the judge request is invalid"
		}
		if e.ContextOverflow() {
			return fmt.Sprintf("the prompt and its answer do not fit the model's context window (HTTP %d): lower the batch size or max tokens, shorten the longest texts, or use a model with a longer context", e.Status)
		}
		return fmt.Sprintf("the endpoint rejected the request (HTTP %d): check the model name and that the model supports the parameters sent (logprobs, seed, response_format, n)", e.Status)
	case KindPayment:
		return fmt.Sprintf("the endpoint refused to answer for payment (HTTP %d): the account behind the API key is out of credits or over its spending limit; add credits (or raise the key's limit) with the provider", e.Status)
	case KindNotFound:
		if e.webPage {
			return "the endpoint answered 404 Not Found with a web page (HTML), not the API's JSON: the address is a web server's, not the API's; check the base URL (it usually ends in /v1)"
		}
		return "the endpoint answered 404 Not Found: check the base URL (it usually ends in /v1) and the model name"
	case KindServer:
		if e.webPage {
			return fmt.Sprintf("the endpoint failed (HTTP %d) with a web page (HTML), not the API's JSON: a proxy or gateway in front of the API answered for it, and the API behind it may be down or overloaded; try again later, and if it lasts check the base URL with whoever runs the endpoint", e.Status)
		}
		return fmt.Sprintf("the endpoint failed (HTTP %d): it may be overloaded or down; try again later", e.Status)
	case KindTimeout:
		if e.Status == http.StatusRequestTimeout {
			return "the endpoint timed out (HTTP 408): it may be overloaded; try again later"
		}
		if e.limit > 0 {
			return fmt.Sprintf("the endpoint did not answer within %s: raise the timeout or check the server is not overloaded", e.limit)
		}
		return "the endpoint did not answer in time: raise the timeout or check the server is not overloaded"
	case KindNetwork:
		return "could not reach the endpoint: check the base URL and that the server is running"
	case KindNotAPI:
		if e.webPage && (e.Status == http.StatusForbidden || e.Status == http.StatusUnauthorized) {
			return fmt.Sprintf("the endpoint refused access (HTTP %d) with a web page (HTML), not the API's JSON: a proxy, firewall or sign-in page in front of the API refused the call before the API saw the key; check the base URL, and that this server may pass that proxy, with whoever runs the endpoint", e.Status)
		}
		return "the address answers with a web page (HTML), not an OpenAI-compatible API: check the base URL (it usually ends in /v1); a sign-in page or a proxy in the way answers so too"
	case KindMalformed:
		return "the endpoint's answer is not a usable chat completion: check the base URL points at an OpenAI-compatible API"
	case KindRefused:
		if e.Status >= 300 && e.Status < 400 && e.redirect == redirectRefused {
			return fmt.Sprintf("the endpoint answered with a redirect (HTTP %d) to an address this server refuses to call, so the redirect is refused: its target is no base URL to use; check the base URL with whoever runs the endpoint", e.Status)
		}
		if e.Status >= 300 && e.Status < 400 && e.redirect == redirectUnresolved {
			return fmt.Sprintf("the endpoint answered with a redirect (HTTP %d) to a name this server cannot resolve, and judge calls never follow redirects: check the base URL with whoever runs the endpoint", e.Status)
		}
		if e.Status >= 300 && e.Status < 400 {
			return fmt.Sprintf("the endpoint answered with a redirect (HTTP %d), and judge calls never follow redirects: use the address it redirects to as the base URL", e.Status)
		}
		return "this server does not call judges at that address"
	case KindCancelled:
		if errors.Is(e.Err, context.DeadlineExceeded) {
			return "the caller's deadline passed before the judge answered"
		}
		return "the request was cancelled"
	}
	return "the judge call failed"
}

// redirectTarget is what a redirect's target is to this server.
type redirectTarget uint8

const (
	redirectCallable   redirectTarget = iota // would be called: offered as the base URL
	redirectRefused                          // refused: never offered, never named
	redirectUnresolved                       // a name that did not resolve: named, not offered
)

// summaryForms match, whole, every summary an Error opens with (summary):
// its formats, a status or count for %d and a duration for %s.
var summaryForms = func() []*regexp.Regexp {
	const duration = `(?:[0-9.]+(?:h|m|s|ms|µs|us|ns))+`
	var out []*regexp.Regexp
	for _, f := range []string{
		"the endpoint is rate limiting (HTTP 429) and asked to wait %s, longer than the %s we wait for: try again later or lower the request rate",
		"the endpoint is rate limiting (HTTP 429): lower the concurrency or request rate, or check the account's quota",
		"the endpoint refused access (HTTP 403): check the API key has access to this model",
		"the endpoint refused the API key (HTTP %d): check the key",
		"the judge request is invalid",
		"the prompt and its answer do not fit the model's context window (HTTP %d): lower the batch size or max tokens, shorten the longest texts, or use a model with a longer context",
		"the endpoint rejected the request (HTTP %d): check the model name and that the model supports the parameters sent (logprobs, seed, response_format, n)",
		// The run's wording (InRun), which every run's error stored
		// before it had, then Error's.
		"the endpoint refused to answer for payment (HTTP %d): the account behind the API key is out of credits or over its spending limit; add credits (or raise the key's limit) with the provider, then resume the run",
		"the endpoint refused to answer for payment (HTTP %d): the account behind the API key is out of credits or over its spending limit; add credits (or raise the key's limit) with the provider",
		"the endpoint answered 404 Not Found: check the base URL (it usually ends in /v1) and the model name",
		"the endpoint failed (HTTP %d): it may be overloaded or down; try again later",
		"the endpoint failed (HTTP %d) with a web page (HTML), not the API's JSON: a proxy or gateway in front of the API answered for it, and the API behind it may be down or overloaded; try again later, and if it lasts check the base URL with whoever runs the endpoint",
		"the endpoint refused access (HTTP %d) with a web page (HTML), not the API's JSON: a proxy, firewall or sign-in page in front of the API refused the call before the API saw the key; check the base URL, and that this server may pass that proxy, with whoever runs the endpoint",
		"the endpoint answered 404 Not Found with a web page (HTML), not the API's JSON: the address is a web server's, not the API's; check the base URL (it usually ends in /v1)",
		"the endpoint timed out (HTTP 408): it may be overloaded; try again later",
		"the endpoint did not answer within %s: raise the timeout or check the server is not overloaded",
		"the endpoint did not answer in time: raise the timeout or check the server is not overloaded",
		"could not reach the endpoint: check the base URL and that the server is running",
		"the endpoint's answer is not a usable chat completion: check the base URL points at an OpenAI-compatible API",
		"the address answers with a web page (HTML), not an OpenAI-compatible API: check the base URL (it usually ends in /v1); a sign-in page or a proxy in the way answers so too",
		"the endpoint answered with a redirect (HTTP %d), and judge calls never follow redirects: use the address it redirects to as the base URL",
		"the endpoint answered with a redirect (HTTP %d) to an address this server refuses to call, so the redirect is refused: its target is no base URL to use; check the base URL with whoever runs the endpoint",
		"the endpoint answered with a redirect (HTTP %d) to a name this server cannot resolve, and judge calls never follow redirects: check the base URL with whoever runs the endpoint",
		"this server does not call judges at that address",
		"the caller's deadline passed before the judge answered",
		"the request was cancelled",
		"the judge call failed",
	} {
		q := regexp.QuoteMeta(f)
		q = strings.ReplaceAll(q, "%d", `\d{1,3}`)
		q = strings.ReplaceAll(q, "%s", duration)
		out = append(out, regexp.MustCompile("^"+q+"$"))
	}
	return out
}()

// OwnWords returns the client's own words that open text, an Error's
// message (Error) or a text that ends with one: what happened and what to
// check, without the details behind it (the endpoint's or the transport's
// text, which may name the judge's address, its host and this server's
// network settings) and the count of attempts. ok is false when text does
// not open with them.
func OwnWords(text string) (words string, ok bool) {
	head := text
	if i := strings.Index(head, ". Details: "); i >= 0 {
		head = head[:i]
	} else if i := strings.Index(head, "; gave up after "); i >= 0 {
		head = head[:i]
	}
	for _, re := range summaryForms {
		if re.MatchString(head) {
			return head, true
		}
	}
	return "", false
}

// ContextOverflow reports whether the endpoint refused the request for
// being longer than the model's context window, as OpenAI, Azure, vLLM,
// llama.cpp's server and OpenRouter word it. The kind stays bad_request:
// the same request never succeeds, and stored failure kinds keep their
// meaning.
func (e *Error) ContextOverflow() bool {
	if e.Kind != KindBadRequest || e.Message == "" {
		return false
	}
	m := strings.ToLower(e.Message)
	for _, sign := range contextOverflowSigns {
		if strings.Contains(m, sign) {
			return true
		}
	}
	return false
}

// contextOverflowSigns are lower-case phrases of the error messages that
// endpoints send for a prompt longer than the context window.
var contextOverflowSigns = []string{
	"context_length_exceeded",
	"maximum context length",
	"context length exceeded",
	"exceeds the available context size",
	"exceed_context_size",
	"exceeds the context window",
	"prompt is too long",
	"too many tokens",
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Temporary reports whether the same request may succeed later: rate
// limits, server failures, timeouts, network errors and malformed answers.
func (e *Error) Temporary() bool {
	switch e.Kind {
	case KindRateLimited, KindServer, KindTimeout, KindNetwork, KindMalformed:
		return true
	}
	return false
}

// IsRateLimited reports whether err is a rate limit, and how long the
// endpoint asked to wait (0 when it did not say), e.g. to snooze a job.
func IsRateLimited(err error) (retryAfter time.Duration, ok bool) {
	var e *Error
	if errors.As(err, &e) && e.Kind == KindRateLimited {
		return e.RetryAfter, true
	}
	return 0, false
}

// BilledOf returns the tokens a failed call was billed for (Error's
// PromptTokens and CompletionTokens); 0, 0 when err is not a judge error.
func BilledOf(err error) (prompt, completion int) {
	var e *Error
	if errors.As(err, &e) {
		return e.PromptTokens, e.CompletionTokens
	}
	return 0, 0
}

// NeverSentOf reports whether err is a judge call that never reached the
// endpoint (Error.NeverSent).
func NeverSentOf(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.NeverSent
}

// Reached reports whether the failed call err reached the endpoint: an
// attempt was made and wrote its request out (not Error.NeverSent). Such a
// call is one of the run's judge calls, paid for or not; one refused
// before it was sent, or that never got a connection, is not.
func Reached(err error) bool {
	return AttemptsOf(err) > 0 && !NeverSentOf(err)
}

// CachedOf reports whether the failed call err was refused from the
// answer cache (Error.Cached).
func CachedOf(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Cached
}

// ExtraCallsOf returns the paid calls a failure counts beyond the call
// itself (Error.ExtraCalls); 0 when err is not a judge error.
func ExtraCallsOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.ExtraCalls
	}
	return 0
}

// AttemptsOf returns how many HTTP attempts the failed call made; 0 when
// err is not a judge error.
func AttemptsOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Attempts
	}
	return 0
}

// kindForStatus maps an HTTP error status to a kind and whether to retry.
func kindForStatus(status int) (kind ErrorKind, retry bool) {
	switch {
	case status == http.StatusTooManyRequests:
		return KindRateLimited, true
	case status == http.StatusRequestTimeout:
		return KindTimeout, true
	case status == http.StatusConflict:
		// OpenAI documents 409 as a transient conflict worth retrying.
		return KindServer, true
	case status >= 500:
		return KindServer, true
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return KindAuth, false
	case status == http.StatusNotFound:
		return KindNotFound, false
	case status == http.StatusPaymentRequired:
		// Out of credits (OpenRouter, prepaid accounts): no request can
		// succeed until the account is topped up, and the request itself
		// is not at fault (it is no refusal of logprobs, n or a schema).
		return KindPayment, false
	default:
		// 400, 422 and the rest of 4xx (413 too large...):
		// sending the same request again cannot help.
		return KindBadRequest, false
	}
}

// NotSent is returned by an HTTP transport that deliberately did not send
// a request (Config.HTTPClient's RoundTripper checking, at the last moment,
// that the caller may still send). The call stops as KindCancelled, is not
// retried, and the refusal is not counted as an attempt.
type NotSent struct{ Err error }

func (e *NotSent) Error() string { return "request not sent: " + e.Err.Error() }

// Unwrap returns the reason.
func (e *NotSent) Unwrap() error { return e.Err }
