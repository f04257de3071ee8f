package judge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
)

// reply is one canned answer of the fake endpoint.
type reply struct {
	status int
	body   string
	header map[string]string
	delay  time.Duration // sleep before answering, cut short if the client gives up
}

// fakeEndpoint speaks just enough of the chat completions protocol: it
// records each request and answers with replies in order, repeating the
// last one.
type fakeEndpoint struct {
	srv     *httptest.Server
	replies []reply

	mu       sync.Mutex
	bodies   [][]byte
	headers  []http.Header
	paths    []string
	arrivals []time.Time
	arrived  chan struct{}
}

func newFake(t *testing.T, replies ...reply) *fakeEndpoint {
	t.Helper()
	f := &fakeEndpoint{replies: replies, arrived: make(chan struct{}, 100)}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	n := len(f.bodies)
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.paths = append(f.paths, r.Method+" "+r.URL.Path)
	f.arrivals = append(f.arrivals, time.Now())
	f.mu.Unlock()
	f.arrived <- struct{}{}

	rep := f.replies[min(n, len(f.replies)-1)]
	if rep.delay > 0 {
		select {
		case <-time.After(rep.delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.status)
	io.WriteString(w, rep.body)
}

func (f *fakeEndpoint) hits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *fakeEndpoint) body(i int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

func (f *fakeEndpoint) header(i int) http.Header {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers[i]
}

// testConfig points at f with tiny backoffs so retries cost milliseconds.
func testConfig(f *fakeEndpoint) Config {
	return Config{
		BaseURL:     f.srv.URL + "/v1",
		Model:       "judge-model",
		Timeout:     5 * time.Second,
		MaxAttempts: 4,
		MinBackoff:  time.Millisecond,
		MaxBackoff:  5 * time.Millisecond,
	}
}

func mustNew(t testing.TB, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func okBody(text string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"judge-model-0613",
	"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":` + quote(text) + `}}],
	"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var ok = reply{status: 200, body: okBody("Score: 4.5")}

func simpleRequest() Request {
	return Request{Messages: []evaluator.Message{
		{Role: "system", Content: "You are a strict judge."},
		{Role: "user", Content: "Rate this."},
	}}
}

func judgeError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *judge.Error", err, err)
	}
	return e
}

func TestCompleteSuccess(t *testing.T) {
	f := newFake(t, ok)
	c := mustNew(t, testConfig(f))

	resp, err := c.Complete(context.Background(), simpleRequest())
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if len(resp.Choices) != 1 {
		t.Fatalf("got %d choices, want 1", len(resp.Choices))
	}
	if got, want := resp.Choices[0].Text, "Score: 4.5"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if got, want := resp.Text(), "Score: 4.5"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	if got, want := resp.Choices[0].FinishReason, "stop"; got != want {
		t.Errorf("finish reason = %q, want %q", got, want)
	}
	if resp.PromptTokens != 12 || resp.CompletionTokens != 3 {
		t.Errorf("usage = %d/%d, want 12/3", resp.PromptTokens, resp.CompletionTokens)
	}
	if resp.Attempts != 1 {
		t.Errorf("attempts = %d, want 1", resp.Attempts)
	}
	if got, want := resp.Model, "judge-model-0613"; got != want {
		t.Errorf("model = %q, want %q", got, want)
	}
	if resp.Latency <= 0 {
		t.Errorf("latency = %v, want > 0", resp.Latency)
	}
	if got, want := f.paths[0], "POST /v1/chat/completions"; got != want {
		t.Errorf("request = %q, want %q", got, want)
	}
	var sent struct {
		Model    string              `json:"model"`
		Messages []evaluator.Message `json:"messages"`
	}
	if err := json.Unmarshal(f.body(0), &sent); err != nil {
		t.Fatalf("request body is not JSON: %v", err)
	}
	if sent.Model != "judge-model" {
		t.Errorf("model sent = %q, want judge-model", sent.Model)
	}
	want := simpleRequest().Messages
	if len(sent.Messages) != len(want) {
		t.Fatalf("sent %d messages, want %d", len(sent.Messages), len(want))
	}
	for i := range want {
		if sent.Messages[i] != want[i] {
			t.Errorf("message %d = %+v, want %+v", i, sent.Messages[i], want[i])
		}
	}
}

func TestRequestFields(t *testing.T) {
	seed := int64(42)
	schema := map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"score": map[string]any{"type": "number"}},
		"required":             []any{"score"},
		"additionalProperties": false,
	}
	const absent = ""
	tests := []struct {
		name string
		req  Request
		want map[string]string // field -> compact JSON, absent = must not be sent
	}{
		{
			name: "zero request sends temperature 0 and nothing optional",
			req:  Request{},
			want: map[string]string{
				"temperature": "0", "top_p": absent, "max_tokens": absent, "n": absent, "seed": absent,
				"logprobs": absent, "top_logprobs": absent, "response_format": absent,
			},
		},
		{
			name: "n of 1 is not sent",
			req:  Request{N: 1},
			want: map[string]string{"n": absent},
		},
		{
			name: "everything set",
			req: Request{
				Temperature: 0.2, TopP: 0.9, MaxTokens: 300, N: 3, Seed: &seed,
				Logprobs: true, TopLogprobs: 5, JSONMode: true,
			},
			want: map[string]string{
				"temperature": "0.2", "top_p": "0.9", "max_tokens": "300", "n": "3", "seed": "42",
				"logprobs": "true", "top_logprobs": "5", "response_format": `{"type":"json_object"}`,
			},
		},
		{
			name: "seed 0 is still sent",
			req:  Request{Seed: new(int64)},
			want: map[string]string{"seed": "0"},
		},
		{
			name: "top_logprobs turns logprobs on",
			req:  Request{TopLogprobs: 2},
			want: map[string]string{"logprobs": "true", "top_logprobs": "2"},
		},
		{
			name: "json schema wins over json mode",
			req:  Request{JSONMode: true, JSONSchema: schema},
			want: map[string]string{
				"response_format": `{"json_schema":{"name":"scores","strict":true,"schema":{"additionalProperties":false,"properties":{"score":{"type":"number"}},"required":["score"],"type":"object"}},"type":"json_schema"}`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, ok)
			c := mustNew(t, testConfig(f))
			req := tt.req
			req.Messages = simpleRequest().Messages
			if _, err := c.Complete(context.Background(), req); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(f.body(0), &fields); err != nil {
				t.Fatalf("request body is not JSON: %v", err)
			}
			for key, want := range tt.want {
				raw, sent := fields[key]
				if want == absent {
					if sent {
						t.Errorf("%s sent as %s, want absent", key, raw)
					}
					continue
				}
				if !sent {
					t.Errorf("%s absent, want %s", key, want)
					continue
				}
				if got := compact(t, raw); got != compact(t, []byte(want)) {
					t.Errorf("%s = %s, want %s", key, got, want)
				}
			}
		})
	}
}

// compact re-encodes JSON with sorted keys so objects compare by content.
func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestTemperatureZeroInRawBody(t *testing.T) {
	f := newFake(t, ok)
	c := mustNew(t, testConfig(f))
	req := simpleRequest()
	req.Temperature = 0
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if body := string(f.body(0)); !strings.Contains(body, `"temperature":0`) {
		t.Errorf("raw body lacks \"temperature\":0: %s", body)
	}
}

func TestLogprobsDecoded(t *testing.T) {
	body := `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[
	 {"index":0,"finish_reason":"length","message":{"role":"assistant","content":"4"},
	  "logprobs":{"content":[{"token":"4","logprob":-0.1,"bytes":[52],
	    "top_logprobs":[{"token":"4","logprob":-0.1,"bytes":[52]},{"token":"5","logprob":-2.5,"bytes":[53]}]}]}},
	 {"index":1,"finish_reason":"stop","message":{"role":"assistant","content":"5"},"logprobs":null}]}`
	f := newFake(t, reply{status: 200, body: body})
	c := mustNew(t, testConfig(f))

	resp, err := c.Complete(context.Background(), Request{Messages: simpleRequest().Messages, N: 2, Logprobs: true, TopLogprobs: 2})
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if len(resp.Choices) != 2 {
		t.Fatalf("got %d choices, want 2", len(resp.Choices))
	}
	first := resp.Choices[0]
	if first.FinishReason != "length" {
		t.Errorf("finish reason = %q, want length", first.FinishReason)
	}
	if len(first.Logprobs) != 1 {
		t.Fatalf("got %d token logprobs, want 1", len(first.Logprobs))
	}
	tok := first.Logprobs[0]
	if tok.Token != "4" || tok.Logprob != -0.1 {
		t.Errorf("token = %+v, want 4 at -0.1", tok)
	}
	wantTop := []TopLogprob{{"4", -0.1}, {"5", -2.5}}
	if len(tok.Top) != len(wantTop) {
		t.Fatalf("got %d alternatives, want %d", len(tok.Top), len(wantTop))
	}
	for i := range wantTop {
		if tok.Top[i] != wantTop[i] {
			t.Errorf("alternative %d = %+v, want %+v", i, tok.Top[i], wantTop[i])
		}
	}
	if got := resp.Choices[1]; got.Text != "5" || len(got.Logprobs) != 0 {
		t.Errorf("second choice = %+v, want text 5 without logprobs", got)
	}
}

func TestRetries(t *testing.T) {
	const maxAttempts = 4 // testConfig's
	status := func(code int) reply { return reply{status: code, body: `{"error":{"message":"nope"}}`} }
	tests := []struct {
		name         string
		replies      []reply
		wantAttempts int
		wantKind     ErrorKind // "" means success
		wantStatus   int
	}{
		{"500, 500, then 200", []reply{status(500), status(500), ok}, 3, "", 0},
		{"429 without Retry-After, then 200", []reply{status(429), ok}, 2, "", 0},
		{"408, then 200", []reply{status(408), ok}, 2, "", 0},
		{"409, then 200", []reply{status(409), ok}, 2, "", 0},
		{"no choices, then 200", []reply{{status: 200, body: `{"id":"x","choices":[]}`}, ok}, 2, "", 0},
		{"always 503", []reply{status(503)}, maxAttempts, KindServer, 503},
		{"always 429", []reply{status(429)}, maxAttempts, KindRateLimited, 429},
		{"401 is not retried", []reply{status(401), ok}, 1, KindAuth, 401},
		{"403 is not retried", []reply{status(403), ok}, 1, KindAuth, 403},
		{"400 is not retried", []reply{status(400), ok}, 1, KindBadRequest, 400},
		{"422 is not retried", []reply{status(422), ok}, 1, KindBadRequest, 422},
		{"404 is not retried", []reply{status(404), ok}, 1, KindNotFound, 404},
		{"body not JSON", []reply{{status: 200, body: `oops`}}, maxAttempts, KindMalformed, 200},
		{"a web page is not retried", []reply{{status: 200, body: `<html>oops</html>`}, ok}, 1, KindNotAPI, 200},
		{"402 is not retried", []reply{status(402), ok}, 1, KindPayment, 402},
		{"truncated JSON", []reply{{status: 200, body: `{"choices":[{"message":`}}, maxAttempts, KindMalformed, 200},
		{"200 with an error object", []reply{{status: 200, body: `{"error":{"message":"upstream failed"}}`}}, maxAttempts, KindMalformed, 200},
		{"502 with an HTML body", []reply{{status: 502, body: `<html>Bad Gateway</html>`}}, maxAttempts, KindServer, 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.replies...)
			c := mustNew(t, testConfig(f))
			resp, err := c.Complete(context.Background(), simpleRequest())
			if got := f.hits(); got != tt.wantAttempts {
				t.Errorf("server saw %d requests, want %d", got, tt.wantAttempts)
			}
			if tt.wantKind == "" {
				if err != nil {
					t.Fatalf("Complete: %v", err)
				}
				if resp.Attempts != tt.wantAttempts {
					t.Errorf("attempts = %d, want %d", resp.Attempts, tt.wantAttempts)
				}
				return
			}
			e := judgeError(t, err)
			if e.Kind != tt.wantKind {
				t.Errorf("kind = %q, want %q (%v)", e.Kind, tt.wantKind, err)
			}
			if e.Status != tt.wantStatus {
				t.Errorf("status = %d, want %d", e.Status, tt.wantStatus)
			}
			if e.Attempts != tt.wantAttempts {
				t.Errorf("attempts = %d, want %d", e.Attempts, tt.wantAttempts)
			}
			if got := AttemptsOf(err); got != tt.wantAttempts {
				t.Errorf("AttemptsOf = %d, want %d", got, tt.wantAttempts)
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	tests := []struct {
		name     string
		header   map[string]string
		wantWait time.Duration
	}{
		{"Retry-After in seconds", map[string]string{"Retry-After": "1"}, time.Second},
		{"retry-after-ms", map[string]string{"retry-after-ms": "300"}, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, reply{status: 429, header: tt.header, body: `{"error":{"message":"slow down"}}`}, ok)
			c := mustNew(t, testConfig(f)) // backoff alone would wait ~1ms

			resp, err := c.Complete(context.Background(), simpleRequest())
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Attempts != 2 {
				t.Errorf("attempts = %d, want 2", resp.Attempts)
			}
			if waited := f.arrivals[1].Sub(f.arrivals[0]); waited < tt.wantWait {
				t.Errorf("retried after %v, want at least %v", waited, tt.wantWait)
			}
		})
	}
}

func TestRetryAfterLongerThanLimitFailsAtOnce(t *testing.T) {
	f := newFake(t, reply{status: 429, header: map[string]string{"Retry-After": "3600"}}, ok)
	cfg := testConfig(f)
	cfg.MaxRetryAfter = time.Minute
	c := mustNew(t, cfg)

	start := time.Now()
	_, err := c.Complete(context.Background(), simpleRequest())
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("took %v, want an immediate failure", elapsed)
	}
	if f.hits() != 1 {
		t.Errorf("server saw %d requests, want 1", f.hits())
	}
	wait, limited := IsRateLimited(err)
	if !limited {
		t.Fatalf("IsRateLimited(%v) = false, want true", err)
	}
	if wait != time.Hour {
		t.Errorf("retry after = %v, want 1h", wait)
	}
	if msg := err.Error(); !strings.Contains(msg, "1h0m0s") || !strings.Contains(msg, "1m0s") {
		t.Errorf("error %q should name the requested wait and the limit", msg)
	}
}

// TestPerAttemptTimeout: a timed-out request was probably processed and
// billed by the endpoint, so timeouts are retried at most TimeoutRetries
// times (once by default), whatever MaxAttempts allows. Before, a call on a
// judge slower than the timeout was sent MaxAttempts (5) times.
func TestPerAttemptTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		timeoutRetries int
		wantHits       int
	}{
		{"default retries once", 0, 2},
		{"configured twice", 2, 3},
		{"negative never retries", -1, 1},
		{"bounded by max attempts", 10, 4},
	}
	for _, tt := range tests {
		// Not parallel: under load a 250ms attempt must still reach the
		// server before it times out, or the server's count is short.
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, reply{status: 200, body: okBody("late"), delay: 3 * time.Second})
			cfg := testConfig(f)
			cfg.Timeout = 250 * time.Millisecond
			cfg.MaxAttempts = 4
			cfg.TimeoutRetries = tt.timeoutRetries
			var seen []int
			var mu sync.Mutex
			cfg.AfterAttempt = func(a AttemptInfo) {
				mu.Lock()
				defer mu.Unlock()
				if a.Err == nil || a.Err.Kind != KindTimeout {
					t.Errorf("attempt %d reported %v, want a timeout", a.N, a.Err)
				}
				seen = append(seen, a.N)
			}
			c := mustNew(t, cfg)

			_, err := c.Complete(context.Background(), simpleRequest())
			e := judgeError(t, err)
			if e.Kind != KindTimeout {
				t.Errorf("kind = %q, want timeout (%v)", e.Kind, err)
			}
			if e.Attempts != tt.wantHits || f.hits() != tt.wantHits {
				t.Errorf("attempts = %d, server saw %d, want %d and %d", e.Attempts, f.hits(), tt.wantHits, tt.wantHits)
			}
			mu.Lock()
			if len(seen) != tt.wantHits || seen[len(seen)-1] != tt.wantHits {
				t.Errorf("AfterAttempt saw attempts %v, want 1..%d", seen, tt.wantHits)
			}
			mu.Unlock()
			if !strings.Contains(err.Error(), "250ms") {
				t.Errorf("error %q should name the timeout", err)
			}
		})
	}
}

// TestBeforeAttemptStopsWithoutSending: a refusal from BeforeAttempt (a
// lost lease) stops the call before anything is sent, also between retries.
func TestBeforeAttemptStopsWithoutSending(t *testing.T) {
	t.Parallel()
	refusal := errors.New("lease lost")
	tests := []struct {
		name      string
		allowed   int // attempts BeforeAttempt lets through
		wantHits  int
		wantTries int
	}{
		{"refused before the first", 0, 0, 0},
		{"refused before the retry", 1, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t, reply{status: 503, body: `{"error":{"message":"down"}}`})
			cfg := testConfig(f)
			calls := 0
			cfg.BeforeAttempt = func(context.Context) error {
				calls++
				if calls > tt.allowed {
					return refusal
				}
				return nil
			}
			_, err := mustNew(t, cfg).Complete(context.Background(), simpleRequest())
			e := judgeError(t, err)
			if e.Kind != KindCancelled || !errors.Is(err, refusal) {
				t.Errorf("error %v (kind %s), want cancelled wrapping the refusal", err, e.Kind)
			}
			if f.hits() != tt.wantHits || e.Attempts != tt.wantTries {
				t.Errorf("server saw %d requests, %d attempts counted; want %d and %d", f.hits(), e.Attempts, tt.wantHits, tt.wantTries)
			}
		})
	}
}

func TestTimeoutThenSuccess(t *testing.T) {
	f := newFake(t, reply{status: 200, body: okBody("late"), delay: 2 * time.Second}, ok)
	cfg := testConfig(f)
	cfg.Timeout = 50 * time.Millisecond
	c := mustNew(t, cfg)

	resp, err := c.Complete(context.Background(), simpleRequest())
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if resp.Attempts != 2 {
		t.Errorf("attempts = %d, want 2", resp.Attempts)
	}
	if resp.Latency >= 2*time.Second {
		t.Errorf("latency = %v, want the successful attempt's only", resp.Latency)
	}
}

func TestNetworkError(t *testing.T) {
	f := newFake(t, ok)
	cfg := testConfig(f)
	cfg.MaxAttempts = 2
	f.srv.Close() // nothing listens any more
	c := mustNew(t, cfg)

	_, err := c.Complete(context.Background(), simpleRequest())
	e := judgeError(t, err)
	if e.Kind != KindNetwork {
		t.Errorf("kind = %q, want network (%v)", e.Kind, err)
	}
	if e.Attempts != 2 {
		t.Errorf("attempts = %d, want 2", e.Attempts)
	}
	if !e.Temporary() {
		t.Errorf("a network error should be temporary")
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	f := newFake(t, reply{status: 503})
	cfg := testConfig(f)
	cfg.MinBackoff = 10 * time.Second // only cancellation can end the wait early
	cfg.MaxBackoff = 10 * time.Second
	c := mustNew(t, cfg)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-f.arrived
		time.Sleep(50 * time.Millisecond) // let the client enter its backoff sleep
		cancel()
	}()

	start := time.Now()
	_, err := c.Complete(ctx, simpleRequest())
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("returned after %v, want promptly after cancel", elapsed)
	}
	e := judgeError(t, err)
	if e.Kind != KindCancelled {
		t.Errorf("kind = %q, want cancelled (%v)", e.Kind, err)
	}
	if e.Attempts != 1 {
		t.Errorf("attempts = %d, want 1", e.Attempts)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(err, context.Canceled) = false for %v", err)
	}
	if e.Temporary() {
		t.Errorf("a cancelled call should not be temporary")
	}
}

func TestCancelDuringRequest(t *testing.T) {
	f := newFake(t, reply{status: 200, body: okBody("late"), delay: 5 * time.Second})
	c := mustNew(t, testConfig(f))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-f.arrived
		cancel()
	}()

	start := time.Now()
	_, err := c.Complete(ctx, simpleRequest())
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("returned after %v, want promptly after cancel", elapsed)
	}
	if e := judgeError(t, err); e.Kind != KindCancelled || e.Attempts != 1 {
		t.Errorf("kind, attempts = %q, %d; want cancelled, 1", e.Kind, e.Attempts)
	}
}

func TestAlreadyCancelled(t *testing.T) {
	f := newFake(t, ok)
	c := mustNew(t, testConfig(f))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	_, err := c.Complete(ctx, simpleRequest())
	if e := judgeError(t, err); e.Kind != KindCancelled {
		t.Errorf("kind = %q, want cancelled", e.Kind)
	}
	if f.hits() != 0 {
		t.Errorf("server saw %d requests, want 0", f.hits())
	}
}

func TestAPIKeyIsSentAsBearerAndNeverShown(t *testing.T) {
	const key = "sk-test-Secret-0123456789"
	echo := `{"error":{"message":"Incorrect API key provided: ` + key + `","type":"invalid_request_error"}}`
	tests := []struct {
		name    string
		replies []reply
	}{
		{"auth failure echoing the key", []reply{{status: 401, body: echo}}},
		{"server failure echoing the key", []reply{{status: 500, body: echo}}},
		{"200 error object echoing the key", []reply{{status: 200, body: echo}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.replies...)
			cfg := testConfig(f)
			cfg.APIKey = key
			c := mustNew(t, cfg)

			_, err := c.Complete(context.Background(), simpleRequest())
			if err == nil {
				t.Fatal("Complete succeeded, want an error")
			}
			if got, want := f.header(0).Get("Authorization"), "Bearer "+key; got != want {
				t.Errorf("Authorization = %q, want %q", got, want)
			}
			if strings.Contains(err.Error(), key) {
				t.Errorf("error shows the key: %q", err)
			}
			if !strings.Contains(err.Error(), "[redacted]") {
				t.Errorf("error %q should keep the endpoint's message with the key redacted", err)
			}
		})
	}
}

func TestAuthErrorSaysToCheckTheKey(t *testing.T) {
	f := newFake(t, reply{status: 401, body: `{"error":{"message":"bad key"}}`})
	c := mustNew(t, testConfig(f))
	_, err := c.Complete(context.Background(), simpleRequest())
	if msg := err.Error(); !strings.Contains(msg, "HTTP 401") || !strings.Contains(msg, "check the key") || !strings.Contains(msg, "bad key") {
		t.Errorf("error = %q, want the status, the advice and the endpoint's message", msg)
	}
}

func TestEnvironmentIsIgnored(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/bogus")
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")

	f := newFake(t, ok)
	c := mustNew(t, testConfig(f)) // no APIKey: a local server

	if _, err := c.Complete(context.Background(), simpleRequest()); err != nil {
		t.Fatalf("Complete: %v (requests went elsewhere?)", err)
	}
	if f.hits() != 1 {
		t.Fatalf("fake saw %d requests, want 1", f.hits())
	}
	h := f.header(0)
	for _, name := range []string{"Authorization", "OpenAI-Organization", "X-Leak"} {
		if got := h.Get(name); got != "" {
			t.Errorf("%s = %q, want it not sent", name, got)
		}
	}
}

func TestPing(t *testing.T) {
	t.Run("one small request", func(t *testing.T) {
		f := newFake(t, reply{status: 200, body: okBody("OK")})
		c := mustNew(t, testConfig(f))
		resp, err := c.Ping(context.Background())
		if err != nil {
			t.Fatalf("Ping: %v", err)
		}
		if resp.Text() != "OK" || resp.Attempts != 1 {
			t.Errorf("Ping = %q after %d attempts, want OK after 1", resp.Text(), resp.Attempts)
		}
		var sent map[string]json.RawMessage
		if err := json.Unmarshal(f.body(0), &sent); err != nil {
			t.Fatal(err)
		}
		if got := string(sent["max_tokens"]); got != "5" {
			t.Errorf("max_tokens = %s, want 5", got)
		}
	})
	t.Run("no retries", func(t *testing.T) {
		f := newFake(t, reply{status: 503}, ok)
		c := mustNew(t, testConfig(f)) // MaxAttempts 4 for Complete
		_, err := c.Ping(context.Background())
		if e := judgeError(t, err); e.Kind != KindServer || e.Attempts != 1 {
			t.Errorf("kind, attempts = %q, %d; want server, 1", e.Kind, e.Attempts)
		}
		if f.hits() != 1 {
			t.Errorf("server saw %d requests, want 1", f.hits())
		}
	})
}

func TestInvalidRequestIsNotSent(t *testing.T) {
	tests := []struct {
		name string
		req  Request
	}{
		{"no messages", Request{}},
		{"unknown role", Request{Messages: []evaluator.Message{{Role: "tool", Content: "x"}}}},
		{"negative n", Request{Messages: simpleRequest().Messages, N: -1}},
		{"negative max tokens", Request{Messages: simpleRequest().Messages, MaxTokens: -5}},
		{"too many top logprobs", Request{Messages: simpleRequest().Messages, TopLogprobs: 21}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, ok)
			c := mustNew(t, testConfig(f))
			_, err := c.Complete(context.Background(), tt.req)
			e := judgeError(t, err)
			if e.Kind != KindBadRequest || e.Attempts != 0 {
				t.Errorf("kind, attempts = %q, %d; want bad_request, 0", e.Kind, e.Attempts)
			}
			if f.hits() != 0 {
				t.Errorf("server saw %d requests, want 0", f.hits())
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{"openai", Config{BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini"}, false},
		{"ollama without key", Config{BaseURL: "http://localhost:11434/v1", Model: "llama3.1:8b"}, false},
		{"surrounding spaces", Config{BaseURL: " http://localhost:8000/v1 ", Model: " m "}, false},
		{"empty URL", Config{Model: "m"}, true},
		{"no scheme", Config{BaseURL: "localhost:11434/v1", Model: "m"}, true},
		{"ftp scheme", Config{BaseURL: "ftp://example.com/v1", Model: "m"}, true},
		{"no host", Config{BaseURL: "http:///v1", Model: "m"}, true},
		{"no model", Config{BaseURL: "http://localhost:11434/v1", Model: "  "}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if (err != nil) != tt.wantErr {
				t.Errorf("New error = %v, want error: %v", err, tt.wantErr)
			}
		})
	}
}

func TestNewAppliesDefaults(t *testing.T) {
	c := mustNew(t, Config{BaseURL: "http://localhost:11434/v1", Model: "m"})
	tests := []struct {
		name      string
		got, want any
	}{
		{"timeout", c.cfg.Timeout, DefaultTimeout},
		{"max attempts", c.cfg.MaxAttempts, DefaultMaxAttempts},
		{"min backoff", c.cfg.MinBackoff, DefaultMinBackoff},
		{"max backoff", c.cfg.MaxBackoff, DefaultMaxBackoff},
		{"max retry after", c.cfg.MaxRetryAfter, DefaultMaxRetryAfter},
		{"http client set", c.cfg.HTTPClient != nil, true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestCappedBackOff(t *testing.T) {
	b := &cappedBackOff{exp: newTestExp(100*time.Millisecond, 150*time.Millisecond), max: 150 * time.Millisecond}
	b.Reset()
	for i := range 20 {
		if d := b.NextBackOff(); d > 150*time.Millisecond || d <= 0 {
			t.Fatalf("wait %d = %v, want in (0, 150ms]", i, d)
		}
	}
}

// refusingTransport refuses to send, as a lease fence does at the last moment.
type refusingTransport struct{ reason error }

func (rt refusingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return nil, &NotSent{Err: rt.reason}
}

// TestTransportRefusalIsNotAnAttempt: a request the transport refused to
// send stops the call at once, unretried, with no attempt counted.
func TestTransportRefusalIsNotAnAttempt(t *testing.T) {
	t.Parallel()
	f := newFake(t, ok)
	cfg := testConfig(f)
	reason := errors.New("lease lost")
	cfg.HTTPClient = &http.Client{Transport: refusingTransport{reason: reason}}
	reported := 0
	cfg.AfterAttempt = func(AttemptInfo) { reported++ }
	_, err := mustNew(t, cfg).Complete(context.Background(), simpleRequest())
	e := judgeError(t, err)
	if e.Kind != KindCancelled || !errors.Is(err, reason) || e.Attempts != 0 || reported != 0 || f.hits() != 0 {
		t.Errorf("error %v: kind %s, %d attempts, %d reported, %d sent; want cancelled by the refusal, 0, 0, 0", err, e.Kind, e.Attempts, reported, f.hits())
	}
}

// TestContextWindowFromTheModelList: the judge model's context window is
// read from the endpoint's model list where the endpoint states one, under
// the name each server uses, and only for the judge's own model.
func TestContextWindowFromTheModelList(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		tokens     int
		found      bool
	}{
		{"vLLM", `{"object":"list","data":[{"id":"judge-model","object":"model","max_model_len":32768}]}`, 200, 32768, true},
		{"OpenRouter", `{"data":[{"id":"other","context_length":8000},{"id":"judge-model","context_length":128000}]}`, 200, 128000, true},
		{"LM Studio", `{"data":[{"id":"judge-model","max_context_length":4096}]}`, 200, 4096, true},
		{"OpenAI: no figure", `{"object":"list","data":[{"id":"judge-model","object":"model","owned_by":"openai"}]}`, 200, 0, false},
		{"another model only", `{"data":[{"id":"other","max_model_len":2048}]}`, 200, 0, false},
		{"no list", `{"error":{"message":"not found"}}`, 404, 0, false},
		{"server error", `{"error":{"message":"boom"}}`, 500, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, reply{status: tc.status, body: tc.body})
			tokens, found, err := mustNew(t, testConfig(f)).ContextWindow(context.Background())
			if tokens != tc.tokens || found != tc.found {
				t.Errorf("ContextWindow = %d, %v (%v), want %d, %v", tokens, found, err, tc.tokens, tc.found)
			}
			if (err != nil) != (tc.status != 200) {
				t.Errorf("error %v for HTTP %d", err, tc.status)
			}
			// Only a 404 says the endpoint has no list; a 500 is a failure.
			if errors.Is(err, ErrNoModelList) != (tc.status == 404) {
				t.Errorf("HTTP %d: error %v, ErrNoModelList %v", tc.status, err, errors.Is(err, ErrNoModelList))
			}
			if got := f.paths[0]; got != "GET /v1/models" {
				t.Errorf("asked %q, want GET /v1/models", got)
			}
		})
	}
}
