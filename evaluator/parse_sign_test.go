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

// Regression (fix-parse28): the minus sign U+2212 ("−2") was unreadable in
// score lists and CloserLook ratings, and G-Eval's form read "Sentiment:
// −2" as 2; a full-width digit after an ASCII one ("1２") was read as 1.
// Both are now read as the number written.
func TestUnicodeMinusAndFullWidthDigits(t *testing.T) {
	neg := Criterion{Name: "Sentiment", Lo: -2, Hi: 2}
	ten := Criterion{Name: "Quality", Lo: 0, Hi: 20}
	a := ParseBatchAnswer("Sample1 is cold.\nFloat Scores: [Sample1: −2, Sample2: −0.5, Sample3 −1]", 3, neg)
	if got := formatScores(a.Scores); got != "-2 -0.5 -1" || len(a.Problems) != 0 {
		t.Errorf("U+2212 in a score list: %s %q, want -2 -0.5 -1", got, a.Problems)
	}
	a = ParseBatchAnswer("Scores:\nSample1：１２\nSample2: 1２\nSample３: ７.５", 3, ten)
	if got := formatScores(a.Scores); got != "12 12 7.5" || len(a.Problems) != 0 {
		t.Errorf("full-width digits: %s %q, want 12 12 7.5", got, a.Problems)
	}
	a = ParseBatchAnswer("Scores:\nSample1: −3\nSample2: 4\nSample3: 5", 3, ten)
	if got := formatScores(a.Scores); got != "- 4 5" || !slices.Equal(a.Problems, []string{"Sample1: -3 is outside [0, 20]"}) {
		t.Errorf("U+2212 on [0, 20]: %s %q", got, a.Problems)
	}
	if s, _, p := ParseAnalyzeRate("Hostile.\nRating: −2", neg); s == nil || *s != -2 {
		t.Errorf("CloserLook U+2212: %s %q, want -2", formatScores([]*float64{s}), p)
	}
	if s, _, p := ParseAnalyzeRate("Good.\nRating: 1２", ten); s == nil || *s != 12 {
		t.Errorf("CloserLook 1２: %s %q, want 12", formatScores([]*float64{s}), p)
	}
	if e := GEvalFromSamples([]string{"Sentiment: −2", "−1"}, neg); e.Score == nil || *e.Score != -1.5 {
		t.Errorf("G-Eval U+2212: %s %q, want -1.5", formatScores([]*float64{e.Score}), e.Problem)
	}
	if e := GEvalFromSamples([]string{"Quality: 1２"}, ten); e.Score == nil || *e.Score != 12 {
		t.Errorf("G-Eval 1２: %s %q, want 12", formatScores([]*float64{e.Score}), e.Problem)
	}
}

// Regression (fix-parse28): a score followed by a different one said to
// replace it ("Score: 2, revised: 1") was read as the first, and
// CloserLook read "Rating: [-1, 0, 2]" as -1. Which one the judge stands
// by cannot be told: the score is missing, with the reason. A remark with
// a number in it, or the same score restated, is not a revision.
func TestRevisedOrListedScoresAreNotRead(t *testing.T) {
	neg := Criterion{Name: "Sentiment", Lo: -2, Hi: 2}
	c13 := Criterion{Name: "Coherence", Lo: 1, Hi: 3}
	a := ParseBatchAnswer("Scores:\nSample1: 2, revised: 1\nSample2: 3 (corrected to 2)\nSample3: 2 -> 1\nSample4: 2 (the last turn has 3 errors)\nSample5: 2 (revised: 2)", 5, c13)
	wantProblems := []string{
		`Sample1: "2, revised: 1" gives a second score after the first, so which one stands cannot be told`,
		`Sample2: "3 (corrected to 2" gives a second score after the first, so which one stands cannot be told`,
		`Sample3: "2 -> 1" gives a second score after the first, so which one stands cannot be told`,
	}
	if got := formatScores(a.Scores); got != "- - - 2 2" || !slices.Equal(a.Problems, wantProblems) {
		t.Errorf("BatchEval: %s %q, want - - - 2 2 %q", got, a.Problems, wantProblems)
	}
	a = ParseBatchAnswer("Float Scores: [Sample1: 2, Sample2: 1, Sample3: 3]", 3, c13)
	if got := formatScores(a.Scores); got != "2 1 3" || len(a.Problems) != 0 {
		t.Errorf("a plain list: %s %q", got, a.Problems)
	}

	rate := []struct {
		text, score, problem string
	}{
		{"Fine.\nScore: 2, revised: 1", "-", `the rating "2, revised: 1" gives a second score after the first, so which one stands cannot be told`},
		{"Fine.\nRating: 2 → 1", "-", `the rating "2 → 1" gives a second score after the first, so which one stands cannot be told`},
		{"Mixed.\nRating: [-1, 0, 2]", "-", `the rating "[-1, 0, 2]" is a list of numbers, not one rating`},
		{"Mixed.\nRating: [-1]", "-1", ""},
		{"Fine.\nRating: 2 (the last turn has 3 errors)", "2", ""},
	}
	for _, tt := range rate {
		score, _, problem := ParseAnalyzeRate(tt.text, neg)
		if got := formatScores([]*float64{score}); got != tt.score || problem != tt.problem {
			t.Errorf("CloserLook %q: %s %q, want %s %q", tt.text, got, problem, tt.score, tt.problem)
		}
	}

	if e := GEvalFromSamples([]string{"Coherence: 2, revised: 1", "Score: 3 -> 2", "Coherence: 3"}, c13); e.Score == nil || *e.Score != 3 || e.Used != 1 {
		t.Errorf("G-Eval: %s used %d, want 3 from 1", formatScores([]*float64{e.Score}), e.Used)
	}
}

// Regression (fix-parse28): an en or em dash written against the digits
// ("Sample1 –2", "Rating –2", G-Eval's "Sentiment: –2") was read as a
// separator, so on [-2, 2] a judge who meant -2 got 2. It may be either,
// so it is read only when one reading is on the scale; with blanks around
// it, it is a separator as before.
func TestEnDashAgainstDigits(t *testing.T) {
	neg := Criterion{Name: "Sentiment", Lo: -2, Hi: 2}
	c13 := Criterion{Name: "Sentiment", Lo: 1, Hi: 3}
	a := ParseBatchAnswer("Scores:\nSample1 –2\nSample2 – 2\nSample3—1", 3, neg)
	want := []string{
		`Sample1: "–2" has a dash against the digits, so it may be -2 or 2 (a dash or a minus), both on the scale [-2, 2]`,
		`Sample3: "—1" has a dash against the digits, so it may be -1 or 1 (a dash or a minus), both on the scale [-2, 2]`,
	}
	if got := formatScores(a.Scores); got != "- 2 -" || !slices.Equal(a.Problems, want) {
		t.Errorf("BatchEval on [-2, 2]: %s %q, want - 2 - %q", got, a.Problems, want)
	}
	if a := ParseBatchAnswer("Scores:\nSample1 –2\nSample2 – 2\nSample3—1", 3, c13); formatScores(a.Scores) != "2 2 1" || len(a.Problems) != 0 {
		t.Errorf("BatchEval on [1, 3]: %s %q, want 2 2 1", formatScores(a.Scores), a.Problems)
	}
	if s, _, p := ParseAnalyzeRate("Cold.\nRating –2", neg); s != nil || p != `the rating "–2" has a dash against the digits, so it may be -2 or 2 (a dash or a minus), both on the scale [-2, 2]` {
		t.Errorf("CloserLook on [-2, 2]: %s %q", formatScores([]*float64{s}), p)
	}
	if s, _, p := ParseAnalyzeRate("Warm.\nRating – 2", neg); s == nil || *s != 2 {
		t.Errorf("CloserLook separator: %s %q, want 2", formatScores([]*float64{s}), p)
	}
	if e := GEvalFromSamples([]string{"Sentiment: –2", "–1", "Sentiment – 2"}, neg); e.Score == nil || *e.Score != 2 || e.Used != 1 {
		t.Errorf("G-Eval on [-2, 2]: %s used %d, want 2 from 1", formatScores([]*float64{e.Score}), e.Used)
	}
	if e := GEvalFromSamples([]string{"Sentiment: –2", "–1"}, c13); e.Score == nil || *e.Score != 1.5 || e.Used != 2 {
		t.Errorf("G-Eval on [1, 3]: %s used %d, want 1.5 from 2", formatScores([]*float64{e.Score}), e.Used)
	}
	tokens := []TokenAlternatives{{Token: "Sentiment"}, {Token: ":"}, {Token: " –"}, {Token: "2", Top: []TokenProb{{"2", 0}}}}
	if e := GEvalFromLogprobs(tokens, neg, 0); e.Score != nil ||
		e.Problem != `the judge's answer "–2" has a dash against the digits, so it may be -2 or 2 (a dash or a minus), both on the scale [-2, 2]` {
		t.Errorf("G-Eval logprobs on [-2, 2]: %s %q", formatScores([]*float64{e.Score}), e.Problem)
	}
}

// Regression (fix-parse28): a typeset minus sign in LLM-Eval's JSON
// ({"Coherence": −1}) made the whole answer invalid JSON, so every
// criterion was lost. It is a minus: -1 is out of LLM-Eval's range, and
// the other criteria are read.
func TestLLMEvalTypesetMinus(t *testing.T) {
	r := Rubric{Criteria: []Criterion{{Name: "Coherence"}, {Name: "Fluency"}}}
	s, reasons, p := ParseLLMEvalAnswer(`{"Coherence": −1, "Fluency": {"score": 4.5, "reason": "reads well, −2 for typos"}}`, r, LLMEvalFive)
	if got := formatScores(s); got != "- 4.5" || !slices.Equal(p, []string{"Coherence: -1 is outside [0, 5]"}) {
		t.Errorf("scores %s, problems %q; want - 4.5 and Coherence: -1 is outside [0, 5]", got, p)
	}
	if reasons[1] != "reads well, −2 for typos" { // a reason's text is left as written
		t.Errorf("reason %q", reasons[1])
	}
}
