package judge

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
)

// reasoningEndpoint is an OpenAI reasoning model (o1, o3, o4-mini, gpt-5)
// behind the wording of one endpoint (simjudge.ReasoningModel around the
// simulated judge), recording the body of every call it gets.
type reasoningEndpoint struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []map[string]json.RawMessage
}

func newReasoningEndpoint(t *testing.T, opts simjudge.Reasoning) *reasoningEndpoint {
	t.Helper()
	e := &reasoningEndpoint{}
	inner := simjudge.ReasoningModel(simjudge.NewHandler(simjudge.Options{Noise: -1}), opts)
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]json.RawMessage
		_ = json.Unmarshal(raw, &body)
		e.mu.Lock()
		e.bodies = append(e.bodies, body)
		e.mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(raw)))
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *reasoningEndpoint) calls() []map[string]json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]map[string]json.RawMessage(nil), e.bodies...)
}

// TestReasoningModelRefusals: OpenAI's reasoning models refuse max_tokens
// and any temperature or top_p but the default, with a 400 that OpenAI,
// Azure and OpenRouter word each their own way. Such a call is refused once
// (no retry: the same request is refused every time), the refusal is read
// from each wording (Error.Unsupported), and the error names the judge
// setting to change, which a run's error ends with. Before, the client
// sent max_tokens and the temperature always: every call was refused, and
// the message said only to check "that the model supports the parameters
// sent (logprobs, seed, response_format, n)", none of which was at fault.
// A judge set to send max_completion_tokens and no sampling parameters is
// answered, the cap leaving room for the model's reasoning.
func TestReasoningModelRefusals(t *testing.T) {
	req := Request{Messages: evaluator.ScoreCheckMessages(), Temperature: 0.2, TopP: 0.9, MaxTokens: 300}
	for _, wording := range []simjudge.Wording{simjudge.WordingOpenAI, simjudge.WordingAzure, simjudge.WordingOpenRouter} {
		for _, noTemperature := range []bool{false, true} {
			name := string(wording)
			if noTemperature {
				name += ", no temperature at all (o3-mini)"
			}
			t.Run(name, func(t *testing.T) {
				cases := []struct {
					name          string
					limit         TokenLimit
					defaultOnly   bool
					wantRefused   Unsupported // "" when answered
					wantHintWords string
				}{
					{"as every judge was sent", "", false, UnsupportedMaxTokens, `set "Token limit sent as" to max_completion_tokens`},
					{"max_completion_tokens, the run's temperature", TokenLimitMaxCompletionTokens, false, UnsupportedSampling, "launch with temperature 1 and top p 1"},
					{"max_completion_tokens, default sampling only", TokenLimitMaxCompletionTokens, true, "", ""},
				}
				for _, tc := range cases {
					ep := newReasoningEndpoint(t, simjudge.Reasoning{Wording: wording, NoTemperature: noTemperature})
					c := mustNew(t, Config{BaseURL: ep.srv.URL + "/v1", Model: "o4-mini", TokenLimit: tc.limit, DefaultSamplingOnly: tc.defaultOnly,
						MaxAttempts: 3, MinBackoff: 1, MaxBackoff: 1})
					resp, err := c.Complete(context.Background(), req)
					calls := ep.calls()
					if tc.wantRefused == "" {
						if err != nil {
							t.Fatalf("%s: %v", tc.name, err)
						}
						if _, ok := evaluator.ReadScoreCheck(resp.Text()); !ok {
							t.Errorf("%s: no score in the answer %q", tc.name, resp.Text())
						}
						body := calls[0]
						if got, want := string(body["max_completion_tokens"]), "25300"; got != want {
							t.Errorf("%s: max_completion_tokens %s, want %s (300 and room for reasoning)", tc.name, got, want)
						}
						for _, p := range []string{"max_tokens", "temperature", "top_p"} {
							if v, ok := body[p]; ok {
								t.Errorf("%s: %s %s sent", tc.name, p, v)
							}
						}
						continue
					}
					je := judgeError(t, err)
					if je.Kind != KindBadRequest || je.Unsupported != tc.wantRefused || UnsupportedOf(err) != tc.wantRefused {
						t.Errorf("%s: kind %s, unsupported %q; want bad_request, %q: %v", tc.name, je.Kind, je.Unsupported, tc.wantRefused, err)
					}
					if len(calls) != 1 || je.Attempts != 1 {
						t.Errorf("%s: %d calls, %d attempts; want 1: a refusal is not retried", tc.name, len(calls), je.Attempts)
					}
					if !strings.Contains(je.Hint, tc.wantHintWords) || !strings.HasSuffix(je.InRun(), je.Hint) {
						t.Errorf("%s: hint %q lacks %q, or the run's error %q does not end with it", tc.name, je.Hint, tc.wantHintWords, je.InRun())
					}
					// What the person reads names the parameter, in
					// OpenRouter's envelope too.
					if !strings.Contains(je.Error(), "Unsupported") || !strings.Contains(je.Error(), string(calledParam(tc.wantRefused))) {
						t.Errorf("%s: the message %q does not quote the endpoint's refusal", tc.name, je.Error())
					}
				}
			})
		}
	}
}

func calledParam(u Unsupported) string {
	if u == UnsupportedMaxTokens {
		return "'max_tokens'"
	}
	return "'temperature'"
}

// TestReasoningCapHasRoomForReasoning: a reasoning model counts its hidden
// reasoning in max_completion_tokens. The test call's 30 tokens and
// G-Eval's 5 sent as they are got an empty answer cut off at the cap
// (billed); with the room added the model answers.
func TestReasoningCapHasRoomForReasoning(t *testing.T) {
	ep := newReasoningEndpoint(t, simjudge.Reasoning{ReasoningTokens: 500})
	cfg := Config{BaseURL: ep.srv.URL + "/v1", Model: "gpt-5-mini", TokenLimit: TokenLimitMaxCompletionTokens, DefaultSamplingOnly: true, MaxAttempts: 1}
	resp, err := mustNew(t, cfg).ScoreCheck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if score, ok := evaluator.ReadScoreCheck(resp.Text()); !ok {
		t.Errorf("ScoreCheck answered %q (finish %q), no score", resp.Text(), resp.Choices[0].FinishReason)
	} else if score < 1 || score > 5 {
		t.Errorf("score %v outside 1 to 5", score)
	}
	// The fake itself: without the room, the same cap gets no text.
	raw := `{"messages":[{"content":"hi","role":"user"}],"model":"m","max_completion_tokens":30}`
	res, err := http.Post(ep.srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if !strings.Contains(string(b), `"content":""`) || !strings.Contains(string(b), `"finish_reason":"length"`) {
		t.Errorf("a cap under the reasoning got %s, want no text cut off at the cap", b)
	}
}

// TestUnsupportedWordings: the refusal is read from each endpoint's body
// as the public reports quote them, and from nothing else.
func TestUnsupportedWordings(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       Unsupported
	}{
		{"OpenAI max_tokens", `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`, UnsupportedMaxTokens},
		{"Azure max_tokens, callstack", `{"error":{"code":"unsupported_parameter","type":"invalid_request_error","param":"max_tokens","message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","callstack":"  File ..."}}`, UnsupportedMaxTokens},
		{"gateway fields beside the error", `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"},"endpoint":"https://x.openai.azure.com","provider":"azure"}`, UnsupportedMaxTokens},
		{"gpt-5 temperature", `{"error":{"message":"Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}`, UnsupportedSampling},
		{"o3-mini temperature", `{"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model.","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}`, UnsupportedSampling},
		{"top_p", `{"error":{"message":"Unsupported value: 'top_p' does not support 0.9 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"top_p","code":"unsupported_value"}}`, UnsupportedSampling},
		{"OpenRouter envelope", `{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"{\"error\":{\"message\":\"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.\",\"type\":\"invalid_request_error\",\"param\":\"max_tokens\",\"code\":\"unsupported_parameter\"}}","provider_name":"OpenAI"}}}`, UnsupportedMaxTokens},
		{"gateway quoting it in its message", `{"error":{"message":"Error from provider: {\n \"error\": {\"message\": \"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.\"}}","type":"api_error"}}`, UnsupportedMaxTokens},
		{"plain text", `400 Unsupported parameter: 'temperature' is not supported with this model.`, UnsupportedSampling},
		{"reasoning_effort refused", `{"error":{"message":"Unsupported parameter: 'reasoning_effort' is not supported with this model.","type":"invalid_request_error","param":"reasoning_effort","code":"unsupported_parameter"}}`, UnsupportedReasoningEffort},
		{"reasoning_effort value", `{"error":{"message":"Unsupported value: 'reasoning_effort' does not support 'minimal' with this model. Supported values are: 'low', 'medium', and 'high'.","type":"invalid_request_error","param":"reasoning_effort","code":"unsupported_value"}}`, UnsupportedReasoningEffort},
		{"reasoning_effort in OpenRouter's envelope", `{"error":{"code":400,"message":"Provider returned error","metadata":{"raw":"{\"error\":{\"message\":\"Unsupported parameter: 'reasoning_effort' is not supported with this model.\",\"param\":\"reasoning_effort\",\"code\":\"unsupported_parameter\"}}","provider_name":"OpenAI"}}}`, UnsupportedReasoningEffort},
		{"reasoning_effort in plain text", `400 Unsupported parameter: 'reasoning_effort' is not supported with this model.`, UnsupportedReasoningEffort},
		{"logprobs refused", `{"error":{"message":"Unsupported parameter: 'logprobs' is not supported with this model.","type":"invalid_request_error","param":"logprobs","code":"unsupported_parameter"}}`, ""},
		{"context too long", `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, ""},
		{"max_tokens too large", `{"error":{"message":"max_tokens is too large: 100000. This model supports at most 16384 completion tokens.","type":"invalid_request_error","param":"max_tokens","code":"invalid_value"}}`, ""},
	} {
		if got := unsupportedIn([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
