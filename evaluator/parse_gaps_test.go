package evaluator

import (
	"fmt"
	"math"
	"slices"
	"strings"
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

// Regression (fix-parse29): a score written with an explicit plus sign
// ("+1") was unreadable in BatchEval's score lists and "Score of" lines,
// in CloserLook's ratings and in LLM-Eval's JSON (which failed to decode,
// losing every criterion), and G-Eval's form read "Sentiment: +1" only as
// a bare number, so a second "Sentiment: 2" was not seen to disagree. A
// scale note "-2 to +2" was not seen as a range, so "Rating: -2 to +2"
// after the rating was read as a second rating, -2. "+1" is 1 and "+0"
// is 0 on any scale, wherever a minus is read.
func TestExplicitPlusSign(t *testing.T) {
	neg := Criterion{Name: "Sentiment", Lo: -2, Hi: 2}
	c13 := Criterion{Name: "Coherence", Lo: 1, Hi: 3}
	batch := []struct {
		name, text string
		c          Criterion
		scores     string
		problems   []string
	}{
		{"bracket list", "Float Scores: [Sample1: +1, Sample2: +0, Sample3: -1.5]", neg, "1 0 -1.5", nil},
		{"one per line", "Scores:\nSample1 +2\nSample2 = +0.5\nSample3: +2/2", neg, "2 0.5 2", nil},
		{"one-stage lines", "Warm.\nScore of Sample1: +2\nCold.\nScore of Sample2 +0\nFlat.\nScore of Sample3: -1", neg, "2 0 -1", nil},
		{"pairs in prose", "Sample1: +1,\nSample2: +0;\nSample3: -2.", neg, "1 0 -2", nil},
		{"out of range", "Scores:\nSample1: +4\nSample2: +3\nSample3: 1", c13, "- 3 1", []string{"Sample1: +4 is outside [1, 3]"}},
		{"a plus and a plain number agree", "Score of Sample1: +2\nScore of Sample2: 1\nScore of Sample3: 3\nScores: [Sample1: 2, Sample2: +1, Sample3: 3]", c13, "2 1 3", nil},
		{"a range to a plus", "Scores:\nSample1: -1 to +1\nSample2: +1 or +2\nSample3: 0", neg, "- - 0",
			[]string{`Sample1: "-1 to +1" gives two numbers (a range or a choice), not one score`, `Sample2: "+1 or +2" gives two numbers (a range or a choice), not one score`}},
		{"a revision to a plus", "Scores:\nSample1: -1 -> +1\nSample2: 1\nSample3: 0", neg, "- 1 0",
			[]string{`Sample1: "-1 -> +1" gives a second score after the first, so which one stands cannot be told`}},
	}
	for _, tt := range batch {
		a := ParseBatchAnswer(tt.text, 3, tt.c)
		if got := formatScores(a.Scores); got != tt.scores || !slices.Equal(a.Problems, tt.problems) {
			t.Errorf("BatchEval %s: %s %q, want %s %q", tt.name, got, a.Problems, tt.scores, tt.problems)
		}
		if o := oracleParseBatchAnswer(tt.text, 3, tt.c); formatScores(o.Scores) != tt.scores {
			t.Errorf("oracle %s: %s %q", tt.name, formatScores(o.Scores), o.Problems)
		}
	}

	rate := []struct {
		text, score, problem string
	}{
		{"Warm.\nRating: +1", "1", ""},
		{"Neutral.\nRating: +0", "0", ""},
		{"Warm.\nRating +2", "2", ""},
		{"Warm.\nRating: 1\nRating: -2 to +2", "1", ""},
		{"Warm.\nRating: +1\nRating: 1", "1", ""},
		{"Warm.\nRating: +1 or +2", "-", `the rating "+1 or +2" gives two numbers (a range or a choice), not one score`},
	}
	for _, tt := range rate {
		score, _, problem := ParseAnalyzeRate(tt.text, neg)
		if got := formatScores([]*float64{score}); got != tt.score || problem != tt.problem {
			t.Errorf("CloserLook %q: %s %q, want %s %q", tt.text, got, problem, tt.score, tt.problem)
		}
	}

	if e := GEvalFromSamples([]string{"- Sentiment: +1", "+2", "Score: +0", "Sentiment: +1"}, neg); e.Score == nil || *e.Score != 1 || e.Used != 4 {
		t.Errorf("G-Eval: %s used %d, want 1 from 4 (%q)", formatScores([]*float64{e.Score}), e.Used, e.Problem)
	}
	if e := GEvalFromSamples([]string{"- Sentiment: +1\nSentiment: 2", "Sentiment: 2"}, neg); e.Score == nil || *e.Score != 2 || e.Used != 1 {
		t.Errorf("G-Eval disagreeing: %s used %d, want 2 from 1", formatScores([]*float64{e.Score}), e.Used)
	}
	if e := GEvalFromSamples([]string{"Sentiment (-2 to +2): 1"}, neg); e.Score == nil || *e.Score != 1 {
		t.Errorf("G-Eval scale echo: %s %q, want 1", formatScores([]*float64{e.Score}), e.Problem)
	}
	if e := GEvalFromSamples([]string{"Score (-2 to +2): -1"}, neg); e.Score == nil || *e.Score != -1 {
		t.Errorf("G-Eval scale echo after Score: %s %q, want -1", formatScores([]*float64{e.Score}), e.Problem)
	}

	r := Rubric{Criteria: []Criterion{{Name: "Coherence"}, {Name: "Fluency"}}}
	s, _, p := ParseLLMEvalAnswer(`{"Coherence": +3, "Fluency": {"score": +4.5, "reason": "ok, +1 for style"}}`, r, LLMEvalFive)
	if got := formatScores(s); got != "3 4.5" || len(p) != 0 {
		t.Errorf("LLM-Eval: %s %q, want 3 4.5", got, p)
	}
	s, _, p = ParseLLMEvalAnswer(`{"Coherence": +7, "Fluency": +0}`, r, LLMEvalFive)
	if got := formatScores(s); got != "- 0" || !slices.Equal(p, []string{"Coherence: 7 is outside [0, 5]"}) {
		t.Errorf("LLM-Eval out of range: %s %q", got, p)
	}
}

// Regression (fix-parse29): G-Eval's log-probability estimate did not
// read a score written as one token with a typeset minus ("−2", U+2212),
// in full-width digits ("２") or with a full-width minus: the generated
// token was not taken for a number, or such an alternative was not
// counted. Nor, when the minus came as a token of its own, did it count
// the one-token negative scores ("-1", "−1") among that position's
// alternatives, which are scores the judge could have written there just
// as it could have written "1" (signedMass). A plus sign as a token of its
// own ("+", "2") is read as the minus is: p(+)·p(k) from the digits after
// it, with the scores written in one token at its position.
func TestGEvalLogprobsReadSignedAndFullWidthTokens(t *testing.T) {
	neg := Criterion{Name: "Sentiment", Lo: -2, Hi: 2}
	c13 := Criterion{Name: "Coherence", Lo: 1, Hi: 3}
	ln := math.Log
	tests := []struct {
		name   string
		tokens []TokenAlternatives
		c      Criterion
		want   string
	}{
		{"a typeset minus glued to the digit", []TokenAlternatives{
			{Token: "Sentiment"}, {Token: ":"},
			{Token: " −2", Logprob: ln(0.6), Top: []TokenProb{{" −2", ln(0.6)}, {" -1", ln(0.3)}, {" 0", ln(0.1)}}},
		}, neg, "-1.5 [-2:0.6 -1:0.3 0:0.1 1:0 2:0] logprobs 1/1"},
		{"a typeset minus among the alternatives of an ASCII one", []TokenAlternatives{
			{Token: "Sentiment"}, {Token: ":"},
			{Token: " -1", Logprob: ln(0.5), Top: []TokenProb{{" -1", ln(0.5)}, {" −2", ln(0.25)}, {"−1", ln(0.25)}}},
		}, neg, "-1.25 [-2:0.25 -1:0.75 0:0 1:0 2:0] logprobs 1/1"},
		{"one-token negative scores beside a split minus", []TokenAlternatives{
			{Token: "Sentiment"}, {Token: ":"},
			{Token: " -", Logprob: ln(0.5), Top: []TokenProb{{" -", ln(0.5)}, {" -1", ln(0.2)}, {" −2", ln(0.1)}, {" 1", ln(0.2)}}},
			{Token: "2", Logprob: 0, Top: []TokenProb{{"2", 0}}},
		}, neg, "-1.2 [-2:0.6 -1:0.2 0:0 1:0.2 2:0] logprobs 1/1"},
		{"a split typeset minus", []TokenAlternatives{
			{Token: "Sentiment"}, {Token: ":"},
			{Token: " −", Logprob: ln(0.8), Top: []TokenProb{{" −", ln(0.8)}, {" 1", ln(0.2)}}},
			{Token: "1", Logprob: ln(0.5), Top: []TokenProb{{"1", ln(0.5)}, {"２", ln(0.5)}}},
		}, neg, "-1 [-2:0.4 -1:0.4 0:0 1:0.2 2:0] logprobs 1/1"},
		{"full-width digits", []TokenAlternatives{
			{Token: "Coherence"}, {Token: "："},
			{Token: "２", Logprob: ln(0.5), Top: []TokenProb{{"２", ln(0.5)}, {"3", ln(0.25)}, {"３", ln(0.25)}}},
		}, c13, "2.5 [1:0 2:0.5 3:0.5] logprobs 1/1"},
		{"a full-width minus", []TokenAlternatives{
			{Token: "Sentiment"}, {Token: ":"},
			{Token: "－１", Logprob: ln(0.5), Top: []TokenProb{{"－１", ln(0.5)}, {"0", ln(0.5)}}},
		}, neg, "-0.5 [-2:0 -1:0.5 0:0.5 1:0 2:0] logprobs 1/1"},
		{"a plus glued to the digit", []TokenAlternatives{
			{Token: "Sentiment"}, {Token: ":"},
			{Token: " +1", Logprob: ln(0.5), Top: []TokenProb{{" +1", ln(0.5)}, {" +2", ln(0.25)}, {" 2", ln(0.25)}}},
		}, neg, "1.5 [-2:0 -1:0 0:0 1:0.5 2:0.5] logprobs 1/1"},
		{"a split plus", []TokenAlternatives{
			{Token: "Sentiment"}, {Token: ":"},
			{Token: " +", Logprob: ln(0.5), Top: []TokenProb{{" +", ln(0.5)}, {" -", ln(0.3)}, {" 0", ln(0.2)}}},
			{Token: "2", Logprob: ln(0.6), Top: []TokenProb{{"2", ln(0.6)}, {"1", ln(0.4)}}},
		}, neg, "1.14 [-2:0 -1:0 0:0.286 1:0.286 2:0.429] logprobs 1/1"},
	}
	for _, tt := range tests {
		if got := formatEstimate(GEvalFromLogprobs(tt.tokens, tt.c, 0)); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Regression (fix-parse29): numbers that are not one score on the
// criterion's scale were read as their first digits: "2,5" (a decimal
// comma; "1,000", "2,3") as 2, a grade "3+" or "4-" as 3 or 4, and a
// score out of another maximum written "4 of 5" or "4 (out of 5)" as 4 on
// [1, 10] ("4/5" and "4 out of 5" were already caught). Each is now
// missing, with the reason, in BatchEval's lists, CloserLook's ratings
// and G-Eval's forms; a maximum equal to the scale's, a separator with
// blanks and a list without blanks still read.
func TestUncertainNumbersAreNotRead(t *testing.T) {
	c10 := Criterion{Name: "Quality", Lo: 1, Hi: 10}
	a := ParseBatchAnswer("Scores:\nSample1: 2,5\nSample2: 3+\nSample3: 4-\nSample4: 4 of 5\nSample5: 4 (out of 5)\n"+
		"Sample6: 7 (out of 10)\nSample7: 6 of 10\nSample8: 5 - solid\nSample9: 3 (of the 5 answers, the best)\nSample10: 1,000", 10, c10)
	want := []string{
		`Sample1: "2,5" has a comma between digits (a decimal comma, a thousands separator or two numbers), so which number is meant cannot be told`,
		`Sample2: "3+" has a sign after the number (a grade such as 3+ or 4-), not one score`,
		`Sample3: "4-" has a sign after the number (a grade such as 3+ or 4-), not one score`,
		`Sample4: "4 of 5" is a score out of 5, not on the scale [1, 10]`,
		`Sample5: "4 (out of 5)" is a score out of 5, not on the scale [1, 10]`,
		`Sample10: "1,000" has a comma between digits (a decimal comma, a thousands separator or two numbers), so which number is meant cannot be told`,
	}
	if got := formatScores(a.Scores); got != "- - - - - 7 6 5 3 -" || !slices.Equal(a.Problems, want) {
		t.Errorf("BatchEval: %s %q\nwant - - - - - 7 6 5 3 - %q", got, a.Problems, want)
	}
	a = ParseBatchAnswer("Float Scores: [Sample1:2,Sample2:3,5, Sample3: 4]", 3, c10)
	if got := formatScores(a.Scores); got != "2 - 4" || len(a.Problems) != 1 {
		t.Errorf("bracket list: %s %q, want 2 - 4 and one problem", got, a.Problems)
	}

	rate := []struct{ text, score, problem string }{
		{"Fine.\nRating: 2,5", "-", `the rating "2,5" has a comma between digits (a decimal comma, a thousands separator or two numbers), so which number is meant cannot be told`},
		{"Fine.\nRating: 3+", "-", `the rating "3+" has a sign after the number (a grade such as 3+ or 4-), not one score`},
		{"Fine.\nRating: 4 (out of 5)", "-", `the rating "4 (out of 5)" is a score out of 5, not on the scale [1, 10]`},
		{"Fine.\nRating: 4 (out of 10)", "4", ""},
		{"Fine.\nRating: 4 - good", "4", ""},
	}
	for _, tt := range rate {
		score, _, problem := ParseAnalyzeRate(tt.text, c10)
		if got := formatScores([]*float64{score}); got != tt.score || problem != tt.problem {
			t.Errorf("CloserLook %q: %s %q, want %s %q", tt.text, got, problem, tt.score, tt.problem)
		}
	}

	c5 := Criterion{Name: "Quality", Lo: 1, Hi: 5}
	if e := GEvalFromSamples([]string{"Quality: 2,5", "Quality: 3+", "4 of 10", "Quality: 4 (out of 10)", "Quality: 4 (out of 5)", "Quality: 2"}, c5); e.Score == nil || *e.Score != 3 || e.Used != 2 {
		t.Errorf("G-Eval samples: %s used %d, want 3 from 2", formatScores([]*float64{e.Score}), e.Used)
	}
	tokens := []TokenAlternatives{{Token: "Quality"}, {Token: ":"}, {Token: " 2", Top: []TokenProb{{" 2", math.Log(0.5)}, {" 3", math.Log(0.5)}}}, {Token: ","}, {Token: "5"}}
	if e := GEvalFromLogprobs(tokens, c5, 0); e.Score != nil ||
		e.Problem != `the judge's answer "2,5" has a comma between digits (a decimal comma, a thousands separator or two numbers), so which number is meant cannot be told` {
		t.Errorf("G-Eval logprobs: %s %q", formatScores([]*float64{e.Score}), e.Problem)
	}
}

// Regression (fix-parse29): rewriting a typeset minus or a plus sign in
// LLM-Eval's JSON ({"Coherence": −1}, {"Coherence": +3}) also rewrote a
// reason's text wherever a colon came before the sign ("tone: −2 for
// typos" was shown as "tone: -2 for typos"). Only a value's place, a
// number that a comma or brace ends, is rewritten now.
func TestLLMEvalSignRewriteKeepsReasons(t *testing.T) {
	r := Rubric{Criteria: []Criterion{{Name: "Coherence"}, {Name: "Fluency"}}}
	s, reasons, p := ParseLLMEvalAnswer("{\"Coherence\": +3,\n \"Fluency\": {\"score\": \u22121, \"reason\": \"style: +1 for rhythm, tone: \u22122 for typos\"}}", r, LLMEvalFive)
	if got := formatScores(s); got != "3 -" || !slices.Equal(p, []string{"Fluency: -1 is outside [0, 5]"}) {
		t.Errorf("scores %s %q, want 3 - and Fluency: -1 is outside [0, 5]", got, p)
	}
	if want := "style: +1 for rhythm, tone: \u22122 for typos"; reasons[1] != want {
		t.Errorf("reason %q, want %q", reasons[1], want)
	}
}

// Regression (fix-parse29): a score followed by its rounding ("2.5
// (rounded to 3)", "3.4, rounded down: 3") was read as the first number,
// though the judge gives two and which it stands by cannot be told (on an
// integer scale, likely the second). It is a revision, as "2, revised: 1"
// is; the same number restated is none.
func TestRoundedScoreIsARevision(t *testing.T) {
	c13 := Criterion{Name: "Coherence", Lo: 1, Hi: 3}
	a := ParseBatchAnswer("Scores:\nSample1: 2.5 (rounded to 3)\nSample2: 1.6, rounded up: 2\nSample3: 2 (rounded: 2)", 3, c13)
	want := []string{
		`Sample1: "2.5 (rounded to 3" gives a second score after the first, so which one stands cannot be told`,
		`Sample2: "1.6, rounded up: 2" gives a second score after the first, so which one stands cannot be told`,
	}
	if got := formatScores(a.Scores); got != "- - 2" || !slices.Equal(a.Problems, want) {
		t.Errorf("BatchEval: %s %q, want - - 2 %q", got, a.Problems, want)
	}
	if s, _, p := ParseAnalyzeRate("Fine.\nRating: 2.4, rounded down to 2", c13); s != nil ||
		p != `the rating "2.4, rounded down to 2" gives a second score after the first, so which one stands cannot be told` {
		t.Errorf("CloserLook: %s %q", formatScores([]*float64{s}), p)
	}
}

// Regression (fix-parse29): "Score of Sample12" with no score after it (a
// sentence: "the score of Sample12 stands") was read as Sample1 scored 2,
// the pattern giving back the label's last digit as the score; in a
// one-stage answer that was a silent wrong score, and now that "Score of"
// lines are compared with the list it would make a false conflict. And a
// line giving a range of samples one score ("Sample1-3: 2", "Sample 1–3:
// 2") was read as Sample1 scored 3. Neither is read now: the first is no
// score line, the second is reported.
func TestLabelDigitsAreNotScores(t *testing.T) {
	c13 := Criterion{Name: "Coherence", Lo: 1, Hi: 3}
	a := ParseBatchAnswer("Sample1: good\nFloat Scores: [Sample1: 2.5, Sample2: 1.5, Sample3: 3]\nThe score of Sample12 stands.", 3, c13)
	if got := formatScores(a.Scores); got != "2.5 1.5 3" || len(a.Problems) != 0 {
		t.Errorf("prose after a list: %s %q, want 2.5 1.5 3", got, a.Problems)
	}
	a = ParseBatchAnswer("Good.\nScore of Sample1: 2\nThe score of Sample21 is next.\nScore of Sample2: 3\nScore of Sample3: 1", 3, c13)
	if got := formatScores(a.Scores); got != "2 3 1" || len(a.Problems) != 0 {
		t.Errorf("one stage: %s %q, want 2 3 1", got, a.Problems)
	}
	a = ParseBatchAnswer("Scores:\nSample1-3: 2\nSample4: 1", 4, c13)
	want := []string{`Sample1: "3: 2" is followed by another number after a colon (a range of samples given one score?), so which score is meant cannot be told`,
		"Sample2: no score found", "Sample3: no score found"}
	if got := formatScores(a.Scores); got != "- - - 1" || !slices.Equal(a.Problems, want) {
		t.Errorf("a range of labels: %s %q, want - - - 1 %q", got, a.Problems, want)
	}
	a = ParseBatchAnswer("Scores:\nSample 1–3: 2\nSample4 = 1", 4, c13)
	if got := formatScores(a.Scores); got != "- - - 1" {
		t.Errorf("a range of labels with an en dash: %s %q, want - - - 1", got, a.Problems)
	}
}

// Regression (fix-parse29): a score written "-0" was kept as negative
// zero, shown to reviewers as "-0" and stored with its sign bit. "-0" and
// "+0" are the score 0 in every reader.
func TestNegativeZeroIsZero(t *testing.T) {
	c03 := Criterion{Name: "Coherence", Lo: 0, Hi: 3}
	isZero := func(v *float64) bool { return v != nil && *v == 0 && !math.Signbit(*v) }
	a := ParseBatchAnswer("Float Scores: [Sample1: -0, Sample2: +0, Sample3: -0.0]", 3, c03)
	for i, s := range a.Scores {
		if !isZero(s) {
			t.Errorf("BatchEval Sample%d: %s (sign bit %v), want 0", i+1, formatScores(a.Scores[i:i+1]), s != nil && math.Signbit(*s))
		}
	}
	if o := oracleParseBatchAnswer("Float Scores: [Sample1: -0]", 1, c03); !isZero(o.Scores[0]) {
		t.Errorf("oracle: -0 kept its sign")
	}
	if s, _, p := ParseAnalyzeRate("Flat.\nRating: -0", c03); !isZero(s) {
		t.Errorf("CloserLook: %s %q, want 0", formatScores([]*float64{s}), p)
	}
	if s, _, _ := oracleParseAnalyzeRate("Flat.\nRating: -0", c03); !isZero(s) {
		t.Errorf("CloserLook oracle: -0 kept its sign")
	}
	r := Rubric{Criteria: []Criterion{{Name: "Coherence"}}}
	if s, _, p := ParseLLMEvalAnswer(`{"Coherence": -0}`, r, LLMEvalFive); !isZero(s[0]) {
		t.Errorf("LLM-Eval: %s %q, want 0", formatScores(s), p)
	}
}

// Regression (fix-read30): a score the judge questions ("3?", "3??",
// "3?!", "3 (?)", "4/5?") was read as the number, and one with a second
// decimal point ("1.5.2", "1..5", "1.2.3") as the digits before it (1.5,
// 1). Each is now missing with its reason in BatchEval's lists and "Score
// of" lines, CloserLook's rating and G-Eval's form (sampled and
// logprobs); LLM-Eval's JSON never read them. A sentence's full stop
// ("3.", "3.0", "1.5.") and an exclamation ("3!") still read.
func TestQueriedAndDottedNumbersAreNotRead(t *testing.T) {
	const queried = "has a question mark after it (the judge is unsure of it), not one score"
	const dotted = "has more than one decimal point (a version or section number, or a typo), so which number is meant cannot be told"
	tests := []struct {
		written string
		hi      float64 // the scale is [1, hi]
		score   string  // "-" when missing
		why     string  // the reason, after the number as quoted; "" when read
	}{
		{"3?", 5, "-", `"3?" ` + queried},
		{"3??", 5, "-", `"3??" ` + queried},
		{"3?!", 5, "-", `"3?!" ` + queried},
		{"3!?", 5, "-", `"3!?" ` + queried},
		{"3 ?", 5, "-", `"3 ?" ` + queried},
		{"3 (?)", 5, "-", `"3 (?)" ` + queried},
		{"3?.", 5, "-", `"3?" ` + queried},
		{"3/5?", 5, "-", `"3/5?" ` + queried},
		{"3 (out of 5)?", 5, "-", `"3 (out of 5)?" ` + queried},
		{"1.5.2", 5, "-", `"1.5.2" ` + dotted},
		{"1.5.2.", 5, "-", `"1.5.2" ` + dotted},
		{"1..5", 5, "-", `"1..5" ` + dotted},
		{"1.2.3", 5, "-", `"1.2.3" ` + dotted},
		{"3/5?", 10, "-", `"3/5" is a score out of 5, not on the scale [1, 10]`},
		{"3", 5, "3", ""},
		{"3.", 5, "3", ""},
		{"3.0", 5, "3", ""},
		{"3.0.", 5, "3", ""},
		{"1.5.", 5, "1.5", ""},
		{"3!", 5, "3", ""},
		{"3/5.", 5, "3", ""},
		{"3. Fluent and clear.", 5, "3", ""},
	}
	for _, tt := range tests {
		c := Criterion{Name: "Quality", Lo: 1, Hi: tt.hi}
		want := []string{}
		if tt.why != "" {
			want = []string{"Sample1: " + tt.why}
		}
		for _, answer := range []string{
			"Scores:\nSample1: " + tt.written + "\nSample2: 2",
			"Float Scores: [Sample1: " + tt.written + ", Sample2: 2]",
			"Score of Sample1: " + tt.written + "\nScore of Sample2: 2",
		} {
			a := ParseBatchAnswer(answer, 2, c)
			if got := formatScores(a.Scores); got != tt.score+" 2" || !slices.Equal(append([]string{}, a.Problems...), want) {
				t.Errorf("BatchEval %q on [1, %g]: %s %q, want %s 2 %q", answer, tt.hi, got, a.Problems, tt.score, want)
			}
		}

		score, _, problem := ParseAnalyzeRate("Fine.\nRating: "+tt.written, c)
		wantProblem := ""
		if tt.why != "" {
			wantProblem = "the rating " + tt.why
		}
		if got := formatScores([]*float64{score}); got != tt.score || problem != wantProblem {
			t.Errorf("CloserLook %q on [1, %g]: %s %q, want %s %q", tt.written, tt.hi, got, problem, tt.score, wantProblem)
		}

		// G-Eval asks for an integer: a sampled answer that is not one
		// does not count, and only the whole numbers are read at all.
		integer := tt.score == "-" || !strings.Contains(tt.score, ".")
		if e := GEvalFromSamples([]string{"Quality: " + tt.written, "Quality: 2"}, c); integer && (tt.score == "-") != (e.Used == 1) {
			t.Errorf("G-Eval samples %q on [1, %g]: used %d of 2, want the first answer used: %v", tt.written, tt.hi, e.Used, tt.score != "-")
		}
	}

	// G-Eval's logprobs reader reads the same text around the score token.
	c5 := Criterion{Name: "Quality", Lo: 1, Hi: 5}
	top := []TokenProb{{" 3", math.Log(0.5)}, {" 4", math.Log(0.5)}}
	logprobs := []struct {
		after   []string
		problem string
	}{
		{[]string{"?"}, `the judge's answer "3?" ` + queried},
		{[]string{"?!"}, `the judge's answer "3?!" ` + queried},
		{[]string{"/", "5", "?"}, `the judge's answer "3/5?" ` + queried},
		{[]string{".", "5", ".", "2"}, `the judge's answer "3.5.2" ` + dotted},
		{[]string{"..", "5"}, `the judge's answer "3..5" ` + dotted},
		{[]string{"."}, ""},
		{[]string{"!"}, ""},
	}
	for _, tt := range logprobs {
		tokens := []TokenAlternatives{{Token: "Quality"}, {Token: ":"}, {Token: " 3", Logprob: math.Log(0.5), Top: top}}
		for _, s := range tt.after {
			tokens = append(tokens, TokenAlternatives{Token: s})
		}
		e := GEvalFromLogprobs(tokens, c5, 0)
		if tt.problem == "" && (e.Score == nil || *e.Score != 3.5) || tt.problem != "" && (e.Score != nil || e.Problem != tt.problem) {
			t.Errorf("G-Eval logprobs 3 then %q: %s", tt.after, formatEstimate(e))
		}
	}

	// LLM-Eval reads JSON numbers only: none of these is one.
	r := Rubric{Criteria: []Criterion{{Name: "Quality"}}}
	for _, written := range []string{"3?", "1.5.2", "1..5", `"3?"`} {
		if s, _, p := ParseLLMEvalAnswer(`{"Quality": `+written+`}`, r, LLMEvalFive); s[0] != nil || len(p) != 1 {
			t.Errorf("LLM-Eval %s: %s %q, want missing with one problem", written, formatScores(s), p)
		}
	}
}
