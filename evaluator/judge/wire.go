package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// The request is built and sent here rather than by the openai-go SDK: its
// reflective encoder, option layers and response decoder cost more CPU
// per call than the whole rest of a run (issue 11). What goes on the wire
// is what the SDK sent (testdata/wire holds its requests, TestWireFormat
// compares), except the SDK's own User-Agent and X-Stainless-* headers.

// userAgent names the product to endpoint operators, as the webhooks do.
const userAgent = "BatchEval-judge"

// chatPath is the chat completions endpoint, relative to the base URL.
const chatPath = "chat/completions"

// chatRequest is the body of a chat completion request. The field order is
// the order the SDK wrote them in (messages, model, the optional fields by
// name, response_format), so the bytes sent are unchanged. appendBody
// writes it by hand; the tags say what encoding/json would write, which
// TestEncodeBody holds it to.
type chatRequest struct {
	Messages []chatMessage `json:"messages"`
	Model    string        `json:"model"`
	Logprobs bool          `json:"logprobs,omitempty"`
	// MaxCompletionTokens is the cap for a judge whose token limit is
	// TokenLimitMaxCompletionTokens (OpenAI's reasoning models, which
	// refuse max_tokens); MaxTokens is left 0 then.
	MaxCompletionTokens int `json:"max_completion_tokens,omitempty"`
	// MaxTokens is max_tokens by default: every local server (Ollama,
	// vLLM, llama.cpp) understands it, and OpenAI still accepts it for
	// its non-reasoning models. A judge set to send
	// max_completion_tokens (Config.TokenLimit) uses the field above.
	MaxTokens int `json:"max_tokens,omitempty"`
	N         int `json:"n,omitempty"`
	// ReasoningEffort is sent only for a judge that sets it
	// (Config.ReasoningEffort); empty, it is left out.
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	Seed            *int64 `json:"seed,omitempty"` // a pointer: seed 0 is sent
	// Temperature is sent whenever set, 0 included (greedy decoding must
	// not be dropped as a zero value): buildRequest always sets it, except
	// for a judge that takes only the default sampling
	// (Config.DefaultSamplingOnly), to which it is never sent.
	Temperature    sentFloat       `json:"temperature,omitzero"`
	TopLogprobs    int             `json:"top_logprobs,omitempty"`
	TopP           float64         `json:"top_p,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

// sentFloat is a number that is sent when Sent, 0 included, and left out
// otherwise (encoding/json's omitzero asks IsZero). A pointer did the
// same at the cost of one allocation per call.
type sentFloat struct {
	V    float64
	Sent bool
}

// IsZero reports whether the number is left out.
func (f sentFloat) IsZero() bool { return !f.Sent }

// MarshalJSON writes the number as encoding/json writes a float64 (the
// oracle of appendBody, which writes it itself).
func (f sentFloat) MarshalJSON() ([]byte, error) { return json.Marshal(f.V) }

// chatMessage is one message; the SDK wrote content before role.
type chatMessage struct {
	Content string `json:"content"`
	Role    string `json:"role"`
}

// responseFormat is {"type":"json_object"} or
// {"json_schema":{...},"type":"json_schema"}.
type responseFormat struct {
	JSONSchema *jsonSchemaFormat `json:"json_schema,omitempty"`
	Type       string            `json:"type"`
}

type jsonSchemaFormat struct {
	Name string `json:"name"`
	// Strict: without it OpenAI treats the schema as a hint; with it the
	// schema must use OpenAI's strict subset (every property required,
	// additionalProperties false). Local servers enforce the schema by
	// guided decoding either way.
	Strict bool           `json:"strict"`
	Schema map[string]any `json:"schema"`
}

// encodeBody writes r as JSON the way the SDK did: encoding/json's output
// for chatRequest without escaping <, > and & (the SDK turned that off),
// and without a trailing newline. appendBody writes it by hand
// (TestEncodeBody compares with encoding/json).
func encodeBody(r *chatRequest) ([]byte, error) {
	// Room for the messages and the JSON around them, so that the buffer
	// grows at most once for text that needs escaping.
	n := 256
	for _, m := range r.Messages {
		n += len(m.Content) + 32
	}
	return appendBody(make([]byte, 0, n+n/16), r)
}

// endpointURL joins the base URL and the chat completions path as the SDK
// did: a slash is added to a base path that lacks one, and the path is
// resolved against it as a relative reference (RFC 3986), so escapes in
// the base path are normalized. Unlike the SDK, the base URL's query
// string is kept, without any credential parameter (keptQuery): Azure's
// per-deployment endpoints refuse a call without their ?api-version=. The
// fragment, never sent, is dropped.
func endpointURL(base *url.URL) (*url.URL, error) {
	u := *base
	u.RawQuery, u.ForceQuery = "", false
	u.Fragment, u.RawFragment = "", ""
	if u.Path != "" && !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	e, err := u.Parse(chatPath)
	if err != nil {
		return nil, err
	}
	e.RawQuery = keptQuery(base.RawQuery)
	return e, nil
}

// KeyHeader says how the API key is sent.
type KeyHeader string

const (
	// KeyBearer sends "Authorization: Bearer <key>", as OpenAI and every
	// compatible server (and Azure's v1 API) take it. The default.
	KeyBearer KeyHeader = "bearer"
	// KeyAPIKey sends "api-key: <key>", as Azure OpenAI's per-deployment
	// endpoints (…/openai/deployments/NAME?api-version=…) want it.
	KeyAPIKey KeyHeader = "api-key"
)

// ParseKeyHeader reads a stored or typed key header mode: "" is
// KeyBearer; anything but the two modes is an error saying which exist.
func ParseKeyHeader(s string) (KeyHeader, error) {
	switch KeyHeader(strings.ToLower(strings.TrimSpace(s))) {
	case "", KeyBearer:
		return KeyBearer, nil
	case KeyAPIKey:
		return KeyAPIKey, nil
	}
	return "", fmt.Errorf("the key header %q is not one of %q (Authorization: Bearer, the default) and %q (Azure's per-deployment endpoints)", s, KeyBearer, KeyAPIKey)
}

// requestHeader is the header every request carries, built once by New:
// the SDK's order of setting them is kept, so a configured header adds to
// Accept and Content-Type rather than replacing them, and the key, when
// set, wins over a configured Authorization (or api-key, as cfg.KeyHeader
// says it is sent).
func requestHeader(cfg Config) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	h.Set("User-Agent", userAgent)
	for k, vs := range cfg.Header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	switch {
	case cfg.APIKey == "":
	case cfg.KeyHeader == KeyAPIKey:
		h.Set("Api-Key", cfg.APIKey)
	default:
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	return h
}

// send posts body and returns the answer with its body read: the whole of
// a 2xx body, at most maxErrorBody of an error body (nil if reading it
// failed), nothing of a 3xx. res is non-nil whenever an answer came, even
// with an error (the body broke off); err is what stopped the attempt.
func (c *Client) send(ctx context.Context, body []byte) (res *http.Response, raw []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "", nil)
	if err != nil {
		return nil, nil, err
	}
	u := *c.endpoint
	req.URL = &u
	req.Header = c.header.Clone()
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.Body, _ = req.GetBody()

	res, err = c.cfg.HTTPClient.Do(req)
	if err != nil {
		if res != nil && res.Body != nil {
			res.Body.Close()
		}
		return res, nil, err
	}
	defer res.Body.Close()
	if ctx.Err() != nil {
		// The attempt's time ran out (or the call was cancelled) as the
		// answer arrived: the SDK reported that, not the answer.
		return nil, nil, ctx.Err()
	}
	switch {
	case res.StatusCode >= 400:
		raw, err = io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		if err != nil {
			return res, nil, err
		}
		return res, raw, nil
	case res.StatusCode >= 300:
		return res, nil, nil
	}
	raw, err = readBody(res)
	if err != nil {
		return res, nil, fmt.Errorf("error reading response body: %w", err)
	}
	return res, raw, nil
}

// maxPrealloc bounds the buffer sized from Content-Length, so a lying
// header cannot make us allocate more than a real answer needs.
const maxPrealloc = 1 << 20

// maxAnswerBody bounds a successful answer's body. A chat completion is
// text: even G-Eval's 20 sampled answers with their token probabilities
// come to a few MiB. Without a bound an endpoint answering without end
// (or a 100 MB mistake) held that much memory per call in flight.
const maxAnswerBody = 32 << 20

// errAnswerTooLarge is an answer body over maxAnswerBody.
var errAnswerTooLarge = fmt.Errorf("the answer is over %d MiB, more than any chat completion needs; check that the base URL is the judge's chat completions endpoint", maxAnswerBody>>20)

// readBody is io.ReadAll starting from a buffer of the announced length
// (+1 to see the end without growing): one allocation instead of the
// doublings from 512 bytes. It stops at maxAnswerBody.
func readBody(res *http.Response) ([]byte, error) {
	if res.ContentLength > maxAnswerBody {
		return nil, errAnswerTooLarge
	}
	size := int64(512)
	if n := res.ContentLength; n >= 0 {
		size = min(n, maxPrealloc) + 1
	}
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := res.Body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if len(b) > maxAnswerBody {
			return nil, errAnswerTooLarge
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}
