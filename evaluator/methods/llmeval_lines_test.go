package methods

import (
	"context"
	"strconv"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// TestLLMEvalReadsScoreLines: a judge that answers LLM-Eval's prompt with
// "Score: N" (one criterion) or "<criterion>: N" lines instead of the JSON
// object lost every score (explore43: 40 of 40 missing). Each is read now,
// with the explanation after it as the score's analysis; a range stays
// missing with its problem.
func TestLLMEvalReadsScoreLines(t *testing.T) {
	one := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 1, Hi: 5}}}
	two := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 1, Hi: 5}, {Name: "Fluency", Lo: 1, Hi: 5}}}
	tests := []struct {
		name     string
		rubric   evaluator.Rubric
		answer   string
		scores   []string
		analyses []string
		problems int
	}{
		{"Score: N for one criterion", one, "Score: 4 - stays on topic.", []string{"4"}, []string{"stays on topic."}, 0},
		{"criterion lines, bold, another order", two, "**Fluency:** 3.5\n**Coherence:** 2", []string{"2", "3.5"}, []string{"", ""}, 0},
		{"a range stays missing", two, "Coherence: 2-3\nFluency: 4", []string{"missing", "4"}, []string{"", ""}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &completer{fn: func(judge.Request) (judge.Response, error) {
				return judge.Response{Choices: []judge.Choice{{Text: tt.answer}}, Attempts: 1}, nil
			}}
			r := Run{Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(), Rubric: tt.rubric}
			if err := (LLMEval{}).Prepare(&r); err != nil {
				t.Fatal(err)
			}
			crits := make([]int, len(tt.rubric.Criteria))
			for i := range crits {
				crits[i] = i
			}
			o := LLMEval{}.Judge(context.Background(), c, Unit{Run: r, Criteria: crits, Samples: []evaluator.Sample{{}}, Memo: NewMemo(nil)})
			if o.Failed || len(o.Scores) != len(tt.scores) || len(o.Problems) != tt.problems {
				t.Fatalf("failed %v, %d scores, problems %q; want %d scores, %d problems", o.Failed, len(o.Scores), o.Problems, len(tt.scores), tt.problems)
			}
			for i, sc := range o.Scores {
				got := "missing"
				if sc.Value != nil {
					got = strconv.FormatFloat(*sc.Value, 'g', -1, 64)
				}
				if got != tt.scores[i] || sc.Analysis != tt.analyses[i] {
					t.Errorf("criterion %d: score %s, analysis %q; want %s, %q", i, got, sc.Analysis, tt.scores[i], tt.analyses[i])
				}
			}
		})
	}
}
