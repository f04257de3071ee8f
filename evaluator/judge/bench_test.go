package judge

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// benchPrompt is a BatchEval-sized request: a rubric as the system message
// and ten dialogue samples in the user message, about 4 KB in all.
func benchPrompt() Request {
	system := "You are a careful evaluator of dialogue responses. You will be shown several samples, " +
		"each a conversation context and a response. Judge every sample on engagingness: " +
		"\"a float score near 1 means dull\" and \"a float score near 5 means captivating\". " +
		"First write a concise analysis of every sample, giving no scores; then give all the scores at once " +
		"in this template: Float Scores: [Sample1:<score>, ..., Sample10:<score>]."
	var user strings.Builder
	for i := 1; user.Len() < 4096-len(system); i++ {
		fmt.Fprintf(&user, "Sample%d:\nContext: A: Have you seen the new film about the \"deep sea\" explorers? B: Not yet, is it any good?\n"+
			"Response: It's great & the visuals are stunning <really>, I'd watch it again — café scenes included.\n\n", i)
	}
	return Request{
		Messages: []evaluator.Message{
			{Role: "system", Content: system},
			{Role: "user", Content: user.String()},
		},
		Temperature: 0,
		MaxTokens:   1024,
	}
}

// benchAnswer is a realistic two-stage BatchEval answer of about 2 KB with
// a usage block, as the judge's body.
func benchAnswer() []byte {
	var text strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&text, "Sample%d: the response picks up the partner's question and adds a personal opinion, "+
			"though it stays generic and does not invite a reply.\n", i)
	}
	text.WriteString("Float Scores: [Sample1:3.2, Sample2:2.8, Sample3:4.1, Sample4:3.0, Sample5:2.5, " +
		"Sample6:3.7, Sample7:4.4, Sample8:2.2, Sample9:3.9, Sample10:3.1]")
	return []byte(`{"id":"chatcmpl-9x8y7z","object":"chat.completion","created":1764641645,"model":"judge-model-0613",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":` + quote(text.String()) + `,"refusal":null,"annotations":[]},` +
		`"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":1012,"completion_tokens":498,"total_tokens":1510,` +
		`"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
		`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},` +
		`"service_tier":"default","system_fingerprint":"fp_0123456789"}`)
}

// BenchmarkClientComplete measures one judge call over a local HTTP server
// that answers at once. The server runs in the same process, so ns/op and
// allocs/op include its share (reading the body, writing the answer): the
// client's own cost is somewhat less than shown.
func BenchmarkClientComplete(b *testing.B) {
	answer := benchAnswer()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL + "/v1", Model: "judge-model", APIKey: "sk-bench", HTTPClient: srv.Client(), MaxAttempts: 1})
	if err != nil {
		b.Fatal(err)
	}
	req := benchPrompt()
	ctx := context.Background()
	if resp, err := c.Complete(ctx, req); err != nil || len(resp.Text()) < 1500 {
		b.Fatalf("Complete: %v (answer of %d bytes)", err, len(resp.Text()))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// cannedTransport answers every request with the same 200 body without a
// network: it reads the request body as a transport would, so the
// benchmark below is the client's own CPU and nothing else.
type cannedTransport struct{ answer []byte }

func (t cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(t.answer)),
		ContentLength: int64(len(t.answer)),
		Request:       r,
	}, nil
}

// BenchmarkClientCompleteNoNetwork is BenchmarkClientComplete without the
// server and the sockets: what a call costs the client alone.
func BenchmarkClientCompleteNoNetwork(b *testing.B) {
	hc := &http.Client{Transport: cannedTransport{answer: benchAnswer()}}
	c, err := New(Config{BaseURL: "http://judge.invalid/v1", Model: "judge-model", APIKey: "sk-bench", HTTPClient: hc, MaxAttempts: 1})
	if err != nil {
		b.Fatal(err)
	}
	req := benchPrompt()
	ctx := context.Background()
	if resp, err := c.Complete(ctx, req); err != nil || len(resp.Text()) < 1500 {
		b.Fatalf("Complete: %v (answer of %d bytes)", err, len(resp.Text()))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRequestHash measures the cache key of a BatchEval-sized request.
func BenchmarkRequestHash(b *testing.B) {
	req := benchPrompt()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := RequestHash("http://localhost:11434/v1", "judge-model", req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeBody and BenchmarkDecode are the two halves of the
// client's own work on a call, without HTTP.
func BenchmarkEncodeBody(b *testing.B) {
	c := &Client{cfg: Config{Model: "judge-model"}}
	p, invalid := c.buildRequest(benchPrompt())
	if invalid != nil {
		b.Fatal(invalid)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encodeBody(&p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	c := &Client{cfg: Config{Model: "judge-model"}}
	raw := benchAnswer()
	b.ReportAllocs()
	for b.Loop() {
		if _, e := c.decode(raw); e != nil {
			b.Fatal(e)
		}
	}
}

// BenchmarkMessagesJSON measures the stored form of a request's messages,
// written once per call (the batch's stored request).
func BenchmarkMessagesJSON(b *testing.B) {
	msgs := benchPrompt().Messages
	b.ReportAllocs()
	for b.Loop() {
		if MessagesJSON(msgs) == "" {
			b.Fatal("empty")
		}
	}
}
