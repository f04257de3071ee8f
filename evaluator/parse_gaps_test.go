package evaluator

import (
	"fmt"
	"slices"
	"testing"
)

// Regression (fix-parse29): an answer that wrote "Score of SampleK: x"
// lines in its analysis (the one-stage format) and then a score list (the
// two-stage format) was read from the list alone, so a sample the two
// scored differently silently got the list's score. Which one the judge
// stands by cannot be told: as with two lists, the sample keeps none and
// the problem names both values. Where they agree the score is read as
// before, and the analyses are split as before.
func TestScoreOfLinesAndListMustAgree(t *testing.T) {
	c13 := Criterion{Name: "Coherence", Lo: 1, Hi: 3}
	both := "Sample1: stays on topic.\nScore of Sample1: 3\nSample2: drifts.\nScore of Sample2: 2\nSample3: off topic.\nScore of Sample3: 1\n\n" +
		"Float Scores: [Sample1: 3, Sample2: %s, Sample3: 1]"

	a := ParseBatchAnswer(fmt.Sprintf(both, "1"), 3, c13)
	want := []string{
		`the answer's "Score of" lines and its score list disagree; a sample they score differently keeps no score`,
		"Sample2: given 2 different scores (2, 1); none kept",
	}
	if got := formatScores(a.Scores); got != "3 - 1" || !slices.Equal(a.Problems, want) {
		t.Errorf("disagreeing: %s %q, want 3 - 1 %q", got, a.Problems, want)
	}
	if !slices.Equal(a.Analyses, []string{"stays on topic.", "drifts.", "off topic."}) {
		t.Errorf("analyses %q", a.Analyses)
	}

	a = ParseBatchAnswer(fmt.Sprintf(both, "2"), 3, c13)
	if got := formatScores(a.Scores); got != "3 2 1" || len(a.Problems) != 0 {
		t.Errorf("agreeing: %s %q, want 3 2 1", got, a.Problems)
	}
	if !slices.Equal(a.Analyses, []string{"stays on topic.", "drifts.", "off topic."}) {
		t.Errorf("analyses %q", a.Analyses)
	}

	// A "Score of" line for a sample the list leaves out fills the gap
	// (one score, no conflict); an out-of-range line still conflicts.
	a = ParseBatchAnswer("Score of Sample1: 2\nScore of Sample2: 4\nScores:\nSample2: 3\nSample3: 1", 3, c13)
	want = []string{
		`the answer's "Score of" lines and its score list disagree; a sample they score differently keeps no score`,
		"Sample2: given 2 different scores (4, 3); none kept",
	}
	if got := formatScores(a.Scores); got != "2 - 1" || !slices.Equal(a.Problems, want) {
		t.Errorf("partial: %s %q, want 2 - 1 %q", got, a.Problems, want)
	}

	// A decimal written two ways is one score.
	a = ParseBatchAnswer("Score of Sample1: 2.50\nFloat Scores: [Sample1: 2.5]", 1, c13)
	if got := formatScores(a.Scores); got != "2.5" || len(a.Problems) != 0 {
		t.Errorf("2.50 and 2.5: %s %q", got, a.Problems)
	}
}
