package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// maxTopLogprobs is the OpenAI API's limit for top_logprobs.
const maxTopLogprobs = 20

// schemaName is the response_format json_schema name; the judge's
// structured answer is a list of scores.
const schemaName = "scores"

// buildParams turns r into SDK parameters, rejecting what no endpoint
// would accept before spending an attempt on it.
func (c *Client) buildParams(r Request) (openai.ChatCompletionNewParams, *Error) {
	invalid := func(format string, args ...any) *Error {
		return &Error{Kind: KindBadRequest, Message: fmt.Sprintf(format, args...)}
	}
	if len(r.Messages) == 0 {
		return openai.ChatCompletionNewParams{}, invalid("no messages to send")
	}
	switch {
	case r.N < 0:
		return openai.ChatCompletionNewParams{}, invalid("n is %d: it must be 0 or more", r.N)
	case r.MaxTokens < 0:
		return openai.ChatCompletionNewParams{}, invalid("max tokens is %d: it must be 0 (no cap) or more", r.MaxTokens)
	case r.TopLogprobs < 0 || r.TopLogprobs > maxTopLogprobs:
		return openai.ChatCompletionNewParams{}, invalid("top logprobs is %d: it must be between 0 and %d", r.TopLogprobs, maxTopLogprobs)
	}

	msgs := make([]openai.ChatCompletionMessageParamUnion, 0, len(r.Messages))
	for i, m := range r.Messages {
		switch m.Role {
		case "system":
			msgs = append(msgs, openai.SystemMessage(m.Content))
		case "user":
			msgs = append(msgs, openai.UserMessage(m.Content))
		case "assistant":
			msgs = append(msgs, openai.AssistantMessage(m.Content))
		default:
			return openai.ChatCompletionNewParams{}, invalid("message %d has role %q: use system, user or assistant", i+1, m.Role)
		}
	}

	p := openai.ChatCompletionNewParams{
		Model:    c.cfg.Model,
		Messages: msgs,
		// param.Opt marks the field as set, so 0 is sent rather than
		// dropped as a zero value (the reason go-openai was not chosen).
		Temperature: openai.Float(r.Temperature),
	}
	if r.TopP > 0 {
		p.TopP = openai.Float(r.TopP)
	}
	if r.MaxTokens > 0 {
		// max_tokens, not max_completion_tokens: every local server
		// (Ollama, vLLM, llama.cpp) understands it, and OpenAI still accepts
		// it for the non-reasoning models a greedy judge uses (reasoning
		// models refuse temperature 0 anyway).
		p.MaxTokens = openai.Int(int64(r.MaxTokens))
	}
	if r.N > 1 {
		p.N = openai.Int(int64(r.N))
	}
	if r.Seed != nil {
		p.Seed = openai.Int(*r.Seed)
	}
	if r.Logprobs || r.TopLogprobs > 0 {
		p.Logprobs = openai.Bool(true)
	}
	if r.TopLogprobs > 0 {
		p.TopLogprobs = openai.Int(int64(r.TopLogprobs))
	}
	switch {
	case r.JSONSchema != nil:
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
				Name:   schemaName,
				Schema: r.JSONSchema,
				// Without strict, OpenAI treats the schema as a hint; with it
				// the schema must use OpenAI's strict subset (every property
				// required, additionalProperties false). Local servers
				// enforce the schema by guided decoding either way.
				Strict: openai.Bool(true),
			},
		}
	case r.JSONMode:
		p.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	}
	return p, nil
}

// attempt makes one HTTP attempt under its own timeout.
func (c *Client) attempt(ctx context.Context, p openai.ChatCompletionNewParams) (Response, *Error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()

	var httpResp *http.Response
	var raw []byte
	start := time.Now()
	// ResponseInto hands us the status and headers even when the SDK cannot
	// parse an error body; ResponseBodyInto a []byte keeps the decoding (and
	// so the "malformed" verdict) in our hands.
	_, err := c.chat.New(actx, p, option.WithResponseInto(&httpResp), option.WithResponseBodyInto(&raw))
	latency := time.Since(start)

	switch {
	case ctx.Err() != nil:
		return Response{}, &Error{Kind: KindCancelled, Err: context.Cause(ctx)}
	case httpResp != nil && httpResp.StatusCode >= 400:
		return Response{}, c.statusError(httpResp, err)
	case httpResp != nil && httpResp.StatusCode >= 300:
		return Response{}, redirectError(httpResp)
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

func (c *Client) statusError(res *http.Response, err error) *Error {
	var body []byte
	if res.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	}
	kind, _ := kindForStatus(res.StatusCode)
	return &Error{
		Kind:       kind,
		Status:     res.StatusCode,
		RetryAfter: parseRetryAfter(res.Header, time.Now()),
		Message:    c.redact(errorMessage(body)),
		Err:        err,
	}
}

// redirectError reports a 3xx answer: redirects are not followed, since an
// allowed endpoint could otherwise send the call (and its key) anywhere.
// Only the scheme and host of the target are told, to help fix the URL.
func redirectError(res *http.Response) *Error {
	e := &Error{Kind: KindRefused, Status: res.StatusCode}
	if u, err := url.Parse(res.Header.Get("Location")); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		e.Message = "it points to " + cleanText(u.Scheme+"://"+u.Host)
	}
	return e
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
	// Nothing was sent: the SDK could not build the request, and building
	// it again will fail the same way.
	return &Error{Kind: KindBadRequest, Message: c.redact("could not build the request: " + err.Error()), Err: err}
}

// decode turns a 2xx body into a Response; anything unusable is malformed.
func (c *Client) decode(raw []byte) (Response, *Error) {
	var cc openai.ChatCompletion
	if err := json.Unmarshal(raw, &cc); err != nil {
		return Response{}, &Error{Kind: KindMalformed, Message: c.redact("the body is not JSON: " + err.Error()), Err: err}
	}
	if len(cc.Choices) == 0 {
		msg := "the answer has no choices"
		if m := errorMessage(raw); m != "" {
			// Some proxies answer 200 with an error object.
			msg += ": " + m
		}
		return Response{}, &Error{Kind: KindMalformed, Message: c.redact(msg)}
	}
	resp := Response{
		Choices:          make([]Choice, 0, len(cc.Choices)),
		PromptTokens:     int(cc.Usage.PromptTokens),
		CompletionTokens: int(cc.Usage.CompletionTokens),
		Model:            cc.Model,
	}
	if resp.Model == "" {
		resp.Model = c.cfg.Model
	}
	for _, ch := range cc.Choices {
		choice := Choice{Text: ch.Message.Content, FinishReason: ch.FinishReason}
		for _, tl := range ch.Logprobs.Content {
			tok := TokenLogprob{Token: tl.Token, Logprob: tl.Logprob}
			for _, alt := range tl.TopLogprobs {
				tok.Top = append(tok.Top, TopLogprob{Token: alt.Token, Logprob: alt.Logprob})
			}
			choice.Logprobs = append(choice.Logprobs, tok)
		}
		resp.Choices = append(resp.Choices, choice)
	}
	return resp, nil
}

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
		Message string `json:"message"`
		Type    string `json:"type"`
	}
	var s string
	switch {
	case json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
		if nested.Type != "" {
			return truncate(nested.Type + ": " + nested.Message)
		}
		return truncate(nested.Message)
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

// redact removes the API key from text that came from outside, in case an
// endpoint or transport error echoes it back.
func (c *Client) redact(s string) string {
	if c.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.cfg.APIKey, "[redacted]")
}
