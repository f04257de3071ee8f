package evaluator

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// formatScores renders scores compactly for comparison: "2.4 1.7 - 2.9",
// where "-" is a missing score.
func formatScores(scores []*float64) string {
	parts := make([]string, len(scores))
	for i, s := range scores {
		if s == nil {
			parts[i] = "-"
		} else {
			parts[i] = strconv.FormatFloat(*s, 'g', -1, 64)
		}
	}
	return strings.Join(parts, " ")
}

func readAnswer(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "answers", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseBatchAnswer(t *testing.T) {
	c13 := Criterion{Name: "Engagingness", Lo: 1, Hi: 3}
	c15 := Criterion{Name: "Naturalness", Lo: 1, Hi: 5}
	cNeg := Criterion{Name: "Sentiment", Lo: -2, Hi: 2}
	tests := []struct {
		name     string
		file     string // an answer under testdata/answers, or
		text     string // the answer itself
		n        int
		c        Criterion
		scores   string   // formatScores of the result
		problems []string // each must appear among the problems, in this order
		analyses map[int]string
		// notIn maps a label to text its analysis must not contain.
		notIn map[int]string
	}{
		{
			name: "well-formed two stage", file: "two_stage_wellformed.txt", n: 3, c: c13,
			scores:   "2.7 1.3 1",
			analyses: map[int]string{1: "The response picks up the topic of jazz", 2: `"ok" acknowledges`, 3: "The response is empty"},
			notIn:    map[int]string{3: "Float Scores"},
		},
		{
			name: "markdown, bold labels, chatty trailing text", file: "two_stage_markdown.txt", n: 3, c: c13,
			scores:   "2.8 1.2 1",
			analyses: map[int]string{1: "The reply is specific", 2: "A one-word acknowledgement", 3: "Empty. Nothing to evaluate."},
			notIn:    map[int]string{3: "here are my scores"},
		},
		{
			name: "line list with /3, = and a trailing period", file: "line_list_chatty.txt", n: 4, c: c13,
			scores:   "2.9 1.1 2.2 2",
			analyses: map[int]string{1: "Coherent and on topic", 2: "Off topic: the user asked", 4: "repeats the previous turn"},
			notIn:    map[int]string{4: "Final scores"},
		},
		{
			name: "one stage integer", file: "one_stage_integer.txt", n: 3, c: c15,
			scores:   "5 2 3",
			analyses: map[int]string{1: "fluent and natural", 2: "Grammatical but stiff", 3: "A fragment with a typo"},
			notIn:    map[int]string{1: "Score of", 2: "Score of"},
		},
		{
			name: "three stage: the ranking is not read as scores", file: "three_stage_ranking.txt", n: 3, c: c13,
			scores:   "2.9 - 2.1",
			problems: []string{"Sample2: no score found"},
			analyses: map[int]string{1: "Accurate summary", 2: "factual error", 3: "adds a date"},
			notIn:    map[int]string{3: "Ranking", 1: "fully consistent"},
		},
		{
			name: "garbage, no scores at all", file: "garbage.txt", n: 3, c: c13,
			scores:   "- - -",
			problems: []string{"no scores found in the answer", "Sample1: no score found", "Sample2: no score found", "Sample3: no score found"},
		},
		{
			name: "out of range, duplicate, unreadable, missing and beyond n", file: "problems.txt", n: 5, c: c13,
			scores: "2.5 - - - -",
			problems: []string{
				"Sample2: 7 is outside [1, 3]",
				"Sample3: given 2 different scores (1.5, 2.0); none kept",
				"Sample4: the score could not be read as a number",
				"Sample5: no score found",
				"Sample6: there is no such sample in this batch of 5; ignored",
			},
			analyses: map[int]string{1: "Good.", 5: "Unclear."},
		},
		{
			name: "labels out of order are mapped by label", n: 3, c: c13,
			text:   "Integer Scores: [Sample3:1, Sample1:3, Sample2:2]",
			scores: "3 2 1",
		},
		{
			name: "no brackets, lower case marker, spaces in labels", n: 3, c: c13,
			text:   "...\nscores: sample 1: 1.5, sample 2: 2.5, sample 3: 3.",
			scores: "1.5 2.5 3",
		},
		{
			name: "same label twice with the same value is fine", n: 2, c: c13,
			text:   "Float Scores: [Sample1:2, Sample2:1.5, Sample2:1.50]",
			scores: "2 1.5",
		},
		// Two score lists in one answer: which one the judge meant cannot be
		// told from the text, so a sample they score differently keeps no
		// score (the repair request then asks for it again); the last list
		// used to win, so an invented example after the real list was
		// recorded as the scores.
		{
			name: "an example list after the real one is not taken for the scores", n: 3, c: c13,
			text:     "Sample1: lively\nSample2: flat\nSample3: fine\nFloat Scores: [Sample1:2.5, Sample2:1, Sample3:2.2]\nFor example, a response would read Scores: [Sample1:1, Sample2:1, Sample3:1]",
			scores:   "- 1 -",
			problems: []string{"the answer has 2 score lists that disagree (an example or a correction?); a sample they score differently keeps no score", "Sample1: given 2 different scores (2.5, 1); none kept", "Sample3: given 2 different scores (2.2, 1); none kept"},
			analyses: map[int]string{3: "fine"},
			notIn:    map[int]string{3: "Scores"},
		},
		{
			name: "a draft list and a corrected one that disagree: no guess", n: 2, c: c13,
			text:     "Draft scores: [Sample1:1, Sample2:1]\nOn reflection:\nFloat Scores: [Sample1:2.5, Sample2:1.5]\nThanks for reading my scores: they are final.",
			scores:   "- -",
			problems: []string{"the answer has 2 score lists that disagree (an example or a correction?); a sample they score differently keeps no score", "Sample1: given 2 different scores (1, 2.5); none kept", "Sample2: given 2 different scores (1, 1.5); none kept"},
		},
		{
			name: "two lists that agree are read as one", n: 3, c: c13,
			text:   "Sample1: a\nSample2: b\nSample3: c\nFloat Scores: [Sample1:2.5, Sample2:1, Sample3:2]\nTo repeat, Scores: [Sample1:2.5, Sample2:1.0, Sample3:2]",
			scores: "2.5 1 2",
			notIn:  map[int]string{3: "Scores"},
		},
		{
			name: "a later list that names only some samples leaves the others alone", n: 3, c: c13,
			text:     "Float Scores: [Sample1:2.5, Sample2:1.5, Sample3:2]\nA weak answer would read Scores: [Sample1:1]",
			scores:   "- 1.5 2",
			problems: []string{"the answer has 2 score lists that disagree (an example or a correction?); a sample they score differently keeps no score", "Sample1: given 2 different scores (2.5, 1); none kept"},
		},
		// A number that opens a range or a choice, or is out of another
		// maximum, is not the sample's score: it was read as its first
		// number, on the criterion's scale ("4/5" on 1-10 as 4).
		{
			name: "a range or a choice is not one score", n: 4, c: Criterion{Name: "Overall", Lo: 1, Hi: 10},
			text:   "Float Scores: [Sample1:3-4, Sample2:7 to 8, Sample3:6 or 7, Sample4:5–6]",
			scores: "- - - -",
			problems: []string{`Sample1: "3-4" gives two numbers (a range or a choice), not one score`, `Sample2: "7 to 8" gives two numbers (a range or a choice), not one score`,
				`Sample3: "6 or 7" gives two numbers (a range or a choice), not one score`, `Sample4: "5–6" gives two numbers (a range or a choice), not one score`},
		},
		{
			name: "a score out of another maximum is missing", n: 4, c: Criterion{Name: "Overall", Lo: 1, Hi: 10},
			text:     "Float Scores: [Sample1:4/5, Sample2:8/10, Sample3:4 out of 5, Sample4: 7 out of 10]",
			scores:   "- 8 - 7",
			problems: []string{`Sample1: "4/5" is a score out of 5, not on the scale [1, 10]`, `Sample3: "4 out of 5" is a score out of 5, not on the scale [1, 10]`},
		},
		{
			name: "one stage: a score out of another maximum is missing", n: 2, c: c15,
			text:     "Sample1: fine.\nScore of Sample1: 4/10\nSample2: dull.\nScore of Sample2: 2/5",
			scores:   "- 2",
			problems: []string{`Sample1: "4/10" is a score out of 10, not on the scale [1, 5]`},
		},
		{
			name: "loose pairs: a score out of another maximum is missing", n: 2, c: c13,
			text:     "Sample1: 2/5\nSample2: 2.5/3",
			scores:   "- 2.5",
			problems: []string{`Sample1: "2/5" is a score out of 5, not on the scale [1, 3]`},
		},
		{
			name: "a range in a later list does not make the lists disagree", n: 2, c: c13,
			text:   "Float Scores: [Sample1:2, Sample2:3]\nScores: [Sample1:1-2]",
			scores: "2 3",
		},
		{
			name: "an example without labels is no list", n: 3, c: c13,
			text:   "Float Scores: [Sample1:2.5, Sample2:1.5, Sample3:2]\nFor example, a response would read Scores: [1, 1, 1]",
			scores: "2.5 1.5 2",
		},
		{
			name: "one missing label does not shift the others", n: 4, c: c13,
			text:     "Float Scores: [Sample1:2.1, Sample3:2.3, Sample4:2.4]",
			scores:   "2.1 - 2.3 2.4",
			problems: []string{"Sample2: no score found"},
		},
		{
			name: "never 0 for an unreadable number", n: 2, c: Criterion{Lo: 0, Hi: 5},
			text:     "Float Scores: [Sample1:high, Sample2:4]",
			scores:   "- 4",
			problems: []string{"Sample1: the score could not be read as a number"},
		},
		{
			name: "negative range and bounds are inclusive", n: 3, c: cNeg,
			text:   "Float Scores: [Sample1:-2, Sample2:0.5, Sample3:2]",
			scores: "-2 0.5 2",
		},
		{
			name: "fallback: score of lines without a list", n: 2, c: c13,
			text:   "Sample 1 - nice.\n**Score of Sample 1:** 2.5\nSample 2 - weak.\nScore for Sample2 = 1",
			scores: "2.5 1", analyses: map[int]string{1: "nice.", 2: "weak."},
		},
		{
			name: "fallback: loose pairs after the analysis", n: 2, c: c13,
			text:   "The first response is better than the second.\n\nSample1: 2.6\nSample2: 1.4",
			scores: "2.6 1.4",
		},
		{
			name: "fallback ignores numbers in prose after labels", n: 2, c: c13,
			text:     "Sample1 has 3 questions. Sample2 - 2 sentences.",
			scores:   "- -",
			problems: []string{"no scores found in the answer"},
		},
		{
			name: "fallback ignores a number that starts a sentence", n: 2, c: c13,
			text:     "Sample1: 3 of its 5 sentences are off topic.\nSample2: 2 questions, both good.\nSample1: 1.5/3\nSample2 = 2.5.",
			scores:   "1.5 2.5",
			analyses: map[int]string{1: "3 of its 5 sentences"},
		},
		{
			name: "list in a code block", n: 2, c: c13,
			text:   "Sample1: fine\nSample2: bad\n\n```\nFloat Scores:\n[Sample1:2.2, Sample2:1.1]\n```\n",
			scores: "2.2 1.1", analyses: map[int]string{1: "fine", 2: "bad"},
		},
		{
			name: "heading forms", n: 4, c: c13,
			text: "Analysis of Sample1: alpha\n- Sample 2: beta\n2. Sample3 - gamma\n#### Sample #4\ndelta\nSample1 is better than Sample4 overall.\n" +
				"Float Scores: [Sample1:3, Sample2:2, Sample3:2, Sample4:1]",
			scores:   "3 2 2 1",
			analyses: map[int]string{1: "alpha", 2: "beta", 3: "gamma", 4: "delta\nSample1 is better than Sample4 overall."},
		},
		// An echo of the output format is not the answer (these pass as the
		// parser stands; they guard the behaviour).
		{
			name: "the template echoed before the analyses", n: 2, c: c13,
			text:     "I will end with Float Scores: [Sample1:<score>, Sample2:<score>].\nSample1: lively\nSample2: flat\nFloat Scores: [Sample1:2.5, Sample2:1.5]",
			scores:   "2.5 1.5",
			analyses: map[int]string{1: "lively", 2: "flat"},
		},
		{
			name: "the template echoed after the list", n: 2, c: c13,
			text:   "Sample1: lively\nSample2: flat\nFloat Scores: [Sample1:2.5, Sample2:1.5]\n(Template: Float Scores: [Sample1:<score>, Sample2:<score>])",
			scores: "2.5 1.5",
		},
		{
			name: "the template echoed, then scores without a marker", n: 2, c: c13,
			text:   "Float Scores: [Sample1:<score>, Sample2:<score>]\nSample1: 2.5\nSample2: 1",
			scores: "2.5 1",
		},
		{
			name: "one stage: an example score line that disagrees is refused", n: 2, c: c13,
			text:     "Like this: Score of Sample1: 3\nSample1: dull.\nScore of Sample1: 1\nSample2: fine.\nScore of Sample2: 2",
			scores:   "- 2",
			problems: []string{"Sample1: given 2 different scores (3, 1); none kept"},
		},
		{
			name: "windows line ends", n: 2, c: c13,
			text:   "Sample1: a\r\nSample2: b\r\nFloat Scores: [Sample1:1.5, Sample2:2.5]\r\n",
			scores: "1.5 2.5", analyses: map[int]string{1: "a", 2: "b"},
		},
	}
	for _, tt := range tests {
		text := tt.text
		if tt.file != "" {
			text = readAnswer(t, tt.file)
		}
		got := ParseBatchAnswer(text, tt.n, tt.c)
		if len(got.Scores) != tt.n || len(got.Analyses) != tt.n {
			t.Errorf("%s: %d scores and %d analyses, want %d of each", tt.name, len(got.Scores), len(got.Analyses), tt.n)
			continue
		}
		if s := formatScores(got.Scores); s != tt.scores {
			t.Errorf("%s: scores %q, want %q (problems %q)", tt.name, s, tt.scores, got.Problems)
		}
		// Every missing score is explained, and nothing is reported when
		// nothing went wrong.
		if len(got.Missing()) > 0 && len(got.Problems) < len(got.Missing()) {
			t.Errorf("%s: %d missing scores but only %d problems: %q", tt.name, len(got.Missing()), len(got.Problems), got.Problems)
		}
		if len(tt.problems) == 0 && len(got.Problems) != 0 {
			t.Errorf("%s: unexpected problems %q", tt.name, got.Problems)
		}
		next := 0
		for _, p := range got.Problems {
			if next < len(tt.problems) && p == tt.problems[next] {
				next++
			}
		}
		if next < len(tt.problems) {
			t.Errorf("%s: problems %q lack %q (in order)", tt.name, got.Problems, tt.problems[next])
		}
		for label, want := range tt.analyses {
			if a := got.Analyses[label-1]; !strings.Contains(a, want) {
				t.Errorf("%s: analysis of Sample%d = %q, want it to contain %q", tt.name, label, a, want)
			}
		}
		for label, bad := range tt.notIn {
			if a := got.Analyses[label-1]; strings.Contains(a, bad) {
				t.Errorf("%s: analysis of Sample%d = %q, should not contain %q", tt.name, label, a, bad)
			}
		}
	}
}

func TestParseBatchAnswerExactAnalyses(t *testing.T) {
	text := "Sample1: first line\nsecond line\n\nSample2: other\n\nFloat Scores: [Sample1:1, Sample2:2]"
	got := ParseBatchAnswer(text, 2, Criterion{Lo: 1, Hi: 3})
	want := []string{"first line\nsecond line", "other"}
	if !reflect.DeepEqual(got.Analyses, want) {
		t.Errorf("analyses %q, want %q", got.Analyses, want)
	}
}

func TestMissing(t *testing.T) {
	one, two := 1.0, 2.0
	tests := []struct {
		scores []*float64
		want   []int
	}{
		{[]*float64{&one, nil, &two, nil}, []int{2, 4}},
		{[]*float64{&one, &two}, nil},
		{[]*float64{nil}, []int{1}},
	}
	for _, tt := range tests {
		if got := (BatchAnswer{Scores: tt.scores}).Missing(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Missing() = %v, want %v", got, tt.want)
		}
	}
}
