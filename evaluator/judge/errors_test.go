package judge

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v5"
)

func newTestExp(initial, maxInterval time.Duration) *backoff.ExponentialBackOff {
	return &backoff.ExponentialBackOff{
		InitialInterval:     initial,
		RandomizationFactor: backoffJitter,
		Multiplier:          backoffMultiplier,
		MaxInterval:         maxInterval,
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"absent", nil, 0},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"milliseconds win", map[string]string{"Retry-After": "7", "retry-after-ms": "250"}, 250 * time.Millisecond},
		{"bad milliseconds fall back", map[string]string{"Retry-After": "7", "retry-after-ms": "soon"}, 7 * time.Second},
		{"HTTP date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"negative", map[string]string{"Retry-After": "-3"}, 0},
		{"garbage", map[string]string{"Retry-After": "later"}, 0},
		{"NaN", map[string]string{"Retry-After": "NaN"}, 0},
		{"huge is capped", map[string]string{"Retry-After": "1e300"}, maxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := parseRetryAfter(h, now); got != tt.want {
				t.Errorf("parseRetryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"openai", `{"error":{"message":"Rate limit reached","type":"requests"}}`, "requests: Rate limit reached"},
		{"openai without type", `{"error":{"message":"Rate limit reached"}}`, "Rate limit reached"},
		{"error string", `{"error":"model 'x' not found"}`, "model 'x' not found"},
		{"vllm", `{"object":"error","message":"The model does not exist.","code":404}`, "The model does not exist."},
		{"fastapi", `{"detail":"Not Found"}`, "Not Found"},
		// Whatever answered is not relayed unless it is an API error object:
		// the URL may point at an internal service.
		{"plain text", "upstream   connect error\n", ""},
		{"internal page", "root:x:0:0:root:/root:/bin/bash", ""},
		{"control characters dropped", "{\"error\":\"bad\\u001b[31m red\\u202e\\nnext\"}", "bad[31m red next"},
		{"html", "<html><body>502</body></html>", ""},
		{"empty", "", ""},
		{"json without a message", `{"foo":1}`, ""},
		{"long text is cut", `{"message":"` + strings.Repeat("a", 400) + `"}`, strings.Repeat("a", maxMessageRunes) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorMessage([]byte(tt.body)); got != tt.want {
				t.Errorf("errorMessage = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestKindForStatus(t *testing.T) {
	tests := []struct {
		status    int
		wantKind  ErrorKind
		wantRetry bool
	}{
		{429, KindRateLimited, true},
		{408, KindTimeout, true},
		{409, KindServer, true},
		{500, KindServer, true},
		{503, KindServer, true},
		{400, KindBadRequest, false},
		{401, KindAuth, false},
		{402, KindPayment, false},
		{403, KindAuth, false},
		{404, KindNotFound, false},
		{422, KindBadRequest, false},
	}
	for _, tt := range tests {
		kind, retry := kindForStatus(tt.status)
		if kind != tt.wantKind || retry != tt.wantRetry {
			t.Errorf("kindForStatus(%d) = %q, %v; want %q, %v", tt.status, kind, retry, tt.wantKind, tt.wantRetry)
		}
		if got := (&Error{Kind: kind}).Temporary(); got != tt.wantRetry {
			t.Errorf("Temporary() for %d = %v, want %v", tt.status, got, tt.wantRetry)
		}
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		name string
		err  *Error
		want []string
	}{
		{"auth", &Error{Kind: KindAuth, Status: 401, Attempts: 1}, []string{"refused the API key (HTTP 401)", "check the key"}},
		{"forbidden", &Error{Kind: KindAuth, Status: 403}, []string{"HTTP 403", "access to this model"}},
		{"not found", &Error{Kind: KindNotFound, Status: 404}, []string{"404", "base URL", "model name"}},
		{"rate limited", &Error{Kind: KindRateLimited, Status: 429, Attempts: 5, Message: "quota"}, []string{"HTTP 429", "quota", "gave up after 5 attempts"}},
		{"server", &Error{Kind: KindServer, Status: 502}, []string{"HTTP 502", "try again later"}},
		{"timeout", &Error{Kind: KindTimeout, limit: 2 * time.Minute}, []string{"within 2m0s", "raise the timeout"}},
		{"network", &Error{Kind: KindNetwork, Message: "connection refused"}, []string{"could not reach", "connection refused"}},
		{"malformed", &Error{Kind: KindMalformed}, []string{"not a usable chat completion"}},
		{"invalid request", &Error{Kind: KindBadRequest, Message: "no messages to send"}, []string{"request is invalid", "no messages"}},
		{"cancelled", &Error{Kind: KindCancelled, Err: context.Canceled}, []string{"cancelled"}},
		{"caller deadline", &Error{Kind: KindCancelled, Err: context.DeadlineExceeded}, []string{"deadline passed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := tt.err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("Error() = %q, want it to contain %q", msg, w)
				}
			}
		})
	}
}

func TestErrorHelpers(t *testing.T) {
	cause := &url.Error{Op: "Post", URL: "http://x", Err: errors.New("refused")}
	wrapped := fmt.Errorf("round 2: %w", &Error{Kind: KindRateLimited, Attempts: 3, RetryAfter: 5 * time.Second, Err: cause})
	tests := []struct {
		name         string
		err          error
		wantWait     time.Duration
		wantLimited  bool
		wantAttempts int
	}{
		{"wrapped rate limit", wrapped, 5 * time.Second, true, 3},
		{"server error", &Error{Kind: KindServer, Attempts: 5}, 0, false, 5},
		{"foreign error", errors.New("boom"), 0, false, 0},
		{"nil", nil, 0, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wait, limited := IsRateLimited(tt.err)
			if wait != tt.wantWait || limited != tt.wantLimited {
				t.Errorf("IsRateLimited = %v, %v; want %v, %v", wait, limited, tt.wantWait, tt.wantLimited)
			}
			if got := AttemptsOf(tt.err); got != tt.wantAttempts {
				t.Errorf("AttemptsOf = %d, want %d", got, tt.wantAttempts)
			}
		})
	}
	var ue *url.Error
	if !errors.As(wrapped, &ue) {
		t.Errorf("Unwrap does not reach the cause")
	}
}

func TestPresets(t *testing.T) {
	presets := Presets()
	seen := map[string]bool{}
	for _, p := range presets {
		if seen[p.Name] {
			t.Errorf("preset %q listed twice", p.Name)
		}
		seen[p.Name] = true
		model := p.DefaultModel
		if model == "" {
			model = "any"
		}
		if _, err := New(Config{BaseURL: p.BaseURL, Model: model}); err != nil {
			t.Errorf("preset %q does not make a client: %v", p.Name, err)
		}
		if p.Note == "" {
			t.Errorf("preset %q has no note", p.Name)
		}
	}
	want := map[string]string{ // name -> base URL
		"OpenAI":           "https://api.openai.com/v1",
		"Ollama":           "http://localhost:11434/v1",
		"vLLM":             "http://localhost:8000/v1",
		"llama.cpp server": "http://localhost:8080/v1",
		"OpenRouter":       "https://openrouter.ai/api/v1",
	}
	byName := map[string]Preset{}
	for _, p := range presets {
		byName[p.Name] = p
	}
	for name, base := range want {
		if got := byName[name].BaseURL; got != base {
			t.Errorf("%s base URL = %q, want %q", name, got, base)
		}
	}
	if !seen["Azure OpenAI"] {
		t.Errorf("no Azure OpenAI preset")
	}
	if got := byName["OpenAI"].KeyEnv; got != "OPENAI_API_KEY" {
		t.Errorf("OpenAI key env = %q", got)
	}
	if got := byName["OpenRouter"].KeyEnv; got != "OPENROUTER_API_KEY" {
		t.Errorf("OpenRouter key env = %q", got)
	}
}

// TestContextOverflowIsNamed: an endpoint that refuses a prompt longer
// than the model's context window is told apart from other refused
// requests, so the failure says to shorten the call rather than to check
// the model name (what every 400 said before).
func TestContextOverflowIsNamed(t *testing.T) {
	tests := []struct {
		name, body string
		overflow   bool
	}{
		{"OpenAI", `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens. Please reduce the length of the messages.","type":"invalid_request_error","code":"context_length_exceeded"}}`, true},
		{"vLLM", `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4800 in the messages, 200 in the completion).","type":"BadRequestError","code":400}`, true},
		{"llama.cpp server", `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`, true},
		{"other refusal", `{"error":{"message":"logprobs are not supported by this model","type":"invalid_request_error"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, reply{status: 400, body: tt.body})
			_, err := mustNew(t, testConfig(f)).Complete(context.Background(), simpleRequest())
			e := judgeError(t, err)
			if e.Kind != KindBadRequest {
				t.Fatalf("kind = %q, want bad_request", e.Kind)
			}
			if got := e.ContextOverflow(); got != tt.overflow {
				t.Fatalf("ContextOverflow() = %v, want %v (%v)", got, tt.overflow, err)
			}
			msg := err.Error()
			if named := strings.Contains(msg, "do not fit the model's context window") && strings.Contains(msg, "lower the batch size"); named != tt.overflow {
				t.Errorf("Error() = %q: names the context window = %v, want %v", msg, named, tt.overflow)
			}
			if !tt.overflow && !strings.Contains(msg, "check the model name") {
				t.Errorf("Error() = %q: another refusal should keep its advice", msg)
			}
		})
	}
}
