package evaluator

import (
	"slices"
	"testing"
)

// Regression (fix-parse28): on a criterion of scale [-2, 2] the per-sample
// line "Sample3 -2" was read as 2: the score lists, "Score of" lines and
// CloserLook's "Rating -2" took the dash for a separator and lost the sign.
// On [0, 10] "Sample3 -3" was read as 3 instead of out of range. A dash
// with a blank after it is still a separator ("Sample3 - 2"), and one
// against both the label and the digits ("Sample3-2") is read only when
// one of its two readings is on the scale (dashSign).
func TestNegativeScoresKeepTheirSign(t *testing.T) {
	neg := Criterion{Name: "Sentiment", Lo: -2, Hi: 2}
	ten := Criterion{Name: "Quality", Lo: 0, Hi: 10}
	c13 := Criterion{Name: "Engagingness", Lo: 1, Hi: 3}
	batch := []struct {
		name     string
		text     string
		c        Criterion
		scores   string
		problems []string // exactly these, in order
	}{
		{"per-sample lines keep the minus", "Scores:\nSample1 -2\nSample2 -1.5\nSample3 -2", neg, "-2 -1.5 -2", nil},
		{"a dash between blanks is a separator", "Scores:\nSample1 - 2\nSample2 - -1\nSample3 – 1", neg, "2 -1 1", nil},
		{"bullets are not signs", "Scores:\n- Sample1: 2\n- Sample2 -1\n- Sample3: -2/2", neg, "2 -1 -2", nil},
		{"bracket list with a minus after a blank", "Float Scores: [Sample1: 1, Sample2 -1, Sample3:-0.5]", neg, "1 -1 -0.5", nil},
		{"one-stage score lines", "Good.\nScore of Sample1 -2\nFine.\nScore of Sample2 - 1\nBad.\nScore of Sample3: -1", neg, "-2 1 -1", nil},
		{"a dash against label and digits, both readings on the scale", "Scores:\nSample1-2\nSample2: 1\nSample3: 0", neg, "- 1 0",
			[]string{`Sample1: "-2" follows the label with no space, so it may be -2 or 2 (a dash or a minus), both on the scale [-2, 2]`}},
		{"a dash against label and digits, one reading on the scale", "Scores:\nSample1-2\nSample2-3\nSample3-0", c13, "2 3 -",
			[]string{"Sample3: 0 is outside [1, 3]"}},
		{"a minus on [0, 10] is out of range, not 3", "Scores:\nSample1 -3\nSample2: 7\nScore of Sample3 -4", ten, "- 7 -",
			[]string{"Sample1: -3 is outside [0, 10]", "Sample3: -4 is outside [0, 10]"}},
		{"one-stage minus on [0, 10]", "Score of Sample1 -3\nScore of Sample2: 4\nScore of Sample3 - 5", ten, "- 4 5",
			[]string{"Sample1: -3 is outside [0, 10]"}},
		{"a range stays unreadable", "Scores:\nSample1: 3-4\nSample2 -1-2\nSample3: 2", neg, "- - 2",
			[]string{`Sample1: "3-4" gives two numbers (a range or a choice), not one score`, `Sample2: "-1-2" gives two numbers (a range or a choice), not one score`}},
		{"a scale note after the score", "Scores:\nSample1: 2 (out of -2 to 2)\nSample2 -1 (on -2 to 2)\nSample3: 0", neg, "2 -1 0", nil},
	}
	for _, tt := range batch {
		a := ParseBatchAnswer(tt.text, 3, tt.c)
		if got := formatScores(a.Scores); got != tt.scores {
			t.Errorf("%s: scores %s, want %s (problems %q)", tt.name, got, tt.scores, a.Problems)
		}
		if !slices.Equal(a.Problems, tt.problems) {
			t.Errorf("%s: problems %q, want %q", tt.name, a.Problems, tt.problems)
		}
	}

	rate := []struct {
		name    string
		text    string
		c       Criterion
		score   string
		problem string
	}{
		{"rating with a minus after a blank", "Hostile.\nRating -2", neg, "-2", ""},
		{"rating after a colon", "Cold.\nRating: -1.5", neg, "-1.5", ""},
		{"a dash between blanks is a separator", "Warm.\nRating - 2", neg, "2", ""},
		{"out of the scale's maximum", "Hostile.\nRating: -2/2", neg, "-2", ""},
		{"a dash against label and digits", "Hostile.\nRating-2", neg, "-",
			`the rating "-2" follows the label with no space, so it may be -2 or 2 (a dash or a minus), both on the scale [-2, 2]`},
		{"a minus on [0, 10] is out of range", "Poor.\nRating -3", ten, "-", "the rating -3 is outside [0, 10]"},
		{"a dash against label and digits on [0, 10]", "Poor.\nRating-3", ten, "3", ""},
		{"a scale note after the rating", "Warm.\nRating: 2 (out of -2 to 2)", neg, "2", ""},
	}
	for _, tt := range rate {
		score, _, problem := ParseAnalyzeRate(tt.text, tt.c)
		if got := formatScores([]*float64{score}); got != tt.score {
			t.Errorf("CloserLook %s: score %s, want %s (problem %q)", tt.name, got, tt.score, problem)
		}
		if problem != tt.problem {
			t.Errorf("CloserLook %s: problem %q, want %q", tt.name, problem, tt.problem)
		}
	}

	// G-Eval's form and LLM-Eval's JSON already read the sign.
	if e := GEvalFromSamples([]string{"- Sentiment: -2", "-1", "Sentiment -1"}, neg); e.Score == nil || *e.Score != -4.0/3 {
		t.Errorf("G-Eval: score %s, want -1.333 (problem %q)", formatScores([]*float64{e.Score}), e.Problem)
	}
	if e := GEvalFromSamples([]string{"- Quality: -3"}, ten); e.Score != nil {
		t.Errorf("G-Eval: -3 on [0, 10] read as %g", *e.Score)
	}
	r := Rubric{Criteria: []Criterion{{Name: "Quality"}}}
	if s, _, p := ParseLLMEvalAnswer(`{"Quality": -1}`, r, LLMEvalFive); s[0] != nil || !slices.Equal(p, []string{"Quality: -1 is outside [0, 5]"}) {
		t.Errorf("LLM-Eval: %s %q", formatScores(s), p)
	}
}
