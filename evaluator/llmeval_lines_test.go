package evaluator

import (
	"strings"
	"testing"
)

// An LLM-Eval answer written as score lines instead of the JSON object the
// prompt asks for lost every score ("no JSON object found in the answer");
// explore43's judge answered "Score: N" and all 40 scores of the run were
// missing. The cases marked new failed on the old reader (every score
// nil); the others check what must stay unread.
func TestParseLLMEvalAnswerLines(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		scale    LLMEvalScale
		scores   string
		problems string   // joined with " | "
		reasons  []string // nil: none
	}{
		// new: read
		{"criterion lines in another order", "Grammar: 4\nEngagingness: 3\nFactual consistency: 2.5", LLMEvalFive, "3 2.5 4", "", nil},
		{"bold, bullets and numbering", "- **Engagingness:** 3\n2. **Factual consistency**: **4.5**\n* Grammar = *5*", LLMEvalFive, "3 4.5 5", "", nil},
		{"trailing explanations become reasons", "Engagingness: 3 - asks a question back.\nFactual consistency: 4 (agrees with the context)\nGrammar: 5, because there are no errors",
			LLMEvalFive, "3 4 5", "", []string{"asks a question back.", "agrees with the context", "because there are no errors"}},
		{"score over the scale's top", "Engagingness: 3/5\nFactual consistency: 4 out of 5\nGrammar: 2 / 5", LLMEvalFive, "3 4 2", "", nil},
		{"hundred scale, label with score and a range", "Engagingness score: 70/100\nFactual consistency (0-100): 65\nGrammar rating: 100.", LLMEvalHundred, "70 65 100", "", nil},
		{"analysis before the lines, template echoed", "The response is lively.\nFormat: Engagingness: <score>\n\nEngagingness: 3\nFactual consistency: 4\nGrammar: 4", LLMEvalFive, "3 4 4", "", nil},
		{"same score twice", "Engagingness: 3\nFactual consistency: 4\nGrammar: 4\n\nFinal: Engagingness: 3", LLMEvalFive, "3 4 4", "", nil},
		{"some lines missing", "Engagingness: 3\nGrammar: 4", LLMEvalFive, "3 - 4", `Factual consistency: missing from the answer (no JSON object, and no line such as "Factual consistency: 3")`, nil},

		{"several criteria on one line", "Engagingness: 3, Factual consistency: 4; Grammar: 5 | Note: fine", LLMEvalFive, "3 4 5", "", []string{"", "", "Note: fine"}},
		{"one line, explanations between", "Engagingness: 3, because it asks back; Factual consistency: 4 (one slip), Grammar: 5", LLMEvalFive, "3 4 5", "",
			[]string{"because it asks back", "one slip", ""}},

		// must stay unread: missing, never a guess
		{"a time, not a score", "Engagingness: 10:30 in the morning\nFactual consistency: 60\nGrammar: 70", LLMEvalHundred, "- 60 70",
			`Engagingness: "10:30 in the morning" gives more than one number, so which is the score cannot be told`, nil},
		{"range and alternatives", "Engagingness: 3-4\nFactual consistency: 3 or 4\nGrammar: 2, 3", LLMEvalFive, "- - -",
			`Engagingness: "3-4" gives more than one number, so which is the score cannot be told | Factual consistency: "3 or 4" gives more than one number, so which is the score cannot be told | Grammar: "2, 3" gives more than one number, so which is the score cannot be told`, nil},
		{"two lines disagree", "Engagingness: 3\nEngagingness: 4\nFactual consistency: 2\nGrammar: 1", LLMEvalFive, "- 2 1", "Engagingness: given 2 different scores (3, 4); none kept", nil},
		{"a count, not a score", "Engagingness: 4\nFactual consistency: 2 of the 3 facts are wrong\nGrammar: 1", LLMEvalFive, "4 - 1",
			`Factual consistency: "2 of the 3 facts are wrong": the number is followed by words, so it cannot be told it is the score`, nil},
		{"an unreadable line beside a readable one", "Factual consistency: 2 of the 3 facts are wrong\nEngagingness: 4\nFactual consistency: 3\nGrammar: 1", LLMEvalFive, "4 - 1",
			`Factual consistency: "2 of the 3 facts are wrong": the number is followed by words, so it cannot be told it is the score`, nil},
		{"another scale's maximum", "Engagingness: 7/10\nFactual consistency: 4/5\nGrammar: 80%", LLMEvalFive, "- 4 -",
			`Engagingness: "7/10" is out of 10, not the scale's 5 | Grammar: "80%": the number is followed by words, so it cannot be told it is the score`, nil},
		{"out of range", "Engagingness: 7\nFactual consistency: -1\nGrammar: 5", LLMEvalFive, "- - 5", "Engagingness: 7 is outside [0, 5] | Factual consistency: -1 is outside [0, 5]", nil},
		{"score without a criterion in a rubric of several", "Score: 3", LLMEvalFive, "- - -", noJSONOrLine, nil},
		{"text after the label, no number first", "Engagingness: high, 4 points\nGrammar: good", LLMEvalFive, "- - -", noJSONOrLine, nil},
		// A JSON object naming a criterion is read as before, lines ignored.
		{"JSON wins over lines", "Engagingness: 1\n{\"Engagingness\": 3, \"Factual consistency\": 2, \"Grammar\": 1}", LLMEvalFive, "3 2 1", "", nil},
	}
	for _, tt := range tests {
		checkLLMEvalAnswer(t, tt.name, tt.text, tt.scale, tt.scores, tt.problems, tt.reasons)
	}
}

// With one criterion, "Score: N" (explore43's judge's answer) is its score.
func TestParseLLMEvalAnswerSingleScoreLine(t *testing.T) {
	_, c := dialogueRubric()
	r := Rubric{Criteria: []Criterion{c}}
	tests := []struct {
		text, scores, problems string
	}{
		{"Score: 3", "3", ""},
		{"**Score:** **3.5**\nThe response asks a question back.", "3.5", ""},
		{"Rating: 4/5", "4", ""},
		{"Final score = 2.", "2", ""},
		{"Engagingness: 3\nScore: 3", "3", ""},
		{"Engagingness: 3\nScore: 4", "-", "Engagingness: given 2 different scores (3, 4); none kept"},
		{"Score: 3-4", "-", `Engagingness: "3-4" gives more than one number, so which is the score cannot be told`},
		{"Score: 6", "-", "Engagingness: 6 is outside [0, 5]"},
		{"Score: 8/10", "-", `Engagingness: "8/10" is out of 10, not the scale's 5`},
		{"I would give it a 3.", "-", noJSONOrLineFor("Engagingness")},
	}
	for _, tt := range tests {
		s, _, p := ParseLLMEvalAnswer(tt.text, r, LLMEvalFive)
		if got := formatScores(s); got != tt.scores {
			t.Errorf("%q: scores %q, want %q (problems %q)", tt.text, got, tt.scores, p)
		}
		if got := strings.Join(p, " | "); got != tt.problems {
			t.Errorf("%q: problems %q, want %q", tt.text, got, tt.problems)
		}
	}
}
