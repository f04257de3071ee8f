package evaluator

import (
	"strings"
	"testing"
)

// An LLM-Eval answer whose JSON object fails to decode lost every score
// ("the JSON object in the answer is not valid JSON") even when it also
// wrote its scores as lines. The cases marked new failed on the old
// reader (every score nil, that one problem); the others check that a
// broken object is never read alone and that a line it contradicts is not
// read either.
func TestParseLLMEvalAnswerLinesBesideBrokenJSON(t *testing.T) {
	const notValid = "the JSON object in the answer is not valid JSON: "
	tests := []struct {
		name     string
		text     string
		scale    LLMEvalScale
		scores   string
		problems string   // joined with " | "
		reasons  []string // nil: none
	}{
		// new: read from the lines
		{"trailing comma, then lines", "{\"Engagingness\": 3, \"Factual consistency\": 2, \"Grammar\": 1,}\nEngagingness: 3\nFactual consistency: 2\nGrammar: 1",
			LLMEvalFive, "3 2 1", "", nil},
		{"lines, then an object cut off", "Engagingness: 3\nFactual consistency: 4.5\nGrammar: 5\n{\"Engagingness\": 3, \"Factual consistency\": 4.5, \"Gram",
			LLMEvalFive, "3 4.5 5", "", nil},
		{"pretty-printed object with a trailing comma, lines after", "```json\n{\n  \"Engagingness\": 60,\n  \"Factual consistency\": 70,\n  \"Grammar\": 80,\n}\n```\nEngagingness: 60\nFactual consistency: 70\nGrammar: 80",
			LLMEvalHundred, "60 70 80", "", nil},
		{"template echoed unfilled, then lines", "Format: {\"Engagingness\": <score>, \"Grammar\": <score>}\nEngagingness: 2 - flat.\nFactual consistency: 3\nGrammar: 4",
			LLMEvalFive, "2 3 4", "", []string{"flat.", "", ""}},
		{"nested object cut off, lines before", "Engagingness: 3\nFactual consistency: 2\nGrammar: 4\n{\"Engagingness\": {\"score\": 3, \"reason\": \"asks back, Grammar: 1 is",
			LLMEvalFive, "3 2 4", "", nil},
		{"unclosed object, lines after it still read", "{\"Engagingness\": 3, \"Grammar\": 4\nEngagingness: 3\nFactual consistency: 2\nGrammar: 4",
			LLMEvalFive, "3 2 4", "", nil},
		{"a line missing: its criterion named, the JSON's failure said", "{\"Engagingness\": 3,}\nEngagingness: 3\nGrammar: 1",
			LLMEvalFive, "3 - 1", `Factual consistency: missing from the answer (` + notValid + `invalid character '}' looking for beginning of object key string, and no line such as "Factual consistency: 3")`, nil},

		// never a wrong number: missing, with a problem naming the criterion
		{"object and line disagree", "{\"Engagingness\": 4, \"Factual consistency\": 2, \"Grammar\": 1,}\nEngagingness: 3\nFactual consistency: 2\nGrammar: 1",
			LLMEvalFive, "- 2 1", "Engagingness: given 2 different scores (3, 4); none kept", nil},
		{"nested score disagrees with the line", "Engagingness: 3\nFactual consistency: 2\nGrammar: 1\n{\"Engagingness\": {\"score\": 2, \"reason\": \"flat\"}, \"Grammar\": ",
			LLMEvalFive, "- 2 1", "Engagingness: given 2 different scores (3, 2); none kept", nil},
		{"a number cut off after the line's", "Engagingness: 3\nFactual consistency: 2\nGrammar: 1\n{\"Engagingness\": 3, \"Factual consistency\": 2, \"Grammar\": 1",
			LLMEvalFive, "3 2 -", "Grammar: the JSON object gives 1 but is cut off there, so the score it was writing cannot be told", nil},
		{"a score only in the broken object is not read", "{\"Engagingness\": 3, \"Factual consistency\": 2, \"Grammar\": 1,}\nEngagingness: 3",
			LLMEvalFive, "3 - -", `Factual consistency: given 2 only in a JSON object that is not valid JSON, which is not read, and in no line such as "Factual consistency: 3" | ` +
				`Grammar: given 1 only in a JSON object that is not valid JSON, which is not read, and in no line such as "Grammar: 3"`, nil},
		{"a reason's text inside the broken object is no score line", "{\"Engagingness\": {\"reason\": \"ok, Grammar: 2. Fine\", \"score\": 4},}\nEngagingness: 4\nFactual consistency: 3\nGrammar: 5",
			LLMEvalFive, "4 3 5", "", nil},
		{"lines that disagree among themselves", "{\"Engagingness\": 3,}\nEngagingness: 3\nEngagingness: 4\nFactual consistency: 1\nGrammar: 1",
			LLMEvalFive, "- 1 1", "Engagingness: given 2 different scores (3, 4); none kept", nil},
		{"broken object alone: nothing read, as before", `{"Engagingness": 3, "Factual consistency": 2, "Grammar": 1,}`,
			LLMEvalFive, "- - -", notValid + "invalid character '}' looking for beginning of object key string", nil},
		{"free prose beside a broken object is not read", "I'd give it a 3 out of 5 rather than a 4. {\"Engagingness\": ",
			LLMEvalFive, "- - -", notValid + "unexpected EOF", nil},
	}
	for _, tt := range tests {
		checkLLMEvalAnswer(t, tt.name, tt.text, tt.scale, tt.scores, tt.problems, tt.reasons)
	}
}

// The answer of the brief: "Score: 3" and then an object cut off before
// its value, on a rubric of one criterion. And free prose, which is not
// read: "a 3 out of 5 rather than a 4" names two scores.
func TestParseLLMEvalAnswerSingleCriterionBesideBrokenJSON(t *testing.T) {
	r := Rubric{Criteria: []Criterion{{Name: "Appropriateness", Lo: 1, Hi: 5}}}
	tests := []struct {
		text, scores, problems string
	}{
		{`Score: 3 {"appropriateness": `, "3", ""},                        // new
		{"Score: 3\n```json\n{\"Appropriateness\": 3,\n}\n```", "3", ""},  // new
		{"Appropriateness: 3.5\n{\"appropriateness\": 3.5, }", "3.5", ""}, // new
		{`Score: 3 {"appropriateness": 4,`, "-", "Appropriateness: given 2 different scores (3, 4); none kept"},
		{`Score: 3 {"appropriateness": 3`, "-", "Appropriateness: the JSON object gives 3 but is cut off there, so the score it was writing cannot be told"},
		{`Score: 3 {"appropriateness": 3.`, "-", "Appropriateness: the JSON object gives 3. but is cut off there, so the score it was writing cannot be told"},
		{`Score: 3 {"appropriateness": {"score": 4, "reason": "cut`, "-", "Appropriateness: given 2 different scores (3, 4); none kept"},
		{`Score: 3-4 {"appropriateness": `, "-", `Appropriateness: "3-4" gives more than one number, so which is the score cannot be told`},
		{`Score: 9 {"appropriateness": `, "-", "Appropriateness: 9 is outside [0, 5]"},
		{"I'd give it a 3 out of 5 rather than a 4", "-", noJSONOrLineFor("Appropriateness")},
		{"I'd give it a 3.", "-", noJSONOrLineFor("Appropriateness")},
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

// noJSONOrLine is the problem of an llmevalRubric answer with neither a
// JSON object nor a score line: it names the line to write.
var noJSONOrLine = noJSONOrLineFor("Engagingness")

// noJSONOrLineFor is that problem for a rubric whose first criterion is
// named name.
func noJSONOrLineFor(name string) string {
	return `no JSON object found in the answer, and no score line such as "` + name + `: 3" (a score in a sentence is not read)`
}
