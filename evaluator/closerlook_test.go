package evaluator

import (
	"strings"
	"testing"
)

func TestBuildAnalyzeRatePrompt(t *testing.T) {
	r, c := dialogueRubric()
	msgs := BuildAnalyzeRatePrompt(r, c, dialogueSamples()[0], Integer)
	checkGolden(t, "prompt_analyze_rate.golden", renderMessages(msgs))

	user := msgs[1].Content
	for _, w := range []string{"one criterion, Engagingness, by first analysing it", "a score within [1, 3]; whole numbers only",
		"A score near 2 means", "# Sample\nConversation history: A: Do you like jazz?", "\nRating: <score>\n", "a whole number within [1, 3]"} {
		if !strings.Contains(user, w) {
			t.Errorf("prompt lacks %q", w)
		}
	}
	if strings.Contains(user, "decimal") {
		t.Errorf("integer analyze-rate prompt invites decimals:\n%s", user)
	}
	// Runs stored before the choice keep their decimal prompt.
	old := BuildAnalyzeRatePrompt(r, c, dialogueSamples()[0], "")[1].Content
	for _, w := range []string{"a score within [1, 3]; decimal scores are allowed", "Replace <score> with a number within [1, 3]"} {
		if !strings.Contains(old, w) {
			t.Errorf("decimal prompt lacks %q", w)
		}
	}
	if strings.Contains(user, "Sample1") || strings.Contains(user, "Float Scores") {
		t.Errorf("analyze-rate prompt carries batch wording:\n%s", user)
	}
}

func TestParseAnalyzeRate(t *testing.T) {
	c := Criterion{Name: "Engagingness", Lo: 1, Hi: 3}
	tests := []struct {
		name     string
		text     string
		c        Criterion
		score    string // "-" when nil
		analysis string
		problem  string
	}{
		{"plain", "The response asks a question and adds a fact.\nRating: 2.5", c, "2.5", "The response asks a question and adds a fact.", ""},
		{"bold label", "Lively and specific.\n\n**Rating**: 3", c, "3", "Lively and specific.", ""},
		{"dash separator", "Dull.\nRating - 1", c, "1", "Dull.", ""},
		{"score label", "Somewhat engaging.\nScore: 2", c, "2", "Somewhat engaging.", ""},
		{"range note and out-of", "Good.\nFinal rating (1-3): 2.8/3", c, "2.8", "Good.", ""},
		// Changed (fix-parse28): the last of two disagreeing ratings used to
		// win. Which one the judge meant cannot be told, so none is kept,
		// as BatchEval does with disagreeing score lists.
		{"two different ratings leave none", "Rating: 1 at first sight.\nOn reflection it is better.\nRating: 2\nScore: 3", c,
			"-", "Rating: 1 at first sight.\nOn reflection it is better.", "the answer gives 2 different ratings (1, 2); none kept"},
		{"a rating repeated is that rating", "Rating: 2\nIt keeps the talk going.\nRating: 2.0", c, "2", "Rating: 2\nIt keeps the talk going.", ""},
		{"the rating beats a later score", "On topic.\nRating: 2\nScore: 3", c, "2", "On topic.", ""},
		{"two different scores leave none", "On topic.\nScore: 3\nScore: 2.5", c, "-", "On topic.\nScore: 3", "the answer gives 2 different ratings (3, 2.5); none kept"},
		{"rating on the analysis line", "It is on topic. Rating: 2.", c, "2", "It is on topic.", ""},
		{"negative range", "Negative tone.\nRating: -1.5", Criterion{Lo: -2, Hi: 2}, "-1.5", "Negative tone.", ""},
		{"out of range", "Excellent.\nRating: 4", c, "-", "Excellent.", "the rating 4 is outside [1, 3]"},
		{"unfilled template", "Fine.\nRating: <score>", c, "-", "Fine.", "the rating could not be read as a number"},
		{"rating missing", "The response is engaging and invites a reply.", c, "-", "The response is engaging and invites a reply.", `no "Rating:" line found`},
		{"a score in prose is not a rating", "I would score it highly.", c, "-", "I would score it highly.", `no "Rating:" line found`},
		{"empty", "", c, "-", "", `no "Rating:" line found`},
		// Regression: a rating out of another maximum was read as on the
		// criterion's scale, and a choice as its first number.
		{"a rating out of another maximum is missing", "Good.\nRating: 4/5", Criterion{Lo: 1, Hi: 10}, "-", "Good.", `the rating "4/5" is a score out of 5, not on the scale [1, 10]`},
		{"a rating out of another maximum, in words", "Good.\nRating: 4 out of 5", Criterion{Lo: 1, Hi: 10}, "-", "Good.", `the rating "4 out of 5" is a score out of 5, not on the scale [1, 10]`},
		{"a rating out of the scale's maximum is read", "Good.\nRating: 8 out of 10", Criterion{Lo: 1, Hi: 10}, "8", "Good.", ""},
		{"a choice of two ratings is missing", "Hard to say.\nRating: 2 or 3", c, "-", "Hard to say.", `the rating "2 or 3" gives two numbers (a range or a choice), not one score`},
		// Regression: a description of the scale written after the rating
		// was read as the rating (its lowest level).
		{"the scale restated after the rating", "Lively.\nRating: 3\nRating: 1 means dull, 3 means lively.", c, "3", "Lively.", ""},
		{"a range after the rating", "Lively.\nRating: 2.5\nScore: 1-3\n(Rating: 1 to 3)", c, "2.5", "Lively.", ""},
		{"a range is not a rating", "Lively.\nRating: 1-3", c, "-", "Lively.", "the rating could not be read as a number"},
		{"a dash after the rating is not a range", "Dull.\nRating: 1 - 3 points off for the tone", c, "1", "Dull.", ""},
	}
	for _, tt := range tests {
		score, analysis, problem := ParseAnalyzeRate(tt.text, tt.c)
		if got := formatScores([]*float64{score}); got != tt.score {
			t.Errorf("%s: score %s, want %s (problem %q)", tt.name, got, tt.score, problem)
		}
		if analysis != tt.analysis {
			t.Errorf("%s: analysis %q, want %q", tt.name, analysis, tt.analysis)
		}
		if problem != tt.problem {
			t.Errorf("%s: problem %q, want %q", tt.name, problem, tt.problem)
		}
	}
}
