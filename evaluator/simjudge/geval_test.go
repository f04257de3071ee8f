package simjudge

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// methodResponse is the part of an OpenAI answer the method tests read,
// logprobs included.
type methodResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		Logprobs *struct {
			Content []struct {
				Token       string  `json:"token"`
				Logprob     float64 `json:"logprob"`
				Bytes       []int   `json:"bytes"`
				TopLogprobs []struct {
					Token   string  `json:"token"`
					Logprob float64 `json:"logprob"`
					Bytes   []int   `json:"bytes"`
				} `json:"top_logprobs"`
			} `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// postMethod sends a request over real HTTP and decodes the answer.
func postMethod(t *testing.T, s *Server, body map[string]any) methodResponse {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.URL+"/chat/completions", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	var out methodResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, raw)
	}
	return out
}

// methodRequest is a request of n choices at the given temperature.
func methodRequest(msgs []evaluator.Message, temperature float64, n int) map[string]any {
	return map[string]any{"model": "gpt-4", "messages": msgs, "temperature": temperature, "n": n, "seed": 7}
}

// alternatives turns a choice's logprobs into the evaluator's type.
func (r methodResponse) alternatives(i int) []evaluator.TokenAlternatives {
	lp := r.Choices[i].Logprobs
	if lp == nil {
		return nil
	}
	var out []evaluator.TokenAlternatives
	for _, c := range lp.Content {
		ta := evaluator.TokenAlternatives{Token: c.Token, Logprob: c.Logprob}
		for _, a := range c.TopLogprobs {
			ta.Top = append(ta.Top, evaluator.TokenProb{Token: a.Token, Logprob: a.Logprob})
		}
		out = append(out, ta)
	}
	return out
}

// checkUsage checks that usage counts the prompt and every choice, as for batches.
func checkUsage(t *testing.T, name string, msgs []evaluator.Message, r methodResponse) {
	t.Helper()
	completion := 0
	for _, c := range r.Choices {
		completion += evaluator.EstimateTextTokens(c.Message.Content)
	}
	if r.Usage.PromptTokens != evaluator.EstimateTokens(msgs) || r.Usage.CompletionTokens != completion ||
		r.Usage.TotalTokens != r.Usage.PromptTokens+r.Usage.CompletionTokens {
		t.Errorf("%s: usage %+v, want prompt %d and completion %d", name, r.Usage, evaluator.EstimateTokens(msgs), completion)
	}
}

func TestGEvalStepsAnswer(t *testing.T) {
	s := startServer(t, Options{})
	for _, name := range []string{"Engagingness", "Factual consistency"} {
		c := criterion(name, 1, 3)
		msgs := evaluator.BuildGEvalStepsPrompt(rubric(c), c)
		r := postMethod(t, s, methodRequest(msgs, 0, 1))
		text := r.Choices[0].Message.Content
		steps, err := evaluator.ParseGEvalSteps(text)
		if err != nil {
			t.Errorf("%s: %v in answer:\n%s", name, err, text)
			continue
		}
		if !strings.HasPrefix(steps, "1. ") || !strings.Contains(steps, "\n5. ") || !strings.Contains(steps, name) {
			t.Errorf("%s: steps should be a numbered list of 5 naming the criterion:\n%s", name, steps)
		}
		if !strings.Contains(text, "Simulated judge") || strings.Contains(steps, "Simulated") {
			t.Errorf("%s: the answer should say it is simulated, outside the steps:\n%s", name, text)
		}
		checkUsage(t, name, msgs, r)
	}
}

func TestGEvalFormWithLogprobs(t *testing.T) {
	s := startServer(t, Options{Seed: 4})
	tests := []struct {
		name   string
		lo, hi float64
		k      int
		wantK  int
	}{
		{"1-3, five alternatives asked", 1, 3, 5, 3},
		{"1-5, two alternatives", 1, 5, 2, 2},
		{"1-10, five alternatives", 1, 10, 5, 5},
		{"no alternatives asked", 1, 5, 0, 0},
	}
	for _, tt := range tests {
		c := criterion("Engagingness", tt.lo, tt.hi)
		for si, smp := range demoSamples() {
			msgs := evaluator.BuildGEvalFormPrompt(rubric(c), c, "1. Read.\n2. Rate.", smp)
			req := methodRequest(msgs, 0, 1)
			req["logprobs"] = true
			if tt.k > 0 {
				req["top_logprobs"] = tt.k
			}
			r := postMethod(t, s, req)
			text := r.Choices[0].Message.Content
			v, err := strconv.Atoi(text)
			if err != nil || float64(v) < tt.lo || float64(v) > tt.hi {
				t.Errorf("%s, sample %d: answer %q is not an integer in range", tt.name, si, text)
			}
			alts := r.alternatives(0)
			if len(alts) != 1 || alts[0].Token != text || len(alts[0].Top) != tt.wantK {
				t.Errorf("%s, sample %d: logprobs %+v: want the score token %q with %d alternatives", tt.name, si, alts, text, tt.wantK)
				continue
			}
			lp := r.Choices[0].Logprobs.Content[0]
			if string(rune(lp.Bytes[0])) != text[:1] || len(lp.Bytes) != len(text) {
				t.Errorf("%s: bytes %v do not spell %q", tt.name, lp.Bytes, text)
			}
			for i := 1; i < len(alts[0].Top); i++ {
				if alts[0].Top[i].Logprob > alts[0].Top[i-1].Logprob {
					t.Errorf("%s: alternatives not most likely first: %+v", tt.name, alts[0].Top)
				}
			}
			if tt.k == 0 {
				continue
			}
			if alts[0].Top[0].Token != text {
				t.Errorf("%s: at temperature 0 the answer %q should be the most likely token, not %q", tt.name, text, alts[0].Top[0].Token)
			}
			e := evaluator.GEvalFromLogprobs(alts, c, 0)
			if e.Score == nil || e.Source != evaluator.GEvalSourceLogprobs || e.Used != 1 || e.Total != 1 {
				t.Errorf("%s, sample %d: estimate %+v", tt.name, si, e)
				continue
			}
			sum := 0.0
			for _, p := range e.Probs {
				sum += p
			}
			if math.Abs(sum-1) > 1e-9 || *e.Score < tt.lo || *e.Score > tt.hi {
				t.Errorf("%s, sample %d: probabilities sum to %g, score %g", tt.name, si, sum, *e.Score)
			}
		}
	}
}

func TestGEvalFormSampled(t *testing.T) {
	s := startServer(t, Options{Seed: 2})
	c := criterion("Engagingness", 1, 5)
	distinct := map[string]bool{}
	for si, smp := range demoSamples() {
		msgs := evaluator.BuildGEvalFormPrompt(rubric(c), c, "1. Read.\n2. Rate.", smp)
		r := postMethod(t, s, methodRequest(msgs, 1, 20))
		if len(r.Choices) != 20 {
			t.Fatalf("sample %d: %d choices, want 20", si, len(r.Choices))
		}
		texts := make([]string, len(r.Choices))
		for i, ch := range r.Choices {
			texts[i] = ch.Message.Content
			distinct[ch.Message.Content] = true
			if ch.Logprobs != nil {
				t.Errorf("sample %d: logprobs returned although not asked for", si)
			}
		}
		e := evaluator.GEvalFromSamples(texts, c)
		if e.Source != evaluator.GEvalSourceSamples || e.Used != 20 || e.Total != 20 || e.Score == nil {
			t.Errorf("sample %d: estimate %+v from %q", si, e, texts)
		}
		checkUsage(t, "sampled form", msgs, r)
	}
	if len(distinct) < 2 {
		t.Errorf("20 choices at temperature 1 always gave %v: want different draws", distinct)
	}
}

func TestGEvalFeaturesMoveScores(t *testing.T) {
	s := startServer(t, Options{Noise: -1})
	c := criterion("Engagingness", 1, 5)
	score := func(smp evaluator.Sample) float64 {
		msgs := evaluator.BuildGEvalFormPrompt(rubric(c), c, "", smp)
		req := methodRequest(msgs, 0, 1)
		req["logprobs"], req["top_logprobs"] = true, 5
		e := evaluator.GEvalFromLogprobs(postMethod(t, s, req).alternatives(0), c, 0)
		if e.Score == nil {
			t.Fatalf("no estimate: %s", e.Problem)
		}
		return *e.Score
	}
	long, short := score(demoSamples()[0]), score(demoSamples()[1])
	if !(long > short) {
		t.Errorf("long engaging response %g, \"ok\" %g: want the long one higher", long, short)
	}
}
