package evaluator

import (
	"strings"
	"testing"
)

// TestReasoningModelsThinkingIsNotTheAnswer: a reasoning model served
// through Ollama's, llama.cpp's or vLLM's OpenAI-compatible API writes its
// thinking in the answer, between <think> and </think>, drafting scores it
// then revises (regression: the draft and the final score list disagreed,
// so every sample of the batch was unreadable, and Sample1's analysis began
// with "<think>"). The answer after the block is read; an answer that is
// all thinking (cut off) says so; a block in the middle of an answer is
// not touched.
func TestReasoningModelsThinkingIsNotTheAnswer(t *testing.T) {
	c := Criterion{Name: "Engaging", Lo: 1, Hi: 5}
	draft := "Okay, Sample1 seems decent, maybe 3. Sample2 is weak. A first guess: Float Scores: [Sample1:3, Sample2:2]. Hmm, Sample1 is better than that."
	final := "Sample1: The reply is warm and engaging.\nSample2: The reply is flat.\n\nFloat Scores: [Sample1:4.2, Sample2:1.8]"
	tests := []struct {
		name      string
		text      string
		want      []float64 // nil: no scores
		wantProbl string
	}{
		{"think block", "<think>\n" + draft + "\n</think>\n\n" + final, []float64{4.2, 1.8}, ""},
		{"opened by the template", draft + "\n</think>\n\n" + final, []float64{4.2, 1.8}, ""},
		{"thinking tag", "<thinking>" + draft + "</thinking>" + final, []float64{4.2, 1.8}, ""},
		{"cut off while thinking", "<think>\n" + draft, nil, "only the model's reasoning"},
		{"no block", final, []float64{4.2, 1.8}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := ParseBatchAnswer(tt.text, 2, c)
			for i, w := range tt.want {
				if a.Scores[i] == nil || *a.Scores[i] != w {
					t.Fatalf("scores %v, problems %q: want %v", a.Scores, a.Problems, tt.want)
				}
			}
			if tt.want == nil && (a.Scores[0] != nil || a.Scores[1] != nil) {
				t.Fatalf("scores %v from an answer that is all thinking", a.Scores)
			}
			if tt.wantProbl != "" && (len(a.Problems) == 0 || !strings.Contains(a.Problems[0], tt.wantProbl)) {
				t.Errorf("problems %q, want %q", a.Problems, tt.wantProbl)
			}
			if tt.wantProbl == "" && len(a.Problems) > 0 {
				t.Errorf("problems %q", a.Problems)
			}
			if strings.Contains(a.Analyses[0], "think") {
				t.Errorf("Sample1's analysis %q holds the thinking", a.Analyses[0])
			}
		})
	}
	// The other methods' answers too.
	if v, _, p := ParseAnalyzeRate("<think>Rating: 1? no.</think>\nThe reply is fine.\nRating: 4", c); v == nil || *v != 4 {
		t.Errorf("CloserLook read %v (%s), want 4", v, p)
	}
	if s, _, p := ParseLLMEvalAnswer("<think>{\"Engaging\": 1}</think>\n{\"Engaging\": 4}", Rubric{Criteria: []Criterion{c}}, LLMEvalFive); len(s) != 1 || s[0] == nil || *s[0] != 4 {
		t.Errorf("LLM-Eval read %v (%q), want 4", s, p)
	}
	// A block in the middle is the answer's own text.
	if got, only := StripReasoning("Float Scores: [Sample1:4] <think>x</think>"); only || got != "Float Scores: [Sample1:4] <think>x</think>" {
		t.Errorf("StripReasoning changed an answer with a block in its middle: %q", got)
	}
}
