package judge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/jsontext"
)

// requestHashOld is RequestHash as it was before appendCacheKey: the
// oracle every hash must match, since stored answers are keyed by it.
func requestHashOld(baseURL, model string, r Request) (string, error) {
	b, err := json.Marshal(cacheKey{BaseURL: baseURL, Model: model, Request: r})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// encodeBodyStd is the request body as encoding/json writes chatRequest
// with HTML escaping off, the oracle of appendBody.
func encodeBodyStd(r *chatRequest) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		// The temperature is written by its MarshalJSON (sentFloat),
		// whose error the encoder wraps: what it says is the cause.
		if me, ok := errors.AsType[*json.MarshalerError](err); ok {
			return nil, me.Err
		}
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

var trickyStrings = []string{
	"", "plain", `"quoted" \back\slash/`, "<b>&amp;</b>", "tab\there\nnew\r\b\f\x00\x01\x1f\x7f",
	"naïve café 中文 🙂", "\u2028\u2029", "\xff\xfe bad \xe2\x82 utf8 \xed\xa0\x80", "\ufeffBOM", "\U0010ffff",
	string([]byte{0xf4, 0x90, 0x80, 0x80}), "</script>",
}

var trickyFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 0.7, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 5e-324,
	1e20, 1e21, -1e21, 123456789.125, math.MaxFloat64, -math.SmallestNonzeroFloat64, 2.5e-10, 1e-100}

func trickyRequests() []Request {
	seed, seed0, seedMin := int64(42), int64(0), int64(math.MinInt64)
	schema := map[string]any{"type": "object", "description": "<a> & \"b\" \u2028", "n": 1e21, "list": []any{nil, true, 0.5}}
	reqs := []Request{
		{},
		{Messages: []evaluator.Message{}},
		simpleRequest(),
		benchPrompt(),
		{Messages: simpleRequest().Messages, Temperature: 0.7, TopP: 0.95, MaxTokens: 512, N: 3, Seed: &seed,
			Logprobs: true, TopLogprobs: 5, JSONMode: true},
		{Messages: simpleRequest().Messages, Seed: &seed0, JSONSchema: schema},
		{Messages: simpleRequest().Messages, Seed: &seedMin, JSONSchema: map[string]any{}, MaxTokens: -5, N: -1},
		{Messages: simpleRequest().Messages, Temperature: math.NaN()},
		{Messages: simpleRequest().Messages, TopP: math.Inf(-1)},
		{Messages: simpleRequest().Messages, JSONSchema: map[string]any{"f": math.NaN()}},
		{Messages: simpleRequest().Messages, JSONSchema: map[string]any{"f": func() {}}},
	}
	for _, s := range trickyStrings {
		reqs = append(reqs, Request{Messages: []evaluator.Message{{Role: s, Content: s}, {Role: "user", Content: s + s}}})
	}
	for _, f := range trickyFloats {
		reqs = append(reqs, Request{Messages: simpleRequest().Messages, Temperature: f, TopP: -f})
	}
	return reqs
}

func TestRequestHashMatchesOld(t *testing.T) {
	for i, r := range trickyRequests() {
		for _, base := range []string{"http://localhost:11434/v1", "https://x.example/a?b=<c>&d", ""} {
			got, gotErr := RequestHash(base, "judge<&>model", r)
			want, wantErr := requestHashOld(base, "judge<&>model", r)
			if got != want || (gotErr == nil) != (wantErr == nil) {
				t.Errorf("request %d, base %q: hash %s (error %v), want %s (error %v)", i, base, got, gotErr, want, wantErr)
			}
		}
	}
}

func FuzzRequestHash(f *testing.F) {
	for i, s := range trickyStrings {
		f.Add(s, "user", trickyFloats[i%len(trickyFloats)], trickyFloats[(i+3)%len(trickyFloats)], i, -i, int64(i*1000), i%2 == 0, i%3 == 0, i%4 == 0)
	}
	f.Fuzz(func(t *testing.T, content, role string, temp, topP float64, maxTokens, topLogprobs int, seed int64, hasSeed, logprobs, jsonMode bool) {
		r := Request{Messages: []evaluator.Message{{Role: role, Content: content}, {Role: "user", Content: role}},
			Temperature: temp, TopP: topP, MaxTokens: maxTokens, N: -maxTokens, TopLogprobs: topLogprobs,
			Logprobs: logprobs, JSONMode: jsonMode}
		if hasSeed {
			r.Seed = &seed
		}
		if jsonMode {
			r.JSONSchema = map[string]any{content: role, "x": temp}
		}
		got, gotErr := RequestHash(content, role, r)
		want, wantErr := requestHashOld(content, role, r)
		if got != want || (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%+v: hash %s (error %v), want %s (error %v)", r, got, gotErr, want, wantErr)
		}
	})
}

// TestRequestHashCoversRequest: appendCacheKey writes Request's fields by
// name; a new field must be added there (and would change every hash of
// requests that set it, which is right: they are different requests).
func TestRequestHashCoversRequest(t *testing.T) {
	var names []string
	for f := range reflect.TypeFor[Request]().Fields() {
		names = append(names, f.Name+" "+string(f.Tag))
	}
	want := []string{"Messages ", "Temperature ", "TopP ", "MaxTokens ", "N ", "Seed ", "Logprobs ", "TopLogprobs ", "JSONMode ", "JSONSchema "}
	if !slices.Equal(names, want) {
		t.Errorf("Request fields are %q, appendCacheKey writes %q: update it", names, want)
	}
	var msg []string
	for f := range reflect.TypeFor[evaluator.Message]().Fields() {
		msg = append(msg, f.Name+" "+string(f.Tag))
	}
	if want := []string{`Role json:"role"`, `Content json:"content"`}; !slices.Equal(msg, want) {
		t.Errorf("evaluator.Message fields are %q, appendCacheKey writes %q: update it", msg, want)
	}
}

func TestEncodeBody(t *testing.T) {
	// Every judge's settings: the default, and a reasoning model's
	// (max_completion_tokens, no temperature nor top_p).
	for _, cfg := range []Config{
		{Model: "judge-model"},
		{Model: "judge-model", TokenLimit: TokenLimitMaxCompletionTokens},
		{Model: "judge-model", TokenLimit: TokenLimitMaxCompletionTokens, DefaultSamplingOnly: true},
		{Model: "judge-model", TokenLimit: TokenLimitMaxCompletionTokens, DefaultSamplingOnly: true, ReasoningEffort: ReasoningEffortLow},
		{Model: "judge-model", ReasoningEffort: ReasoningEffortHigh},
	} {
		encodeBodies(t, &Client{cfg: cfg})
	}
	// A reasoning effort adds its one field and nothing else: the body of
	// a judge without it is the same bytes less that field, so every
	// judge that sets none sends what it sent before the setting existed.
	for _, effort := range ReasoningEfforts {
		plain := &Client{cfg: Config{Model: "judge-model", TokenLimit: TokenLimitMaxCompletionTokens}}
		with := &Client{cfg: Config{Model: "judge-model", TokenLimit: TokenLimitMaxCompletionTokens, ReasoningEffort: effort}}
		field := `,"reasoning_effort":"` + string(effort) + `"`
		for i, r := range trickyRequests() {
			if len(r.Messages) == 0 {
				r.Messages = simpleRequest().Messages
			}
			for j := range r.Messages {
				r.Messages[j].Role = "user"
			}
			p, invalid := plain.buildRequest(r)
			q, _ := with.buildRequest(r)
			if invalid != nil {
				continue
			}
			a, aerr := encodeBody(&p)
			b, berr := encodeBody(&q)
			if aerr != nil || berr != nil {
				continue // the encoding's own errors are compared above
			}
			if bytes.Contains(a, []byte("reasoning_effort")) {
				t.Errorf("request %d: a judge without an effort sends one: %s", i, a)
			}
			if bytes.Count(b, []byte(field)) != 1 || !bytes.Equal(bytes.Replace(b, []byte(field), nil, 1), a) {
				t.Errorf("request %d, effort %s:\n with %s\nwithout %s", i, effort, b, a)
			}
		}
	}
}

func encodeBodies(t *testing.T, c *Client) {
	t.Helper()
	for i, r := range trickyRequests() {
		if len(r.Messages) == 0 {
			r.Messages = simpleRequest().Messages
		}
		for j := range r.Messages {
			r.Messages[j].Role = "user"
		}
		p, invalid := c.buildRequest(r)
		if invalid != nil {
			continue
		}
		got, gotErr := encodeBody(&p)
		want, wantErr := encodeBodyStd(&p)
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Errorf("request %d: error %v, want %v", i, gotErr, wantErr)
			continue
		}
		if gotErr == nil && !bytes.Equal(got, want) {
			t.Errorf("request %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

func FuzzEncodeBody(f *testing.F) {
	for i, s := range trickyStrings {
		f.Add(s, s+"x", trickyFloats[i%len(trickyFloats)], trickyFloats[(i+5)%len(trickyFloats)], i, int64(-i), i%2 == 0, i%3)
	}
	f.Fuzz(func(t *testing.T, system, user string, temp, topP float64, n int, seed int64, logprobs bool, format int) {
		p := chatRequest{
			Messages: []chatMessage{{Content: system, Role: "system"}, {Content: user, Role: "user"}},
			Model:    user, Logprobs: logprobs, MaxTokens: n, N: -n, Seed: &seed, Temperature: sentFloat{V: temp, Sent: logprobs || n%2 == 0}, TopLogprobs: n / 2, TopP: topP,
		}
		switch format % 3 {
		case 1:
			p.ResponseFormat = &responseFormat{Type: "json_object"}
		case 2:
			p.ResponseFormat = &responseFormat{Type: "json_schema",
				JSONSchema: &jsonSchemaFormat{Name: system, Strict: logprobs, Schema: map[string]any{user: system, "t": temp}}}
		}
		got, gotErr := encodeBody(&p)
		want, wantErr := encodeBodyStd(&p)
		if (gotErr == nil) != (wantErr == nil) || (gotErr == nil && !bytes.Equal(got, want)) {
			t.Fatalf("%+v:\n got %s (%v)\nwant %s (%v)", p, got, gotErr, want, wantErr)
		}
	})
}

func FuzzAppendString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := jsontext.AppendString(nil, s, true); !bytes.Equal(got, want) {
			t.Fatalf("html %q: got %s, want %s", s, got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		if got, want := jsontext.AppendString(nil, s, false), bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
			t.Fatalf("plain %q: got %s, want %s", s, got, want)
		}
	})
}

func FuzzAppendFloat(f *testing.F) {
	for _, x := range trickyFloats {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		want, wantErr := json.Marshal(x)
		got, gotErr := appendFloat(nil, x)
		if (gotErr == nil) != (wantErr == nil) || (gotErr == nil && !bytes.Equal(got, want)) {
			t.Fatalf("%v: got %s (%v), want %s (%v)", x, got, gotErr, want, wantErr)
		}
		if gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%v: error %q, want %q", x, gotErr, wantErr)
		}
	})
}

// TestAppendStringEveryOffset puts each kind of byte that needs care at
// every offset of the eight-byte words appendString skips through.
func TestAppendStringEveryOffset(t *testing.T) {
	specials := []string{"\"", "\\", "\n", "\x00", "\x1f", "\x7f", "<", ">", "&", "é", "\u2028", "\xff", "\xe2\x82", "🙂", " "}
	for p := range 20 {
		for _, c := range specials {
			for _, tail := range []int{0, 1, 7, 8, 9, 17} {
				s := strings.Repeat("a", p) + c + strings.Repeat("b", tail) + c
				want, _ := json.Marshal(s)
				if got := jsontext.AppendString(nil, s, true); !bytes.Equal(got, want) {
					t.Errorf("html %q: got %s, want %s", s, got, want)
				}
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				_ = enc.Encode(s)
				if got, want := jsontext.AppendString(nil, s, false), bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
					t.Errorf("plain %q: got %s, want %s", s, got, want)
				}
			}
		}
	}
}
