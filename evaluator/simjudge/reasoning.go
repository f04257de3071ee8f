package simjudge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Wording is how an endpoint words its refusal of a request parameter.
type Wording string

// The endpoints a reasoning model is reached through, as each words the
// 400 for a parameter the model does not take (seen in their answers as
// quoted in public bug reports; the search notes are in the tests).
const (
	// WordingOpenAI is OpenAI's {"error":{"message","type":
	// "invalid_request_error","param","code"}}.
	WordingOpenAI Wording = "openai"
	// WordingAzure is Azure OpenAI's: OpenAI's body, with its own extra
	// fields (a "callstack" in the error).
	WordingAzure Wording = "azure"
	// WordingOpenRouter is OpenRouter's envelope: {"error":{"code":400,
	// "message":"Provider returned error","metadata":{"raw":"<OpenAI's
	// body>","provider_name":"OpenAI"}}}.
	WordingOpenRouter Wording = "openrouter"
)

// Reasoning says how ReasoningModel behaves.
type Reasoning struct {
	// Wording is how refusals are worded; "" is WordingOpenAI.
	Wording Wording
	// NoTemperature refuses a temperature or top_p even at the default, as
	// o3-mini did ("Unsupported parameter: 'temperature' is not supported
	// with this model."); otherwise only other values are refused, as o1
	// and gpt-5 do ("Unsupported value: ...").
	NoTemperature bool
	// ReasoningTokens is what the model spends thinking before it writes
	// its answer, counted in max_completion_tokens: a smaller cap gets an
	// empty answer cut off at the cap (billed). 0 means 64.
	ReasoningTokens int
	// NoReasoningEffort refuses reasoning_effort at any value, as o1-mini
	// did ("Unsupported parameter: 'reasoning_effort' is not supported
	// with this model."); otherwise low, medium and high are taken and any
	// other value is refused ("Unsupported value: ...").
	NoReasoningEffort bool
}

// ReasoningModel wraps the simulated judge (or any OpenAI-compatible
// handler) so that its chat completions answer as OpenAI's reasoning
// models (o1, o3, o4-mini, gpt-5) do: 400 for max_tokens, for a
// temperature or top_p other than the default, for a reasoning_effort
// other than low, medium and high (any, with NoReasoningEffort) and for
// logprobs, in the
// wording of the endpoint; an answer with no text when max_completion_tokens
// leaves no room past the reasoning. A request it takes goes on to inner
// with the reasoning's share of the cap taken off. For tests only.
func ReasoningModel(inner http.Handler, opts Reasoning) http.Handler {
	if opts.ReasoningTokens <= 0 {
		opts.ReasoningTokens = 64
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			inner.ServeHTTP(w, r)
			return
		}
		raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 8<<20))
		var req map[string]json.RawMessage
		if err != nil || json.Unmarshal(raw, &req) != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "could not parse the JSON body")
			return
		}
		if _, ok := req["max_tokens"]; ok {
			refuse(w, opts.Wording, "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", "max_tokens", "unsupported_parameter")
			return
		}
		for _, p := range []string{"temperature", "top_p"} {
			v, ok := req[p]
			if !ok {
				continue
			}
			if opts.NoTemperature {
				refuse(w, opts.Wording, fmt.Sprintf("Unsupported parameter: '%s' is not supported with this model.", p), p, "unsupported_parameter")
				return
			}
			if x, err := strconv.ParseFloat(string(v), 64); err != nil || x != 1 {
				refuse(w, opts.Wording, fmt.Sprintf("Unsupported value: '%s' does not support %s with this model. Only the default (1) value is supported.", p, v), p, "unsupported_value")
				return
			}
		}
		if v, ok := req["reasoning_effort"]; ok {
			var effort string
			_ = json.Unmarshal(v, &effort)
			switch {
			case opts.NoReasoningEffort:
				refuse(w, opts.Wording, "Unsupported parameter: 'reasoning_effort' is not supported with this model.", "reasoning_effort", "unsupported_parameter")
				return
			case effort != "low" && effort != "medium" && effort != "high":
				refuse(w, opts.Wording, fmt.Sprintf("Unsupported value: 'reasoning_effort' does not support %s with this model. Supported values are: 'low', 'medium', and 'high'.", v), "reasoning_effort", "unsupported_value")
				return
			}
		}
		if v, ok := req["logprobs"]; ok && string(v) == "true" {
			refuse(w, opts.Wording, "Unsupported parameter: 'logprobs' is not supported with this model.", "logprobs", "unsupported_parameter")
			return
		}
		if v, ok := req["max_completion_tokens"]; ok {
			limit, _ := strconv.Atoi(string(v))
			if limit <= opts.ReasoningTokens {
				// All of it went on reasoning: no text, cut at the cap.
				writeJSON(w, http.StatusOK, map[string]any{
					"id": "chatcmpl-reasoning", "object": "chat.completion", "created": time.Now().Unix(), "model": "reasoning-model",
					"choices": []map[string]any{{"index": 0, "finish_reason": "length", "message": map[string]any{"role": "assistant", "content": ""}}},
					"usage":   map[string]any{"prompt_tokens": 80, "completion_tokens": limit, "total_tokens": 80 + limit},
				})
				return
			}
			req["max_completion_tokens"] = json.RawMessage(strconv.Itoa(limit - opts.ReasoningTokens))
		}
		body, _ := json.Marshal(req)
		r2 := r.Clone(r.Context())
		r2.Body, r2.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		inner.ServeHTTP(w, r2)
	})
}

// refuse answers 400 for a parameter the model does not take, worded as
// the endpoint words it.
func refuse(w http.ResponseWriter, wording Wording, msg, param, code string) {
	openai := map[string]any{"message": msg, "type": "invalid_request_error", "param": param, "code": code}
	switch wording {
	case WordingAzure:
		openai["callstack"] = "  File \"/usr/local/bin/gunicorn\", line 8, in <module>\n    sys.exit(run())"
	case WordingOpenRouter:
		inner, _ := json.Marshal(map[string]any{"error": openai})
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"code": 400, "message": "Provider returned error",
			"metadata": map[string]any{"raw": string(inner), "provider_name": "OpenAI"},
		}})
		return
	}
	writeJSON(w, http.StatusBadRequest, map[string]any{"error": openai})
}
