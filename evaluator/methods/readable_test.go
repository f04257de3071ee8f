package methods

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

// TestFewestReadableOutcome: a sampled unit (CloserLook, G-Eval without
// log-probabilities) whose 20 answers all came but of which only some could
// be read scored from the readable ones whatever their number (one rating
// of twenty). Under the run's fewest readable answers for a score (a share
// of the 20 asked for, rounded up) the score is missing, with the reason in
// its details and problems; a run stored without the setting (nil) keeps
// scoring from any one readable answer; none readable stays unreadable.
func TestFewestReadableOutcome(t *testing.T) {
	rub := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 1, Hi: 3}}}
	share := func(v float64) *float64 { return &v }
	tests := []struct {
		share    *float64
		readable int
		scored   bool
		tooFew   bool
	}{
		{nil, 1, true, false},
		{nil, 0, false, false},
		{share(0), 1, true, false},
		{share(0.5), 9, false, true},
		{share(0.5), 10, true, false},
		{share(0.5), 1, false, true},
		{share(0.5), 0, false, false},
		{share(0.3), 5, false, true}, // 0.3 of 20 is 6
		{share(0.3), 6, true, false},
		{share(1), 19, false, true},
		{share(1), 20, true, false},
	}
	for _, m := range []Method{CloserLook{}, GEval{}} {
		for _, tt := range tests {
			name := "none stored"
			if tt.share != nil {
				name = fmt.Sprintf("share %g", *tt.share)
			}
			t.Run(fmt.Sprintf("%s, %s, %d of 20 readable", m.Label(), name, tt.readable), func(t *testing.T) {
				c := &completer{fn: func(r judge.Request) (judge.Response, error) {
					var ch []judge.Choice
					for k := range r.N {
						text := "I would rather not say."
						if k < tt.readable {
							text = "Fine.\nRating: 2"
							if m.Name() == evaluator.MethodGEval {
								text = "2"
							}
						}
						ch = append(ch, judge.Choice{Text: text})
					}
					return judge.Response{Choices: ch, Attempts: 1}, nil
				}}
				ms := evaluator.DefaultMethodSettings()
				ms.Samples, ms.UseLogprobs = 20, false
				run := Run{Settings: evaluator.DefaultSettings(), MethodSettings: ms, Rubric: rub}
				if err := m.Prepare(&run); err != nil {
					t.Fatal(err)
				}
				// Prepare gives a new run the default; the case's share
				// stands for what the run stored.
				run.MethodSettings.MinReadableShare = tt.share
				o := m.Judge(context.Background(), c, Unit{Run: run, Criteria: []int{0}, Samples: []evaluator.Sample{{}}, Memo: NewMemo(nil)})
				if o.Failed || len(o.Scores) != 1 {
					t.Fatalf("failed %v, scores %v (problems %q)", o.Failed, o.Scores, o.Problems)
				}
				if got := o.Scores[0].Value != nil; got != tt.scored {
					t.Errorf("scored %v, want %v (problems %q)", got, tt.scored, o.Problems)
				}
				if tt.scored && *o.Scores[0].Value != 2 {
					t.Errorf("score %v, want 2", *o.Scores[0].Value)
				}
				got, _ := o.Details["too_few_readable"].(bool)
				if got != tt.tooFew {
					t.Errorf("too_few_readable %v, want %v (details %v)", got, tt.tooFew, o.Details)
				}
				said := strings.Contains(strings.Join(o.Problems, "\n"), fmt.Sprintf("only %d of the 20 answers asked for could be read", tt.readable))
				if said != tt.tooFew {
					t.Errorf("problems %q: the reason said %v, want %v", o.Problems, said, tt.tooFew)
				}
			})
		}
	}
	// A new run not told otherwise gets a half; one told 0 keeps 0.
	for _, tt := range []struct {
		given, want *float64
	}{{nil, share(0.5)}, {share(0), share(0)}, {share(0.75), share(0.75)}} {
		run := Run{Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(), Rubric: rub}
		run.MethodSettings.MinReadableShare = tt.given
		if err := (CloserLook{}).Prepare(&run); err != nil {
			t.Fatal(err)
		}
		if got := run.MethodSettings.MinReadableShare; got == nil || *got != *tt.want {
			t.Errorf("prepared share %v from %v, want %v", got, tt.given, *tt.want)
		}
	}
	// Methods that do not sample store none.
	run := Run{Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(), Rubric: rub}
	run.MethodSettings.MinReadableShare = share(0.5)
	if err := (LLMEval{}).Prepare(&run); err != nil {
		t.Fatal(err)
	}
	if run.MethodSettings.MinReadableShare != nil {
		t.Errorf("LLM-Eval stored a fewest readable answers %v", *run.MethodSettings.MinReadableShare)
	}
}
