package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// updateWire rewrites testdata/wire and testdata/outcomes.json from what
// the client does. The files were written by the openai-go based client
// before it was replaced (commits 1b3038b and after), and are the record of
// the bytes every endpoint has been receiving and of what the client made
// of every answer: do not rewrite them unless the change is meant.
var updateWire = flag.Bool("update-wire", false, "rewrite testdata/wire/*.http from the current client")

// wireRequest is one request as an endpoint received it.
type wireRequest struct {
	Method     string
	RequestURI string // path and query exactly as sent
	Header     http.Header
	Body       []byte
}

// format writes r as the golden file holds it: the request line, the
// headers sorted by name (values in the order sent), a blank line and the
// body as sent.
func (r wireRequest) format() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s\n", r.Method, r.RequestURI)
	names := make([]string, 0, len(r.Header))
	for k := range r.Header {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		for _, v := range r.Header[k] {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	b.WriteString("\n")
	b.Write(r.Body)
	return b.Bytes()
}

// parseWire reads a golden file written by format.
func parseWire(t *testing.T, raw []byte) wireRequest {
	t.Helper()
	head, body, found := bytes.Cut(raw, []byte("\n\n"))
	if !found {
		t.Fatalf("golden file has no blank line after the headers")
	}
	lines := strings.Split(string(head), "\n")
	method, uri, _ := strings.Cut(lines[0], " ")
	r := wireRequest{Method: method, RequestURI: uri, Header: http.Header{}, Body: body}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			t.Fatalf("golden header line %q has no colon", l)
		}
		r.Header[k] = append(r.Header[k], v)
	}
	return r
}

// captureServer records every request and answers it with a short
// successful completion.
type captureServer struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []wireRequest
}

func newCaptureServer(t *testing.T) *captureServer {
	t.Helper()
	cs := &captureServer{}
	cs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		cs.mu.Lock()
		cs.got = append(cs.got, wireRequest{Method: r.Method, RequestURI: r.RequestURI, Header: r.Header.Clone(), Body: body})
		cs.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okBody("ok"))
	}))
	t.Cleanup(cs.srv.Close)
	return cs
}

// wireCase is one client configuration and request whose bytes on the
// wire are pinned by a golden file.
type wireCase struct {
	name string
	// base is appended to the server's URL to make Config.BaseURL.
	base string
	// query is the base URL's query string as the client now sends it
	// after the path; the SDK dropped it (the golden file has none).
	query  string
	key    string
	header http.Header
	req    Request
	ping   bool
}

func wireCases() []wireCase {
	seed42, seed0, seedNeg := int64(42), int64(0), int64(-7)
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"scores": map[string]any{
				"type":        "array",
				"description": "one score per sample, <in order> & \"quoted\" — naïve café 評価",
				"items":       map[string]any{"type": "number", "minimum": 1, "maximum": 5.5, "multipleOf": 0.1},
				"minItems":    10,
			},
			"analysis": map[string]any{"type": []any{"string", "null"}, "pattern": "^[a-z]+\\d*$"},
			"flag":     map[string]any{"type": "boolean", "default": false, "examples": []any{true, nil, 1e21, 1e-7, -0.0}},
		},
		"required":             []any{"scores", "analysis", "flag"},
		"additionalProperties": false,
		"Zeta":                 "upper case sorts first",
		"é":                    "non-ASCII key",
	}
	tricky := []evaluator.Message{
		{Role: "system", Content: "Judge <b>fairly</b> & say \"why\"; path C:\\tmp\\x, tab\there, CR\rLF\r\n."},
		{Role: "user", Content: "Unicode: naïve café, 中文, emoji 🙂, separators \u2028 and \u2029, controls \x01\x1f\x7f, NUL \x00, invalid \xff\xfe UTF-8, BOM \ufeff."},
		{Role: "assistant", Content: ""},
		{Role: "user", Content: "Float Scores: [Sample1:2.4, Sample2:1.7]\n\n'single' `back` </script>"},
	}
	simple := simpleRequest().Messages
	return []wireCase{
		{name: "minimal", base: "/v1", req: simpleRequest()},
		{name: "api_key", base: "/v1", key: "sk-test-0123", req: simpleRequest()},
		{name: "extra_headers", base: "/v1", key: "sk-test-0123", req: simpleRequest(),
			header: http.Header{"X-Batcheval-Worker": {"worker-1"}, "X-Trace": {"a", "b"}}},
		{name: "authorization_header_without_key", base: "/v1", req: simpleRequest(),
			header: http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}}},
		{name: "authorization_header_and_key", base: "/v1", key: "sk-test-0123", req: simpleRequest(),
			header: http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}}},
		{name: "base_trailing_slash", base: "/v1/", req: simpleRequest()},
		{name: "base_without_path", base: "", req: simpleRequest()},
		{name: "base_root_slash", base: "/", req: simpleRequest()},
		{name: "base_with_query", base: "/openai/v1?api-version=2024-10-21", query: "api-version=2024-10-21", req: simpleRequest()},
		{name: "base_with_query_and_slash", base: "/openai/v1/?api-version=preview&x=a%20b", query: "api-version=preview&x=a%20b", req: simpleRequest()},
		{name: "base_escaped_path", base: "/proxy%2Fjudge/a%20b/v1", req: simpleRequest()},
		{name: "all_options", base: "/v1", req: Request{Messages: simple, Temperature: 0.7, TopP: 0.95, MaxTokens: 512,
			N: 3, Seed: &seed42, Logprobs: true, TopLogprobs: 5, JSONMode: true}},
		{name: "n_one_max_tokens_zero", base: "/v1", req: Request{Messages: simple, N: 1}},
		{name: "seed_zero", base: "/v1", req: Request{Messages: simple, Seed: &seed0}},
		{name: "seed_negative", base: "/v1", req: Request{Messages: simple, Seed: &seedNeg}},
		{name: "logprobs_only", base: "/v1", req: Request{Messages: simple, Logprobs: true}},
		{name: "top_logprobs_only", base: "/v1", req: Request{Messages: simple, TopLogprobs: 20}},
		{name: "json_mode", base: "/v1", req: Request{Messages: simple, JSONMode: true}},
		{name: "json_schema", base: "/v1", req: Request{Messages: simple, JSONSchema: schema}},
		{name: "json_schema_wins_over_mode", base: "/v1", req: Request{Messages: simple, JSONMode: true, JSONSchema: schema}},
		{name: "json_schema_empty", base: "/v1", req: Request{Messages: simple, JSONSchema: map[string]any{}}},
		{name: "small_floats", base: "/v1", req: Request{Messages: simple, Temperature: 1e-7, TopP: 0.1 + 0.2}},
		{name: "large_floats", base: "/v1", req: Request{Messages: simple, Temperature: 1e21, TopP: 123456789.125, MaxTokens: 1 << 40}},
		{name: "tricky_text", base: "/v1", req: Request{Messages: tricky, Temperature: 1}},
		{name: "batcheval_prompt", base: "/v1", key: "sk-test-0123", req: benchPrompt()},
		{name: "ping", base: "/v1", ping: true},
	}
}

// sendWire makes tc's call against cs and returns what arrived.
func sendWire(t *testing.T, cs *captureServer, tc wireCase) wireRequest {
	t.Helper()
	cfg := Config{BaseURL: cs.srv.URL + tc.base, Model: "judge-model", APIKey: tc.key, Header: tc.header, MaxAttempts: 1}
	if tc.ping {
		return sendWireConfig(t, cs, cfg)
	}
	return sendWireRequest(t, cs, cfg, tc.req)
}

// sendWireConfig pings with cfg against cs and returns what arrived.
func sendWireConfig(t *testing.T, cs *captureServer, cfg Config) wireRequest {
	t.Helper()
	return sendWireRequest(t, cs, cfg, Request{})
}

// sendWireRequest sends r (a ping when it has no messages) with cfg
// against cs and returns what arrived.
func sendWireRequest(t *testing.T, cs *captureServer, cfg Config, r Request) wireRequest {
	t.Helper()
	cs.mu.Lock()
	cs.got = nil
	cs.mu.Unlock()
	c := mustNew(t, cfg)
	var err error
	if len(r.Messages) == 0 {
		_, err = c.Ping(context.Background())
	} else {
		_, err = c.Complete(context.Background(), r)
	}
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.got) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(cs.got))
	}
	return cs.got[0]
}

// TestWireFormat pins the bytes the client sends: request line, headers
// and body, for every option Request has and the base URL shapes users
// type.
func TestWireFormat(t *testing.T) {
	cs := newCaptureServer(t)
	for _, tc := range wireCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := sendWire(t, cs, tc)
			path := filepath.Join("testdata", "wire", tc.name+".http")
			if *updateWire {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got.format(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-wire to write it)", err)
			}
			want := sdkHeadersReplaced(t, parseWire(t, raw))
			if tc.query != "" {
				// The second deliberate change: the base URL's query
				// string reaches the endpoint (Azure's api-version).
				if strings.Contains(want.RequestURI, "?") {
					t.Fatalf("golden request line %q already has a query", want.RequestURI)
				}
				want.RequestURI += "?" + tc.query
			}
			compareWire(t, got, want)
		})
	}
}

// sdkHeadersReplaced turns a golden request, as the SDK sent it, into what
// the client sends now: the one deliberate change on the wire. The SDK
// named itself in User-Agent ("OpenAI/Go <version>") and described its
// platform in X-Stainless-* headers (language, OS, architecture, Go
// version, retry count), which endpoints only log; the client names the
// product instead, like the webhooks, and tells nothing about the host.
func sdkHeadersReplaced(t *testing.T, r wireRequest) wireRequest {
	t.Helper()
	h := http.Header{}
	for k, vs := range r.Header {
		switch {
		case strings.HasPrefix(k, "X-Stainless-"):
			continue
		case k == "User-Agent":
			if len(vs) != 1 || !strings.HasPrefix(vs[0], "OpenAI/Go ") {
				t.Fatalf("golden User-Agent %q is not the SDK's", vs)
			}
			vs = []string{userAgent}
		}
		h[k] = vs
	}
	r.Header = h
	return r
}

// compareWire checks got against the golden want: the request line and
// headers exactly, and the body both as JSON values and byte for byte.
func compareWire(t *testing.T, got, want wireRequest) {
	t.Helper()
	if got.Method != want.Method || got.RequestURI != want.RequestURI {
		t.Errorf("request line = %s %s, want %s %s", got.Method, got.RequestURI, want.Method, want.RequestURI)
	}
	if !reflect.DeepEqual(got.Header, want.Header) {
		t.Errorf("headers differ:\n got %v\nwant %v", got.Header, want.Header)
	}
	var gv, wv any
	if err := json.Unmarshal(got.Body, &gv); err != nil {
		t.Fatalf("body sent is not JSON: %v\n%s", err, got.Body)
	}
	if err := json.Unmarshal(want.Body, &wv); err != nil {
		t.Fatalf("golden body is not JSON: %v", err)
	}
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("body differs as JSON:\n got %s\nwant %s", got.Body, want.Body)
	}
	if !bytes.Equal(got.Body, want.Body) {
		t.Errorf("body differs in bytes:\n got %s\nwant %s", got.Body, want.Body)
	}
}
