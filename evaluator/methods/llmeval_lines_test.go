package methods

import (
	"context"
	"strconv"
	"strings"
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
		// llmeval44: a JSON object cut off or with a trailing comma
		// beside the lines lost every score; it is held against them.
		{"lines beside an object cut off", one, "Score: 3 {\"coherence\": ", []string{"3"}, []string{""}, 0},
		{"lines beside an object with a trailing comma", two, "{\"Coherence\": 2, \"Fluency\": 4,}\nCoherence: 2 - jumps.\nFluency: 4", []string{"2", "4"}, []string{"jumps.", ""}, 0},
		{"a line the broken object contradicts stays missing", two, "{\"Coherence\": 2, \"Fluency\": 4,}\nCoherence: 3\nFluency: 4", []string{"missing", "4"}, []string{"", ""}, 1},
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

// TestLLMEvalNotesSayWhatIsRead: the method's note, its settings term and
// its estimate said LLM-Eval answers "as JSON" while score lines were read
// too (llmeval44). Each now says both, and the example line the note
// gives is one the reader takes.
func TestLLMEvalNotesSayWhatIsRead(t *testing.T) {
	r := Run{Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(),
		Rubric: evaluator.Rubric{Task: "t", Criteria: []evaluator.Criterion{{Name: "Criterion", Lo: 1, Hi: 5}}}}
	if err := (LLMEval{}).Prepare(&r); err != nil {
		t.Fatal(err)
	}
	var terms []string
	for _, part := range (LLMEval{}).Summary(r) {
		for _, term := range part.Terms {
			terms = append(terms, term.Meaning)
		}
	}
	est := LLMEval{}.Estimate(EstimateInput{Run: r, Rows: 3, First: []evaluator.Sample{{}}})
	for _, tt := range []struct{ name, text string }{
		{"note", LLMEval{}.Note()},
		{"settings term", strings.Join(terms, " ")},
		{"estimate", est.CallsNote},
	} {
		if !strings.Contains(tt.text, "JSON object") || !strings.Contains(tt.text, "lines") || strings.Contains(tt.text, "at once as JSON") {
			t.Errorf("%s: %q should say the judge is asked for a JSON object and that score lines are read too", tt.name, tt.text)
		}
	}
	if s, _, p := evaluator.ParseLLMEvalAnswer("Criterion: 3", r.Rubric, r.MethodSettings.LLMEvalScale); s[0] == nil || *s[0] != 3 {
		t.Errorf("the note's example line is not read: %v %q", s, p)
	}
}
