package methods

import (
	"fmt"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestEverySettingsPartIsExplained: every part of every method's settings
// summary, for every value its settings may take, either names its terms
// of art with what they mean or says it needs no explanation, so a setting
// added to a summary without an explanation fails here instead of going
// unexplained on the run page.
func TestEverySettingsPartIsExplained(t *testing.T) {
	var runs []Run
	for _, p := range []evaluator.Procedure{evaluator.OneStage, evaluator.TwoStage, evaluator.ThreeStage} {
		for _, c := range []evaluator.Composition{evaluator.Random, evaluator.Homogeneous, evaluator.Heterogeneous} {
			for _, k := range []evaluator.SortKey{evaluator.SortByPrevious, evaluator.SortByMean} {
				for _, sc := range []evaluator.Scoring{evaluator.Decimal, evaluator.Integer} {
					for _, logprobs := range []bool{true, false} {
						for _, scale := range []evaluator.LLMEvalScale{evaluator.LLMEvalFive, evaluator.LLMEvalHundred} {
							s, ms := evaluator.DefaultSettings(), evaluator.DefaultMethodSettings()
							s.Procedure, s.Composition, s.SortKey, s.Scoring = p, c, k, sc
							ms.UseLogprobs, ms.LLMEvalScale, ms.CloserLookScoring = logprobs, scale, sc
							runs = append(runs, Run{Settings: s, MethodSettings: ms})
						}
					}
				}
			}
		}
	}
	for _, m := range All() {
		for _, r := range runs {
			if err := r.Settings.Validate(); err != nil {
				t.Fatalf("case is not a valid run: %v", err)
			}
			prepared := r
			if err := m.Prepare(&prepared); err != nil {
				t.Fatalf("%s: prepare: %v", m.Name(), err)
			}
			for _, run := range []Run{r, prepared} {
				sum := m.Summary(run)
				if len(sum) == 0 {
					t.Fatalf("%s: no settings summary", m.Name())
				}
				for i, part := range sum {
					where := fmt.Sprintf("%s part %d %q", m.Name(), i, part.Text)
					switch {
					case strings.TrimSpace(part.Text) == "":
						t.Errorf("%s: no text", where)
					case part.Plain && len(part.Terms) > 0:
						t.Errorf("%s: plain yet explains %v", where, part.Terms)
					case !part.Plain && len(part.Terms) == 0:
						t.Errorf("%s: names a setting nobody explains: give it its terms and their meaning, or mark it plain", where)
					}
					for _, term := range part.Terms {
						if strings.TrimSpace(term.Term) == "" || strings.TrimSpace(term.Meaning) == "" {
							t.Errorf("%s: term %q has meaning %q", where, term.Term, term.Meaning)
						}
					}
				}
			}
		}
	}
}

// TestSummaryLineAndTerms: Line joins the parts' texts with " · ", and
// Terms lists every part's terms in the line's order.
func TestSummaryLineAndTerms(t *testing.T) {
	a, b := Term{"A", "a means"}, Term{"B", "b means"}
	for _, tt := range []struct {
		name  string
		sum   Summary
		line  string
		terms []Term
	}{
		{"empty", nil, "", nil},
		{"one plain", Summary{plain("cap $5.00")}, "cap $5.00", nil},
		{"mixed", Summary{explained("x 1", a, b), plain("y 2"), explained("z 3", a)}, "x 1 · y 2 · z 3", []Term{a, b, a}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sum.Line(); got != tt.line {
				t.Errorf("line %q, want %q", got, tt.line)
			}
			if got := tt.sum.Terms(); fmt.Sprint(got) != fmt.Sprint(tt.terms) {
				t.Errorf("terms %v, want %v", got, tt.terms)
			}
		})
	}
}
