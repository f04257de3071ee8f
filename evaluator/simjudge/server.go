package simjudge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/batcheval/batcheval/evaluator"
)

// Defaults of Options.
const (
	// DefaultNoise is the noise's standard deviation as a fraction of the
	// score range. 0.08 of a 1-3 range is 0.16: enough that rounds differ
	// and averaging them visibly helps, small enough that the features
	// still decide the ranking.
	DefaultNoise = 0.08
	// DefaultModel is the model name the simulated judge reports, chosen so
	// that nobody mistakes its answers for a real model's.
	DefaultModel = "simulated-judge"
)

// maxChoices caps the n of one request. Why 128: it is the OpenAI limit, and
// it keeps one request from making the in-process server do unbounded work.
const maxChoices = 128

// Options configure the simulated judge.
type Options struct {
	// Seed seeds the noise when a request carries no seed of its own.
	Seed int64
	// Noise is the standard deviation of the Gaussian noise added to every
	// score, as a fraction of the criterion's range: 0 means DefaultNoise,
	// a negative value means no noise at all.
	Noise float64
	// Model is the model name reported in answers and by /v1/models;
	// empty means DefaultModel.
	Model string
	// Latency delays every chat completion, to make progress and
	// concurrency visible in the demo.
	Latency time.Duration
	// MissRate is the fraction of samples, in [0, 1], whose score the judge
	// leaves out of its batch answers (chosen by the same seeded hash), so
	// that the parse-and-repair path can be exercised. Repair requests are
	// always answered in full. 0, the default, leaves nothing out.
	MissRate float64
}

func (o Options) withDefaults() Options {
	if o.Noise == 0 {
		o.Noise = DefaultNoise
	}
	if o.Noise < 0 {
		o.Noise = 0
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	return o
}

// NewHandler returns the simulated judge's HTTP handler, serving
// POST /v1/chat/completions and GET /v1/models in the OpenAI format.
func NewHandler(opts Options) http.Handler {
	h := &handler{opts: opts.withDefaults()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", h.chatCompletions)
	mux.HandleFunc("GET /v1/models", h.models)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "invalid_request_error", fmt.Sprintf("unknown endpoint %s %s: the simulated judge serves POST /v1/chat/completions and GET /v1/models", r.Method, r.URL.Path))
	})
	return mux
}

// Server is a running simulated judge on a loopback port.
type Server struct {
	// URL is the base URL of the OpenAI-compatible API, ending in "/v1".
	URL      string
	srv      *http.Server
	requests atomic.Int64
}

// Start runs the simulated judge on 127.0.0.1 on a free port. Close it when
// done.
func Start(opts Options) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("simulated judge: listen: %w", err)
	}
	s := &Server{URL: "http://" + ln.Addr().String() + "/v1"}
	inner := NewHandler(opts)
	s.srv = &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.requests.Add(1)
			inner.ServeHTTP(w, r)
		}),
		// Why 10s: a request body is a prompt of at most a few hundred kB
		// sent over loopback; anything slower is a stuck client.
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Requests is the number of HTTP requests the server has received, of any
// kind and outcome.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Close stops the server, waiting briefly for requests in flight.
func (s *Server) Close() error {
	// Why 2s: simulated answers take microseconds plus Options.Latency;
	// a request still running after that is abandoned.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}

type handler struct {
	opts Options
}

// chatRequest is the part of the OpenAI request the simulated judge reads.
type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	N                   *int            `json:"n"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Seed                *int64          `json:"seed"`
	Logprobs            bool            `json:"logprobs"`
	TopLogprobs         *int            `json:"top_logprobs"`
	ResponseFormat      json.RawMessage `json:"response_format"`
}

// chatMessage accepts content as a string or as an array of text parts.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func (m chatMessage) text() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(m.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", errors.New("message content must be a string or an array of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// call is one chat request as the prompt kinds see it.
type call struct {
	Messages    []evaluator.Message
	Seed        int64
	Temperature float64
	Logprobs    bool
	TopLogprobs int
	JSONFormat  bool // response_format asked for a JSON object
	opts        Options
}

// reply is one choice of the answer.
type reply struct {
	Content  string
	Logprobs *choiceLogprobs // nil unless the prompt kind provides them
}

// choiceLogprobs is the OpenAI logprobs object of a choice.
type choiceLogprobs struct {
	Content []tokenLogprob `json:"content"`
}

type tokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []topLogprob `json:"top_logprobs"`
}

type topLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// answerFunc writes the reply of choice number i (0-based) of a call.
type answerFunc func(i int) reply

// promptKind recognises one kind of prompt. match returns the function that
// answers it, or false when the call is not of this kind.
type promptKind struct {
	name  string
	match func(c *call) (answerFunc, bool)
}

// kinds lists the prompts the simulated judge understands, tried in order.
// To teach it another method's prompts (G-Eval form filling with logprobs,
// LLM-Eval JSON, analyze-rate), write a file with a match function and add
// it here; the plain reply for unknown prompts stays last.
func (h *handler) kinds() []promptKind {
	return []promptKind{
		{name: "score check", match: matchScoreCheck},
		{name: "batcheval repair", match: matchRepair},
		{name: "batcheval batch", match: matchBatch},
		{name: "g-eval steps", match: matchGEvalSteps},
		{name: "g-eval form", match: matchGEvalForm},
		{name: "llm-eval", match: matchLLMEval},
		{name: "analyze-rate", match: matchAnalyzeRate},
		{name: "unknown", match: matchUnknown},
	}
}

func (h *handler) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	// Why 8 MiB: far above any batch prompt, low enough to refuse garbage.
	body := http.MaxBytesReader(w, r.Body, 8<<20)
	if err := json.NewDecoder(body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "could not parse the JSON body: "+err.Error())
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "messages must not be empty")
		return
	}
	c := &call{Seed: h.opts.Seed, Temperature: 1, Logprobs: req.Logprobs, opts: h.opts}
	for _, m := range req.Messages {
		t, err := m.text()
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
		c.Messages = append(c.Messages, evaluator.Message{Role: m.Role, Content: t})
	}
	if req.Seed != nil {
		c.Seed = *req.Seed
	}
	if req.Temperature != nil { // OpenAI's default temperature is 1
		c.Temperature = *req.Temperature
	}
	if req.TopLogprobs != nil {
		c.TopLogprobs = *req.TopLogprobs
	}
	c.JSONFormat = strings.Contains(string(req.ResponseFormat), "json")
	n := 1
	if req.N != nil {
		n = *req.N
	}
	if n < 1 || n > maxChoices {
		writeError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("n must be between 1 and %d, got %d", maxChoices, n))
		return
	}
	maxTokens := 0
	if req.MaxCompletionTokens != nil {
		maxTokens = *req.MaxCompletionTokens
	} else if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}

	if h.opts.Latency > 0 {
		select {
		case <-time.After(h.opts.Latency):
		case <-r.Context().Done():
			return
		}
	}

	var answer answerFunc
	for _, k := range h.kinds() {
		if f, ok := k.match(c); ok {
			answer = f
			break
		}
	}

	resp := chatResponse{
		ID:      fmt.Sprintf("chatcmpl-sim-%016x", requestHash(c, n)),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   h.opts.Model,
	}
	resp.Usage.PromptTokens = evaluator.EstimateTokens(c.Messages)
	for i := 0; i < n; i++ {
		rep := answer(i)
		finish := "stop"
		if maxTokens > 0 && evaluator.EstimateTextTokens(rep.Content) > maxTokens {
			rep.Content = truncateUTF8(rep.Content, maxTokens*4) // the inverse of the 4-bytes-a-token estimate
			finish = "length"
		}
		ch := choice{Index: i, FinishReason: finish, Logprobs: rep.Logprobs}
		ch.Message.Role = "assistant"
		ch.Message.Content = rep.Content
		resp.Choices = append(resp.Choices, ch)
		resp.Usage.CompletionTokens += evaluator.EstimateTextTokens(rep.Content)
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	writeJSON(w, http.StatusOK, resp)
}

func (h *handler) models(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	writeJSON(w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{ID: h.opts.Model, Object: "model", OwnedBy: "batcheval-simulated"}}})
}

type chatResponse struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

type choice struct {
	Index   int `json:"index"`
	Message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"message"`
	Logprobs     *choiceLogprobs `json:"logprobs"`
	FinishReason string          `json:"finish_reason"`
}

// matchUnknown answers any prompt, e.g. a "test connection" ping.
func matchUnknown(c *call) (answerFunc, bool) {
	return func(int) reply {
		return reply{Content: "Hello from the simulated judge built into batcheval. " +
			"It is not a language model: it only answers batcheval's own prompts, from simple text features. " +
			"The connection works."}
	}, true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers in OpenAI's error shape.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	type apiError struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	writeJSON(w, status, struct {
		Error apiError `json:"error"`
	}{apiError{Message: msg, Type: typ}})
}

// requestHash identifies a request for the response id: identical requests
// get identical ids.
func requestHash(c *call, n int) uint64 {
	f := fnv.New64a()
	fmt.Fprintf(f, "%d|%x|%d|", c.Seed, math.Float64bits(c.Temperature), n)
	for _, m := range c.Messages {
		fmt.Fprintf(f, "%s\x00%s\x00", m.Role, m.Content)
	}
	return f.Sum64()
}

// truncateUTF8 cuts s to at most max bytes without splitting a character.
func truncateUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}
