package simjudge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	judgeclient "github.com/batcheval/batcheval/evaluator/judge"
)

// response is the part of an OpenAI answer the tests read.
type response struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// post sends body to the chat completions endpoint over real HTTP.
func post(t *testing.T, s *Server, body any) (int, response) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return postRaw(t, s, b)
}

func postRaw(t *testing.T, s *Server, body []byte) (int, response) {
	t.Helper()
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out response
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, raw)
	}
	return resp.StatusCode, out
}

func request(msgs []evaluator.Message, s evaluator.Settings) map[string]any {
	return map[string]any{
		"model": "gpt-4", "messages": msgs, "temperature": s.Temperature,
		"top_p": s.TopP, "n": 1, "seed": s.Seed,
	}
}

func criterion(name string, lo, hi float64) evaluator.Criterion {
	return evaluator.Criterion{
		Name: name, Description: "How good the response is.", Lo: lo, Hi: hi,
		Levels: evaluator.Levels{Low: "poor.", Middle: "fair.", High: "excellent."},
	}
}

func rubric(c evaluator.Criterion) evaluator.Rubric {
	return evaluator.Rubric{Task: "a conversation and its next response", Criteria: []evaluator.Criterion{c}}
}

func sample(context, response string) evaluator.Sample {
	return evaluator.Sample{Fields: []evaluator.Text{
		{Label: "Conversation history", Value: context},
		{Label: "Response", Value: response},
	}}
}

func demoSamples() []evaluator.Sample {
	return []evaluator.Sample{
		sample("A: I started learning the violin last month.\nB: How is it going?",
			"Honestly it is harder than I expected, the bowing feels awkward and my fingers ache after practice. Which pieces did you start with when you learned, and how long before it sounded like music?"),
		sample("A: I just got back from Lisbon.", "ok"),
		sample("A: Any tips for learning chess?", "Learn the openings. Play often."),
		sample("A: What did you think of the film?", ""),
		sample("A: My cat keeps knocking things off the table.",
			"Cats do that to get attention, or simply because moving things are fun to watch. Does it happen mostly when you are busy? Mine stopped once I gave her a shelf by the window."),
	}
}

func TestBatchAnswerParses(t *testing.T) {
	s := startServer(t, Options{Seed: 3})
	tests := []struct {
		name      string
		procedure evaluator.Procedure
		scoring   evaluator.Scoring
		lo, hi    float64
	}{
		{"two stage decimal", evaluator.TwoStage, evaluator.Decimal, 1, 3},
		{"one stage integer", evaluator.OneStage, evaluator.Integer, 1, 5},
		{"three stage decimal", evaluator.ThreeStage, evaluator.Decimal, 0, 10},
		{"two stage integer", evaluator.TwoStage, evaluator.Integer, 0, 100},
	}
	for _, tt := range tests {
		c := criterion("Engagingness", tt.lo, tt.hi)
		set := evaluator.DefaultSettings()
		set.Procedure, set.Scoring = tt.procedure, tt.scoring
		samples := demoSamples()
		msgs := evaluator.BuildBatchPrompt(rubric(c), c, samples, set)
		status, resp := post(t, s, request(msgs, set))
		if status != http.StatusOK || len(resp.Choices) != 1 {
			t.Fatalf("%s: status %d, %d choices", tt.name, status, len(resp.Choices))
		}
		text := resp.Choices[0].Message.Content
		a := evaluator.ParseBatchAnswer(text, len(samples), c)
		if len(a.Problems) != 0 {
			t.Errorf("%s: problems %q in answer:\n%s", tt.name, a.Problems, text)
		}
		for i, sc := range a.Scores {
			if sc == nil {
				continue // reported above
			}
			if *sc < tt.lo || *sc > tt.hi {
				t.Errorf("%s: Sample%d score %g outside [%g, %g]", tt.name, i+1, *sc, tt.lo, tt.hi)
			}
			if tt.scoring == evaluator.Integer && *sc != math.Trunc(*sc) {
				t.Errorf("%s: Sample%d score %g is not an integer", tt.name, i+1, *sc)
			}
		}
		for i, an := range a.Analyses {
			if an == "" {
				t.Errorf("%s: Sample%d has no analysis in:\n%s", tt.name, i+1, text)
			}
		}
		if tt.procedure == evaluator.ThreeStage && !strings.Contains(text, "Ranking:") {
			t.Errorf("%s: three-stage answer has no ranking:\n%s", tt.name, text)
		}
		if tt.procedure == evaluator.OneStage && !strings.Contains(text, "Score of Sample1:") {
			t.Errorf("%s: one-stage answer has no score lines:\n%s", tt.name, text)
		}
		if !strings.Contains(text, "Simulated judge") {
			t.Errorf("%s: the answer does not say it is simulated", tt.name)
		}
		if resp.Model != DefaultModel || resp.Object != "chat.completion" || resp.Choices[0].FinishReason != "stop" || resp.Choices[0].Message.Role != "assistant" {
			t.Errorf("%s: response shape: model %q object %q finish %q role %q", tt.name, resp.Model, resp.Object, resp.Choices[0].FinishReason, resp.Choices[0].Message.Role)
		}
		if want := evaluator.EstimateTokens(msgs); resp.Usage.PromptTokens != want {
			t.Errorf("%s: prompt_tokens %d, want %d", tt.name, resp.Usage.PromptTokens, want)
		}
		if resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens || resp.Usage.CompletionTokens != evaluator.EstimateTextTokens(text) {
			t.Errorf("%s: usage %+v does not add up", tt.name, resp.Usage)
		}
	}
}

func TestDeterministicAndNoisy(t *testing.T) {
	s := startServer(t, Options{Seed: 1})
	c := criterion("Overall", 1, 5)
	set := evaluator.DefaultSettings()
	samples := demoSamples()
	answer := func(smps []evaluator.Sample, seed int64) string {
		set := set
		set.Seed = seed
		_, resp := post(t, s, request(evaluator.BuildBatchPrompt(rubric(c), c, smps, set), set))
		return resp.Choices[0].Message.Content
	}
	first, second := answer(samples, 1), answer(samples, 1)
	if first != second {
		t.Errorf("identical requests gave different answers:\n%s\n---\n%s", first, second)
	}
	if other := answer(samples, 2); other == first {
		t.Errorf("seeds 1 and 2 gave identical answers")
	}
	// The same sample in a batch with other neighbours (a later round)
	// gets a slightly different score.
	reordered := []evaluator.Sample{samples[4], samples[0], samples[2], samples[1], samples[3]}
	a := evaluator.ParseBatchAnswer(first, 5, c)
	b := evaluator.ParseBatchAnswer(answer(reordered, 1), 5, c)
	if a.Scores[0] == nil || b.Scores[1] == nil {
		t.Fatalf("missing scores: %q %q", a.Problems, b.Problems)
	}
	if d := math.Abs(*a.Scores[0] - *b.Scores[1]); d == 0 || d > 2 {
		t.Errorf("Sample1 scored %g then %g in another batch: want a small, non-zero difference", *a.Scores[0], *b.Scores[1])
	}
}

func TestFeaturesMoveScores(t *testing.T) {
	// No noise, so the comparison is exact.
	s := startServer(t, Options{Noise: -1})
	long := sample("A: I am thinking about getting a dog.",
		"That is exciting! What kind of dog are you considering, and do you have a yard? Smaller breeds often suit apartments, while herding dogs need long daily walks and plenty of puzzles to stay happy.")
	short := sample("A: I am thinking about getting a dog.", "ok")
	for _, name := range []string{"Engagingness", "Coherence", "Naturalness", "Overall"} {
		c := criterion(name, 1, 3)
		set := evaluator.DefaultSettings()
		msgs := evaluator.BuildBatchPrompt(rubric(c), c, []evaluator.Sample{short, long}, set)
		_, resp := post(t, s, request(msgs, set))
		a := evaluator.ParseBatchAnswer(resp.Choices[0].Message.Content, 2, c)
		if a.Scores[0] == nil || a.Scores[1] == nil {
			t.Errorf("%s: missing scores %q", name, a.Problems)
			continue
		}
		if !(*a.Scores[1] > *a.Scores[0]) {
			t.Errorf("%s: long varied response %g, \"ok\" %g: want the long one higher", name, *a.Scores[1], *a.Scores[0])
		}
	}
}

func TestRepairReturnsOnlyRequestedLabels(t *testing.T) {
	s := startServer(t, Options{Seed: 5})
	c := criterion("Engagingness", 1, 3)
	set := evaluator.DefaultSettings()
	samples := demoSamples()
	msgs := evaluator.BuildBatchPrompt(rubric(c), c, samples, set)
	_, resp := post(t, s, request(msgs, set))
	full := evaluator.ParseBatchAnswer(resp.Choices[0].Message.Content, len(samples), c)

	repair := evaluator.BuildRepairMessages(msgs, "Sample1: fine.\nFloat Scores: [Sample1:2]", c, set, []int{2, 4})
	_, resp = post(t, s, request(repair, set))
	text := resp.Choices[0].Message.Content
	a := evaluator.ParseBatchAnswer(text, len(samples), c)
	got := fmt.Sprint(a.Missing())
	if got != "[1 3 5]" {
		t.Errorf("repair answer %q fills labels other than 2 and 4 (missing %s)", text, got)
	}
	for _, l := range []int{2, 4} {
		if a.Scores[l-1] == nil || full.Scores[l-1] == nil || *a.Scores[l-1] != *full.Scores[l-1] {
			t.Errorf("Sample%d: repair score differs from the full answer's (%q vs %q)", l, text, resp.Choices[0].Message.Content)
		}
	}
	if !strings.HasPrefix(text, "Float Scores: [") {
		t.Errorf("repair answer %q is not just a score list", text)
	}
}

func TestMissRateLeavesScoresOut(t *testing.T) {
	s := startServer(t, Options{Seed: 2, MissRate: 0.5})
	c := criterion("Engagingness", 1, 3)
	set := evaluator.DefaultSettings()
	var samples []evaluator.Sample
	for i := 0; i < 4; i++ {
		samples = append(samples, demoSamples()...)
	}
	_, resp := post(t, s, request(evaluator.BuildBatchPrompt(rubric(c), c, samples, set), set))
	a := evaluator.ParseBatchAnswer(resp.Choices[0].Message.Content, len(samples), c)
	if m := len(a.Missing()); m == 0 || m == len(samples) {
		t.Errorf("MissRate 0.5 left out %d of %d scores: want some but not all", m, len(samples))
	}
}

func TestChoicesAndLimits(t *testing.T) {
	s := startServer(t, Options{})
	c := criterion("Engagingness", 1, 3)
	set := evaluator.DefaultSettings()
	msgs := evaluator.BuildBatchPrompt(rubric(c), c, demoSamples(), set)
	req := request(msgs, set)
	req["n"] = 3
	_, resp := post(t, s, req)
	if len(resp.Choices) != 3 {
		t.Fatalf("n=3 gave %d choices", len(resp.Choices))
	}
	if resp.Choices[2].Index != 2 || resp.Choices[0].Message.Content == resp.Choices[1].Message.Content {
		t.Errorf("choices should be indexed and differ: %d, same content %v", resp.Choices[2].Index, resp.Choices[0].Message.Content == resp.Choices[1].Message.Content)
	}
	req["n"] = 1
	req["max_tokens"] = 10
	_, resp = post(t, s, req)
	if resp.Choices[0].FinishReason != "length" || len(resp.Choices[0].Message.Content) > 40 {
		t.Errorf("max_tokens 10: finish %q, %d bytes", resp.Choices[0].FinishReason, len(resp.Choices[0].Message.Content))
	}
}

func TestHTTPEdges(t *testing.T) {
	s := startServer(t, Options{Model: "sim-x"})
	tests := []struct {
		name       string
		body       string
		wantStatus int
		wantText   string // in the reply or the error message
	}{
		{"bad JSON", `{"messages": [`, http.StatusBadRequest, "could not parse"},
		{"no messages", `{"model": "m", "messages": []}`, http.StatusBadRequest, "messages must not be empty"},
		{"n too large", `{"messages": [{"role": "user", "content": "hi"}], "n": 1000}`, http.StatusBadRequest, "n must be between"},
		{"connection test", `{"messages": [{"role": "user", "content": "Say OK."}]}`, http.StatusOK, "simulated judge"},
		{"content parts", `{"messages": [{"role": "user", "content": [{"type": "text", "text": "ping"}]}]}`, http.StatusOK, "connection works"},
	}
	for _, tt := range tests {
		status, resp := postRaw(t, s, []byte(tt.body))
		if status != tt.wantStatus {
			t.Errorf("%s: status %d, want %d", tt.name, status, tt.wantStatus)
			continue
		}
		got := ""
		if resp.Error != nil {
			got = resp.Error.Message
			if resp.Error.Type != "invalid_request_error" {
				t.Errorf("%s: error type %q", tt.name, resp.Error.Type)
			}
		} else if len(resp.Choices) > 0 {
			got = resp.Choices[0].Message.Content
		}
		if !strings.Contains(got, tt.wantText) {
			t.Errorf("%s: %q lacks %q", tt.name, got, tt.wantText)
		}
	}

	r, err := http.Get(s.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Object string `json:"object"`
		Data   []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	err = json.NewDecoder(r.Body).Decode(&models)
	r.Body.Close()
	if err != nil || models.Object != "list" || len(models.Data) != 1 || models.Data[0].ID != "sim-x" {
		t.Errorf("GET /v1/models = %+v, %v; want one model sim-x", models, err)
	}
	if got := s.Requests(); got != int64(len(tests)+1) {
		t.Errorf("Requests() = %d, want %d", got, len(tests)+1)
	}
	if !strings.HasSuffix(s.URL, "/v1") || !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Errorf("URL %q: want http://127.0.0.1:<port>/v1", s.URL)
	}
}

func TestHandlerWithoutServer(t *testing.T) {
	h := NewHandler(Options{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v2/nothing", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `"error"`) {
		t.Errorf("unknown path: %d %s", rec.Code, rec.Body.String())
	}
}

func TestMeasure(t *testing.T) {
	tests := []struct {
		name   string
		fields []evaluator.Text
		words  int
		qs     int
		ovl    float64
	}{
		{"empty", []evaluator.Text{{Value: "ctx"}, {Value: ""}}, 0, 0, 0},
		{"questions", []evaluator.Text{{Value: "x"}, {Value: "Why? How?"}}, 2, 2, 0},
		{"overlap", []evaluator.Text{{Value: "jazz records"}, {Value: "older jazz records"}}, 3, 0, 2.0 / 3},
		{"single field", []evaluator.Text{{Value: "one two three"}}, 3, 0, noContextOverlap},
	}
	for _, tt := range tests {
		f := measure(tt.fields)
		if f.words != tt.words || f.questions != tt.qs || math.Abs(f.values[featOverlap]-tt.ovl) > 1e-9 {
			t.Errorf("%s: words %d questions %d overlap %g; want %d %d %g", tt.name, f.words, f.questions, f.values[featOverlap], tt.words, tt.qs, tt.ovl)
		}
	}
}

// TestScoreCheckAnswered: the simulated judge answers "Test connection"'s
// scoring request, sent by the real client, with a score the product reads,
// within the request's token cap. Before, it answered every unknown prompt
// with a greeting, which holds no score.
func TestScoreCheckAnswered(t *testing.T) {
	s := startServer(t, Options{})
	client, err := judgeclient.New(judgeclient.Config{BaseURL: s.URL, Model: "sim", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.ScoreCheck(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	score, ok := evaluator.ReadScoreCheck(resp.Text())
	if !ok {
		t.Fatalf("no score read from %q", resp.Text())
	}
	c := evaluator.ScoreCheckCriterion
	if score < c.Lo || score > c.Hi {
		t.Errorf("score %v outside [%v, %v]", score, c.Lo, c.Hi)
	}
	if fr := resp.Choices[0].FinishReason; fr != "stop" {
		t.Errorf("finish reason %q, want stop (the answer fits the cap of %d tokens)", fr, evaluator.ScoreCheckMaxTokens)
	}
	if !strings.Contains(resp.Text(), "simulated") {
		t.Errorf("the answer does not say it is simulated: %q", resp.Text())
	}
}
