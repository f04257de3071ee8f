package evaluator

import (
	"fmt"
	"strings"
)

// headingExamples opens the part of a prompt that shows labelled examples.
// It sits between the criterion and the samples to judge, so the simulated
// judge and the parsers, which look for the samples after it, never take an
// example for a sample to score.
const headingExamples = "# Scored examples"

// MaxExamples is the most labelled examples one criterion may carry: each
// one lengthens every prompt, and a handful is enough to show the scale.
const MaxExamples = 8

// writeExamples writes criterion c's labelled examples, if it has any, each
// with its fields, its score mapped from the rubric's range of c (where
// examples are scored: c.HumanScale) onto [lo, hi] (the range the prompt
// asks for) and the person's reason. Nothing is written for a criterion
// without examples, so prompts of rubrics without them are unchanged.
//
// A run's criterion judged on a method's own scale holds that scale in Lo
// and Hi and the rubric's in RubricScale (LLM-Eval's Prepare): mapping from
// Lo and Hi, as before, wrote a 1-to-5 rubric's example scored 4 as "scored
// 4" on LLM-Eval's 0 to 5 (and on 0 to 100), not 3.8 (or 75).
func writeExamples(b *strings.Builder, c Criterion, lo, hi float64) {
	if len(c.Examples) == 0 {
		return
	}
	b.WriteString(headingExamples + "\n")
	fmt.Fprintf(b, "A person has already scored these examples on %s. They show how the scale is meant; they are not part of what you judge.\n", c.Name)
	from := c.HumanScale()
	for i, ex := range c.Examples {
		score := ex.Score
		if from.Hi > from.Lo && (lo != from.Lo || hi != from.Hi) {
			score = lo + (ex.Score-from.Lo)/(from.Hi-from.Lo)*(hi-lo)
			score = float64(int64(score*10+0.5)) / 10 // one decimal is enough to read the scale
		}
		fmt.Fprintf(b, "Example %d, scored %s:\n", i+1, formatNumber(score))
		for _, f := range ex.Fields {
			v := strings.TrimSpace(f.Value)
			if v == "" {
				v = emptyValue
			}
			fmt.Fprintf(b, "%s: %s\n", f.Label, v)
		}
		if r := strings.TrimSpace(ex.Reason); r != "" {
			fmt.Fprintf(b, "Why: %s\n", r)
		}
	}
	b.WriteString("\n")
}
