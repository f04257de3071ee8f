package simjudge

import (
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

func llmevalRubric() evaluator.Rubric {
	r := rubric(criterion("Engagingness", 1, 3))
	r.Criteria = append(r.Criteria, criterion("Coherence", 1, 3), criterion("Naturalness", 1, 5), criterion(`Tone "overall"`, 0, 1))
	return r
}

func TestLLMEvalAnswerParses(t *testing.T) {
	s := startServer(t, Options{Seed: 6})
	r := llmevalRubric()
	tests := []struct {
		name     string
		scale    evaluator.LLMEvalScale
		format   map[string]any // response_format, nil for none
		wantBare bool
	}{
		{"0-5 plain", evaluator.LLMEvalFive, nil, false},
		{"0-100 plain", evaluator.LLMEvalHundred, nil, false},
		{"0-5 json_object", evaluator.LLMEvalFive, map[string]any{"type": "json_object"}, true},
		{"0-100 json_schema", evaluator.LLMEvalHundred, map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": "scores", "strict": true, "schema": evaluator.LLMEvalSchema(r, evaluator.LLMEvalHundred)}}, true},
	}
	for _, tt := range tests {
		lo, hi := tt.scale.Range()
		for si, smp := range demoSamples() {
			msgs := evaluator.BuildLLMEvalPrompt(r, smp, tt.scale)
			req := methodRequest(msgs, 0, 1)
			if tt.format != nil {
				req["response_format"] = tt.format
			}
			resp := postMethod(t, s, req)
			text := resp.Choices[0].Message.Content
			scores, _, problems := evaluator.ParseLLMEvalAnswer(text, r, tt.scale)
			if len(problems) != 0 || len(scores) != len(r.Criteria) {
				t.Errorf("%s, sample %d: problems %q in answer:\n%s", tt.name, si, problems, text)
				continue
			}
			for i, sc := range scores {
				if sc == nil || *sc < lo || *sc > hi {
					t.Errorf("%s, sample %d: %s score %v outside [%g, %g]", tt.name, si, r.Criteria[i].Name, sc, lo, hi)
				} else if tt.scale == evaluator.LLMEvalHundred && *sc != math.Trunc(*sc) {
					t.Errorf("%s, sample %d: %s score %g is not an integer", tt.name, si, r.Criteria[i].Name, *sc)
				}
			}
			bare := strings.HasPrefix(text, "{") && strings.HasSuffix(text, "}")
			if bare != tt.wantBare {
				t.Errorf("%s: bare JSON %v, want %v:\n%s", tt.name, bare, tt.wantBare, text)
			}
			if !tt.wantBare && !strings.Contains(text, "Simulated judge") {
				t.Errorf("%s: the wrapped answer does not say it is simulated:\n%s", tt.name, text)
			}
			checkUsage(t, tt.name, msgs, resp)
		}
	}
}

func TestLLMEvalMissRateLeavesCriteriaOut(t *testing.T) {
	s := startServer(t, Options{Seed: 3, MissRate: 0.5})
	r := llmevalRubric()
	missing := 0
	for _, smp := range demoSamples() {
		msgs := evaluator.BuildLLMEvalPrompt(r, smp, evaluator.LLMEvalFive)
		scores, _, problems := evaluator.ParseLLMEvalAnswer(postMethod(t, s, methodRequest(msgs, 0, 1)).Choices[0].Message.Content, r, evaluator.LLMEvalFive)
		for i, sc := range scores {
			if sc == nil {
				missing++
				if !strings.Contains(strings.Join(problems, "\n"), r.Criteria[i].Name+": missing") {
					t.Errorf("%s missing without a problem line: %q", r.Criteria[i].Name, problems)
				}
			}
		}
	}
	if total := len(r.Criteria) * len(demoSamples()); missing == 0 || missing == total {
		t.Errorf("MissRate 0.5 left out %d of %d scores: want some but not all", missing, total)
	}
}
