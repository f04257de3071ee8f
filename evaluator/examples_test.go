package evaluator

import (
	"strings"
	"testing"
)

func TestEveryMethodPromptShowsTheCriterionExamples(t *testing.T) {
	plain := Criterion{Name: "Helpful", Description: "Does it help?", Lo: 1, Hi: 5}
	withEx := plain
	withEx.Examples = []Example{{SampleID: "e7", Fields: []Text{{Label: "Answer", Value: "It is in <b>France</b>."}}, Score: 4, Reason: "right, terse"}}
	sample := Sample{ID: "s1", Fields: []Text{{Label: "Answer", Value: "No idea."}}}
	build := map[string]func(c Criterion) []Message{
		"batcheval": func(c Criterion) []Message {
			return BuildBatchPrompt(Rubric{Task: "an answer", Criteria: []Criterion{c}}, c, []Sample{sample}, DefaultSettings())
		},
		"geval form": func(c Criterion) []Message {
			return BuildGEvalFormPrompt(Rubric{Task: "an answer", Criteria: []Criterion{c}}, c, "1. Read.", sample)
		},
		"closerlook": func(c Criterion) []Message {
			return BuildAnalyzeRatePrompt(Rubric{Task: "an answer", Criteria: []Criterion{c}}, c, sample, Integer)
		},
		"llmeval 0-5": func(c Criterion) []Message {
			return BuildLLMEvalPrompt(Rubric{Task: "an answer", Criteria: []Criterion{c}}, sample, LLMEvalFive)
		},
	}
	// On LLM-Eval's 0-5 scale the example's 4 on [1, 5] reads as 3.8.
	wantScore := map[string]string{"batcheval": "Example 1, scored 4:", "geval form": "Example 1, scored 4:",
		"closerlook": "Example 1, scored 4:", "llmeval 0-5": "Example 1, scored 3.8:"}
	for name, b := range build {
		t.Run(name, func(t *testing.T) {
			without := b(plain)[1].Content
			if strings.Contains(without, headingExamples) {
				t.Fatalf("a criterion without examples still got an examples part:\n%s", without)
			}
			got := b(withEx)[1].Content
			for _, want := range []string{headingExamples, wantScore[name], "Answer: It is in <b>France</b>.", "Why: right, terse"} {
				if !strings.Contains(got, want) {
					t.Errorf("prompt lacks %q:\n%s", want, got)
				}
			}
			// The examples come before the sample to judge, never after it.
			if ex, smp := strings.Index(got, headingExamples), strings.LastIndex(got, "No idea."); ex > smp {
				t.Errorf("examples at %d come after the sample at %d", ex, smp)
			}
		})
	}
}
