// Package judge is the client of the judge model: it sends one chat
// completion request to any OpenAI-compatible endpoint (OpenAI, Ollama,
// vLLM, llama.cpp, OpenRouter, Azure OpenAI's v1 API and per-deployment
// endpoints), retries what is worth
// retrying, and turns every failure into an *Error whose Kind says what to
// do next.
//
// The protocol is spoken by a few explicit lines of net/http and JSON
// (wire.go, decode.go) that send the bytes the official SDK
// (github.com/openai/openai-go) sent and read answers as it read them, at a
// fraction of its CPU; retries are ours (github.com/cenkalti/backoff/v5),
// so that attempts can be counted, Retry-After honoured, and timeouts
// applied per attempt.
package judge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/batcheval/batcheval/evaluator"
)

// Defaults applied by New to zero Config fields.
const (
	// DefaultTimeout is per attempt: a local model on a CPU can take a minute
	// or more to answer a batch prompt of ten samples, and the first request
	// to Ollama also loads the model.
	DefaultTimeout = 120 * time.Second
	// DefaultMaxAttempts includes the first try: with backoff doubling from
	// 500ms, five attempts ride out about 7s of trouble plus any Retry-After,
	// enough for a restart or a burst of 429s, without hiding a real outage.
	DefaultMaxAttempts = 5
	// DefaultMinBackoff is the first wait; shorter would hit a struggling
	// server again before it had a chance to recover.
	DefaultMinBackoff = 500 * time.Millisecond
	// DefaultMaxBackoff caps the exponential wait so a long run keeps moving.
	DefaultMaxBackoff = 30 * time.Second
	// DefaultMaxRetryAfter is the longest Retry-After we sleep through inside
	// one call; longer (e.g. a daily quota) is reported as rate_limited with
	// RetryAfter set, so the job queue can snooze instead of holding a worker.
	DefaultMaxRetryAfter = 120 * time.Second
	// DefaultTimeoutRetries: a timed-out request was probably processed,
	// and paid for, by the endpoint; retrying it more than once multiplies
	// the bill of a judge that is simply too slow for the timeout.
	DefaultTimeoutRetries = 1
)

// backoffMultiplier doubles the wait after each failure, the usual choice.
const backoffMultiplier = 2

// backoffJitter spreads each wait over ±50% so parallel workers that failed
// together do not retry together.
const backoffJitter = 0.5

// Config says where the judge lives and how patiently to talk to it.
type Config struct {
	BaseURL string // e.g. https://api.openai.com/v1, http://localhost:11434/v1
	Model   string
	APIKey  string // may be empty (Ollama, vLLM, llama.cpp)
	// KeyHeader says how APIKey is sent; "" is KeyBearer.
	KeyHeader KeyHeader
	// TokenLimit names the answer's cap in the request body: "" is
	// TokenLimitMaxTokens (max_tokens); OpenAI's reasoning models (o1, o3,
	// o4-mini, gpt-5) take only TokenLimitMaxCompletionTokens.
	TokenLimit TokenLimit
	// DefaultSamplingOnly is set for a judge that refuses any temperature
	// or top_p but the default (OpenAI's reasoning models): neither is
	// ever sent to it, so the endpoint samples at its only setting. A run
	// is refused at launch unless its settings say that setting (launch
	// checks them), so what a run records is what the judge did.
	DefaultSamplingOnly bool
	// ReasoningEffort is sent as reasoning_effort when set (OpenAI's
	// reasoning models and OpenRouter take low, medium or high); unset,
	// the default, sends nothing, so every other judge's request is as
	// before.
	ReasoningEffort ReasoningEffort
	// SettingsAt says where the user changes the settings above, so that a
	// refusal's hint names the right control: the judge's page (the
	// default) or the command line's flags.
	SettingsAt SettingsPlace
	// Timeout bounds each attempt; default DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts bounds the HTTP attempts per call, the first included;
	// default DefaultMaxAttempts.
	MaxAttempts int
	// MinBackoff is the first wait between attempts; default DefaultMinBackoff.
	MinBackoff time.Duration
	// MaxBackoff caps the exponential wait; default DefaultMaxBackoff.
	MaxBackoff time.Duration
	// MaxRetryAfter is the longest Retry-After waited for; a longer one
	// fails the call at once with KindRateLimited. Default DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// HTTPClient is optional; its own Timeout, if any, also applies. By
	// default the client of the egress policy set by SetEgress is used (no
	// redirects, no link-local or metadata addresses).
	HTTPClient *http.Client
	// Header holds extra headers sent with every request (e.g. which
	// worker sent it, for tracing on the endpoint's side).
	Header http.Header
	// TimeoutRetries bounds how many times a call is retried after an
	// attempt timed out (within MaxAttempts); 0 means
	// DefaultTimeoutRetries, a negative value means never.
	TimeoutRetries int
	// BeforeAttempt, if set, runs before every HTTP attempt; an error stops
	// the call without sending anything (it is returned as the Err of a
	// KindCancelled *Error). Callers use it to check they may still send
	// (a lease) and to wait while the endpoint is known to be down.
	BeforeAttempt func(ctx context.Context) error
	// AfterAttempt, if set, is told the outcome of every HTTP attempt
	// (metrics, a circuit breaker).
	AfterAttempt func(AttemptInfo)
}

// AttemptInfo is the outcome of one HTTP attempt.
type AttemptInfo struct {
	// N numbers the attempts of one call from 1; N > 1 is a retry.
	N       int
	Latency time.Duration
	// Err is nil when the attempt produced a usable answer.
	Err              *Error
	PromptTokens     int
	CompletionTokens int
}

// withDefaults returns cfg with zero fields set to the package defaults.
func (cfg Config) withDefaults() Config {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = cfg.MinBackoff
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = DefaultMaxRetryAfter
	}
	switch {
	case cfg.TimeoutRetries == 0:
		cfg.TimeoutRetries = DefaultTimeoutRetries
	case cfg.TimeoutRetries < 0:
		cfg.TimeoutRetries = 0
	}
	if cfg.HTTPClient == nil {
		// The egress policy's client (see SetEgress). No client-wide
		// timeout: each attempt gets its own context deadline.
		cfg.HTTPClient = egressClient()
	}
	return cfg
}

// Client calls one judge model. It is safe for concurrent use.
type Client struct {
	cfg      Config
	endpoint *url.URL    // <base URL>/chat/completions?<base URL's query>
	header   http.Header // sent with every request (cloned per request)
}

// New checks cfg and builds a client. The base URL must be an absolute
// http or https URL and the model must be named. Its errors, like
// Error's, are sentences a user reads as they are (a run that cannot
// start stores one), without a "judge: " code-path prefix.
func New(cfg Config) (*Client, error) {
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	cfg.Model = strings.TrimSpace(cfg.Model)
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q is not an http(s) URL: use e.g. https://api.openai.com/v1 or http://localhost:11434/v1", RedactURL(cfg.BaseURL))
	}
	if cfg.Model == "" {
		return nil, errors.New("no model named: set the model (for Azure, the deployment name)")
	}
	if cfg.KeyHeader, err = ParseKeyHeader(string(cfg.KeyHeader)); err != nil {
		return nil, err
	}
	if cfg.TokenLimit, err = ParseTokenLimit(string(cfg.TokenLimit)); err != nil {
		return nil, err
	}
	if cfg.ReasoningEffort, err = ParseReasoningEffort(string(cfg.ReasoningEffort)); err != nil {
		return nil, err
	}
	if metadataHost(u.Hostname()) {
		return nil, &Error{Kind: KindRefused, Message: fmt.Sprintf("%s is a cloud metadata service, never a judge", u.Hostname())}
	}
	cfg = cfg.withDefaults()

	endpoint, err := endpointURL(u)
	if err != nil {
		return nil, fmt.Errorf("base URL %q cannot take the chat completions path: %s", RedactURL(cfg.BaseURL), RedactURLIn(err.Error(), cfg.BaseURL))
	}
	// Only what is listed here is sent: no OPENAI_* environment variable
	// is read (the SDK's client read OPENAI_API_KEY, which an endpoint
	// without a key, e.g. Ollama, must never receive). Retries are ours
	// alone (to count attempts and honour Retry-After with our own
	// ceiling).
	return &Client{cfg: cfg, endpoint: endpoint, header: requestHeader(cfg)}, nil
}

// Request is one chat completion request to the judge.
type Request struct {
	Messages []evaluator.Message
	// Temperature is always sent, 0 included (greedy decoding).
	Temperature float64
	// TopP is sent when above 0.
	TopP float64
	// MaxTokens caps the answer; 0 lets the endpoint decide.
	MaxTokens int
	// N asks for several completions; 0 and 1 mean one.
	N int
	// Seed asks for reproducible sampling where the endpoint supports it.
	Seed *int64
	// Logprobs asks for the log probability of each output token.
	Logprobs bool
	// TopLogprobs asks for that many alternatives per token (0 to 20);
	// setting it also turns Logprobs on, as the API requires.
	TopLogprobs int
	// JSONMode asks for a JSON object answer (response_format json_object).
	JSONMode bool
	// JSONSchema asks for structured output matching this schema
	// (response_format json_schema, name "scores", strict). It wins over
	// JSONMode when both are set.
	JSONSchema map[string]any
}

// TopLogprob is one alternative token at a position.
type TopLogprob struct {
	Token   string
	Logprob float64
}

// TokenLogprob is one output token with its log probability and the most
// likely alternatives.
type TokenLogprob struct {
	Token   string
	Logprob float64
	Top     []TopLogprob
}

// Choice is one completion.
type Choice struct {
	Text         string
	FinishReason string // "stop", "length", ...
	Logprobs     []TokenLogprob
}

// Response is the judge's answer and what it cost.
type Response struct {
	Choices []Choice
	// PromptTokens and CompletionTokens are the usage the endpoint
	// reported, plus that of earlier attempts of the call whose answers
	// could not be used but were billed (a 200 with usage and no choices).
	PromptTokens     int
	CompletionTokens int
	// Attempts is how many HTTP attempts the call took, 1 when the first worked.
	Attempts int
	// Latency is the wall time of the successful attempt.
	Latency time.Duration
	// Model is the model that answered, as the endpoint names it.
	Model string
	// ExtraCalls counts the paid calls behind this answer beyond the one
	// that gave it: a hedged copy that lost (hedge.go), whose tokens are
	// in PromptTokens and CompletionTokens and whose attempts in Attempts.
	ExtraCalls int
}

// Text returns the first choice's text, or "" when there is none.
func (r Response) Text() string {
	if len(r.Choices) == 0 {
		return ""
	}
	return r.Choices[0].Text
}

// Complete sends r, retrying rate limits, server errors, timeouts, network
// errors and malformed answers with exponential backoff, up to
// Config.MaxAttempts. Every failure is an *Error.
func (c *Client) Complete(ctx context.Context, r Request) (Response, error) {
	return c.complete(ctx, r, c.cfg.MaxAttempts)
}

// pingPrompt asks for the shortest possible answer.
const pingPrompt = "Reply with the single word OK."

// pingMaxTokens leaves room for "OK" under any tokenizer while keeping the
// test cheap.
const pingMaxTokens = 5

// Ping is the "test connection" button: one tiny request, one attempt, so
// a wrong key or URL is reported at once rather than after retries.
func (c *Client) Ping(ctx context.Context) (Response, error) {
	r := Request{
		Messages:  []evaluator.Message{{Role: "user", Content: pingPrompt}},
		MaxTokens: pingMaxTokens,
	}
	return c.complete(ctx, r, 1)
}

// ScoreCheck is the scoring call of the "test connection" button: the
// evaluator's score check (one sample, a score-list answer), one attempt
// like Ping, capped at evaluator.ScoreCheckMaxTokens. Read its answer with
// evaluator.ReadScoreCheck. Ping stays the cheaper probe of whether the
// judge answers at all.
func (c *Client) ScoreCheck(ctx context.Context) (Response, error) {
	r := Request{
		Messages:  evaluator.ScoreCheckMessages(),
		MaxTokens: evaluator.ScoreCheckMaxTokens,
	}
	return c.complete(ctx, r, 1)
}

func (c *Client) complete(ctx context.Context, r Request, maxAttempts int) (Response, error) {
	params, invalid := c.buildRequest(r)
	if invalid != nil {
		return Response{}, invalid
	}
	// Encoded once for all attempts. A failure is reported by the first
	// attempt, as when the SDK encoded inside it.
	body, encErr := encodeBody(&params)
	if ctx.Err() != nil {
		return Response{}, &Error{Kind: KindCancelled, Err: context.Cause(ctx)}
	}

	// wrote is set once an attempt has written its request out: until
	// then the endpoint has seen nothing and a failure costs nothing
	// (Error.NeverSent). The trace is per call, not per attempt.
	// attemptWrote is the same for the attempt under way.
	var wrote, attemptWrote atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) {
		if i.Err == nil {
			wrote.Store(true)
			attemptWrote.Store(true)
		}
	}})
	neverSent := func(e *Error) bool {
		return e.Attempts > 0 && !wrote.Load() && e.Status == 0 && e.PromptTokens+e.CompletionTokens == 0
	}
	attempts, timeouts := 0, 0
	// billed sums what the attempts whose answers could not be used were
	// billed (Error.PromptTokens): a retry that succeeds carries it in its
	// Response's tokens, a call that fails in its Error's.
	var billedPrompt, billedCompletion int
	// timedOutSent counts the attempts that timed out after their request
	// was written out: the endpoint usually processed it, and may bill
	// its prompt though the answer was cut off, as for a re-sent copy
	// cancelled while it was answered (hedge.go). A retry that succeeds
	// counts the prompt tokens of its answer (the same request) for each;
	// a call that fails for good has no answer to tell them.
	timedOutSent := 0
	var last *Error
	op := func() (Response, error) {
		if c.cfg.BeforeAttempt != nil {
			if err := c.cfg.BeforeAttempt(ctx); err != nil {
				// Nothing was sent: this is not an attempt.
				return Response{}, backoff.Permanent(&Error{Kind: KindCancelled, Message: err.Error(), Err: err})
			}
		}
		// A hedged call's clock starts, and its copy is not sent once
		// the original has answered (hedge.go); attemptEnded stops the
		// clock.
		if err := attemptStarting(ctx); err != nil {
			return Response{}, backoff.Permanent(&Error{Kind: KindCancelled, Message: err.Error(), Err: err})
		}
		attempts++
		started := time.Now()
		attemptWrote.Store(false)
		resp, e := c.attempt(ctx, body, encErr)
		attemptEnded(ctx)
		var ns *NotSent
		if e != nil && errors.As(e, &ns) {
			attempts--
			return Response{}, backoff.Permanent(e)
		}
		if c.cfg.AfterAttempt != nil {
			info := AttemptInfo{N: attempts, Latency: time.Since(started), Err: e}
			if e == nil {
				info.PromptTokens, info.CompletionTokens = resp.PromptTokens, resp.CompletionTokens
			} else {
				info.PromptTokens, info.CompletionTokens = e.PromptTokens, e.CompletionTokens
			}
			c.cfg.AfterAttempt(info)
		}
		if e != nil {
			billedPrompt += e.PromptTokens
			billedCompletion += e.CompletionTokens
		}
		if e == nil {
			return resp, nil
		}
		last = e
		if e.Kind == KindTimeout {
			timeouts++
			if attemptWrote.Load() && e.Status == 0 && e.PromptTokens+e.CompletionTokens == 0 {
				timedOutSent++
			}
		}
		switch {
		case e.Kind == KindTimeout && timeouts > c.cfg.TimeoutRetries:
			return Response{}, backoff.Permanent(e)
		case e.Kind == KindCancelled || !e.Temporary():
			return Response{}, backoff.Permanent(e)
		case e.RetryAfter > c.cfg.MaxRetryAfter:
			e.limit = c.cfg.MaxRetryAfter
			return Response{}, backoff.Permanent(e)
		case e.RetryAfter > 0:
			// backoff waits exactly this long instead of its own interval.
			return Response{}, errors.Join(e, &backoff.RetryAfterError{Duration: e.RetryAfter})
		}
		return Response{}, e
	}

	policy := &cappedBackOff{
		exp: &backoff.ExponentialBackOff{
			InitialInterval:     c.cfg.MinBackoff,
			RandomizationFactor: backoffJitter,
			Multiplier:          backoffMultiplier,
			MaxInterval:         c.cfg.MaxBackoff,
		},
		max: c.cfg.MaxBackoff,
	}
	resp, err := backoff.Retry(ctx, op,
		backoff.WithBackOff(policy),
		backoff.WithMaxTries(uint(maxAttempts)),
		// Attempts bound the call, not elapsed time: a slow but healthy
		// local model must not be cut off by a wall-clock budget.
		backoff.WithMaxElapsedTime(0),
	)
	if err == nil {
		resp.Attempts = attempts
		resp.PromptTokens += billedPrompt + timedOutSent*resp.PromptTokens
		resp.CompletionTokens += billedCompletion
		return resp, nil
	}
	if ctx.Err() != nil {
		ce := &Error{Kind: KindCancelled, Attempts: attempts, Err: context.Cause(ctx), PromptTokens: billedPrompt, CompletionTokens: billedCompletion}
		if last != nil && last.Kind != KindCancelled {
			ce.Status = last.Status
			ce.Message = "last failure: " + last.summary()
		}
		ce.NeverSent = neverSent(ce)
		return Response{}, ce
	}
	var e *Error
	if !errors.As(err, &e) {
		// Not expected: backoff only returns what op returned or ctx errors.
		e = &Error{Kind: KindNetwork, Err: err}
	}
	e.Attempts = attempts
	e.PromptTokens, e.CompletionTokens = billedPrompt, billedCompletion
	e.NeverSent = neverSent(e)
	e.Hint = azureDeploymentHint(c.cfg, e)
	if e.Hint == "" {
		e.Hint = unsupportedHint(c.cfg, e)
	}
	return Response{}, e
}

// cappedBackOff is backoff's exponential policy with a hard ceiling:
// ExponentialBackOff caps the interval before jitter, so on its own a wait
// could reach 1.5 × MaxBackoff.
type cappedBackOff struct {
	exp *backoff.ExponentialBackOff
	max time.Duration
}

func (b *cappedBackOff) NextBackOff() time.Duration {
	return min(b.exp.NextBackOff(), b.max)
}

func (b *cappedBackOff) Reset() { b.exp.Reset() }
