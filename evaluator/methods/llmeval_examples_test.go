package methods

import (
	"context"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// TestLLMEvalPromptPutsExamplesOnItsScale: a rubric's labelled examples
// are scored on the rubric's range (an alignment stores the humans'
// ratings there), and LLM-Eval asks for scores on its own 0 to 5 or 0 to
// 100. The prompt a prepared run sent wrote a 1-to-5 criterion's example
// scored 4 as "scored 4" (Prepare had put LLM-Eval's range in the
// criterion's Lo and Hi, so the example looked already on it): the judge
// read the top of the rubric's scale as the middle of 0 to 5, and as 4 out
// of 100. Each example is now mapped from the rubric's range, as the
// prompt of an unprepared criterion did.
func TestLLMEvalPromptPutsExamplesOnItsScale(t *testing.T) {
	ex := func(score float64) evaluator.Example {
		return evaluator.Example{SampleID: "e1", Fields: []evaluator.Text{{Label: "Reply", Value: "Sure."}}, Score: score}
	}
	rub := evaluator.Rubric{Task: "a reply", Criteria: []evaluator.Criterion{
		{Name: "Helpful", Lo: 1, Hi: 5, Examples: []evaluator.Example{ex(4), ex(5)}},
		{Name: "Polite", Lo: 0, Hi: 2, Examples: []evaluator.Example{ex(0.5)}},
	}}
	tests := []struct {
		scale evaluator.LLMEvalScale
		want  []string
	}{
		{evaluator.LLMEvalFive, []string{"Example 1, scored 3.8:", "Example 2, scored 5:", "Example 1, scored 1.3:"}},
		{evaluator.LLMEvalHundred, []string{"Example 1, scored 75:", "Example 2, scored 100:", "Example 1, scored 25:"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.scale), func(t *testing.T) {
			ms := evaluator.DefaultMethodSettings()
			ms.LLMEvalScale = tt.scale
			r := Run{Settings: evaluator.DefaultSettings(), MethodSettings: ms, Rubric: rub}
			if err := (LLMEval{}).Prepare(&r); err != nil {
				t.Fatal(err)
			}
			var prompt string
			c := &completer{fn: func(req judge.Request) (judge.Response, error) {
				for _, m := range req.Messages {
					prompt += m.Content
				}
				return judge.Response{Choices: []judge.Choice{{Text: `{"Helpful": 3, "Polite": 2}`}}, Attempts: 1}, nil
			}}
			LLMEval{}.Judge(context.Background(), c, Unit{Run: r, Criteria: []int{0, 1}, Samples: []evaluator.Sample{{ID: "s1", Fields: []evaluator.Text{{Label: "Reply", Value: "No."}}}}, Memo: NewMemo(nil)})
			at := 0
			for _, w := range tt.want {
				i := strings.Index(prompt[at:], w)
				if i < 0 {
					t.Fatalf("the prompt lacks %q after %q:\n%s", w, prompt[max(at-40, 0):at], prompt)
				}
				at += i + len(w)
			}
		})
	}
}
