package evaluator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// llmevalRubric is an LLM-Eval-like rubric with three criteria.
func llmevalRubric() Rubric {
	r, c := dialogueRubric()
	r.Criteria = []Criterion{
		c,
		{Name: "Factual consistency", Description: "Does the response agree with the conversation?", Lo: 1, Hi: 5,
			Levels: Levels{Low: "it contradicts the conversation.", High: "it is fully consistent."}},
		{Name: "Grammar", Lo: 0, Hi: 1},
	}
	return r
}

func TestBuildLLMEvalPromptGolden(t *testing.T) {
	r := llmevalRubric()
	checkGolden(t, "prompt_llmeval_five.golden", renderMessages(BuildLLMEvalPrompt(r, dialogueSamples()[0], LLMEvalFive)))
}

func TestBuildLLMEvalPromptContent(t *testing.T) {
	r := llmevalRubric()
	tests := []struct {
		name    string
		scale   LLMEvalScale
		want    []string
		notWant []string
	}{
		{"0-5", LLMEvalFive,
			[]string{"each of the 3 criteria", "a number from 0 to 5 with one decimal", "A score near 2.5 means the response is somewhat",
				"Factual consistency: Does the response agree", "A score near 5 means it is fully consistent.", "\nGrammar\n",
				`{"Engagingness": <score>, "Factual consistency": <score>, "Grammar": <score>}`, "exactly one JSON object"},
			[]string{"0 to 100", "A score near 1 means", "Sample1"}},
		{"0-100", LLMEvalHundred,
			[]string{"an integer from 0 to 100", "A score near 50 means", "A score near 100 means"},
			[]string{"one decimal"}},
	}
	for _, tt := range tests {
		msgs := BuildLLMEvalPrompt(r, dialogueSamples()[1], tt.scale)
		if len(msgs) != 2 || msgs[1].Role != "user" {
			t.Errorf("%s: want a system and a user message, got %d", tt.name, len(msgs))
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(msgs[1].Content, w) {
				t.Errorf("%s: prompt lacks %q", tt.name, w)
			}
		}
		for _, w := range tt.notWant {
			if strings.Contains(msgs[1].Content, w) {
				t.Errorf("%s: prompt should not contain %q", tt.name, w)
			}
		}
	}
}

func TestLLMEvalSchema(t *testing.T) {
	r := llmevalRubric()
	tests := []struct {
		scale LLMEvalScale
		want  string
	}{
		{LLMEvalFive, `{"additionalProperties":false,"properties":{"Engagingness":{"maximum":5,"minimum":0,"type":"number"},` +
			`"Factual consistency":{"maximum":5,"minimum":0,"type":"number"},"Grammar":{"maximum":5,"minimum":0,"type":"number"}},` +
			`"required":["Engagingness","Factual consistency","Grammar"],"type":"object"}`},
		{LLMEvalHundred, `{"additionalProperties":false,"properties":{"Engagingness":{"maximum":100,"minimum":0,"type":"number"},` +
			`"Factual consistency":{"maximum":100,"minimum":0,"type":"number"},"Grammar":{"maximum":100,"minimum":0,"type":"number"}},` +
			`"required":["Engagingness","Factual consistency","Grammar"],"type":"object"}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(LLMEvalSchema(r, tt.scale))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("%s: schema\n%s\nwant\n%s", tt.scale, b, tt.want)
		}
	}
}

func TestParseLLMEvalAnswer(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		scale    LLMEvalScale
		scores   string
		problems string // joined with " | "
	}{
		{"bare JSON", `{"Engagingness": 3.5, "Factual consistency": 4.0, "Grammar": 5}`, LLMEvalFive, "3.5 4 5", ""},
		{"fence and text around it", "Here are my scores:\n```json\n{\"engagingness\": 2.5,\n \"factual_consistency\": 1.0, \"GRAMMAR\": 0}\n```\nHope this helps {:", LLMEvalFive,
			"2.5 1 0", ""},
		{"keys ignore case, spaces, underscores and hyphens", `{"Factual-Consistency": 60, "engaging ness": 70, "grammar ": 100}`, LLMEvalHundred,
			"70 60 100", ""},
		{"scores wrapped in one object", `{"scores": {"Engagingness": 1, "Factual consistency": 2, "Grammar": 3}}`, LLMEvalFive, "1 2 3", ""},
		{"unknown keys are ignored", `{"Engagingness": 1, "Factual consistency": 2, "Grammar": 3, "explanation": "fine"}`, LLMEvalFive, "1 2 3", ""},
		{"missing key", `{"Engagingness": 3.5, "Grammar": 4}`, LLMEvalFive, "3.5 - 4", "Factual consistency: missing from the JSON answer"},
		{"out of range and not a number", `{"Engagingness": 7, "Factual consistency": "high", "Grammar": -0.5}`, LLMEvalFive, "- - -",
			"Engagingness: 7 is outside [0, 5] | Factual consistency: \"high\" is not a number | Grammar: -0.5 is outside [0, 5]"},
		{"number as a string and null", `{"Engagingness": "3", "Factual consistency": null, "Grammar": 2}`, LLMEvalFive, "- - 2",
			"Engagingness: \"3\" is not a number | Factual consistency: null is not a number"},
		{"same key twice with different values", `{"Engagingness": 3, "engagingness": 4, "Factual consistency": 2, "Grammar": 2, "grammar": 2.0}`, LLMEvalFive,
			"- 2 2", "Engagingness: given 2 different scores (3, 4); none kept"},
		{"no JSON", "Engagingness is high, grammar is perfect.", LLMEvalFive, "- - -", noJSONOrLine},
		{"broken JSON", `{"Engagingness": 3, "Grammar": }`, LLMEvalFive, "- - -",
			"the JSON object in the answer is not valid JSON: invalid character '}' looking for beginning of value"},
		{"empty", "", LLMEvalFive, "- - -", noJSONOrLine},

		// The answer is the JSON objects that name a criterion, not merely
		// the first object that decodes.
		{"format echoed before the answer", `I will answer in the form {"criterion": "score"}. {"Engagingness": 3.1, "Factual consistency": 4, "Grammar": 2}`, LLMEvalFive,
			"3.1 4 2", ""},
		{"prompt's template echoed before the answer", `Template: {"Engagingness": <score>, "Grammar": <score>}` + "\n" + `{"Engagingness": 60, "Factual consistency": 70, "Grammar": 80}`, LLMEvalHundred,
			"60 70 80", ""},
		{"wrapped two levels deep", `{"evaluation": {"scores": {"Engagingness": 1, "Factual consistency": 2, "Grammar": 3}, "note": "ok"}}`, LLMEvalFive,
			"1 2 3", ""},
		{"reasons as their own object before the scores", "{\"Engagingness\": \"lively\"}\n{\"Engagingness\": 4, \"Factual consistency\": 4, \"Grammar\": 4}", LLMEvalFive,
			"4 4 4", ""},
		{"answer repeated with the same scores", "```json\n{\"Engagingness\": 3, \"Factual consistency\": 2, \"Grammar\": 1}\n```\nFinal: {\"engagingness\": 3.0, \"Factual consistency\": 2, \"Grammar\": 1}", LLMEvalFive,
			"3 2 1", ""},
		{"example echoed, then an answer that disagrees", `For example {"Engagingness": 4.0, "Factual consistency": 2, "Grammar": 1}; my answer: {"Engagingness": 2.5, "Factual consistency": 2, "Grammar": 1}`, LLMEvalFive,
			"- 2 1", "Engagingness: given 2 different scores (4.0, 2.5); none kept"},
		{"two wrapped objects disagree", `{"scores": {"Engagingness": 3, "Factual consistency": 2, "Grammar": 1}, "first_try": {"Engagingness": 2, "Grammar": 1}}`, LLMEvalFive,
			"- 2 1", "Engagingness: given 2 different scores (3, 2); none kept"},
		{"objects that name no criterion", `{"criterion": "score"} and {"scores": {"fluency": 3}}`, LLMEvalFive, "- - -",
			"no JSON object in the answer names a criterion (Engagingness, Factual consistency, Grammar)"},
		{"broken answer after an object naming no criterion", `Form: {"criterion": "score"}. Answer: {"Engagingness": 3, "Grammar": }`, LLMEvalFive, "- - -",
			"the JSON object in the answer is not valid JSON: invalid character '}' looking for beginning of value"},
	}
	for _, tt := range tests {
		checkLLMEvalAnswer(t, tt.name, tt.text, tt.scale, tt.scores, tt.problems, nil)
	}

	nested := []struct {
		name     string
		text     string
		scale    LLMEvalScale
		scores   string
		problems string
		reasons  []string // per criterion; nil when the answer gives none
	}{
		// A criterion's key holding an object with its score and reason,
		// a common judge format, was "is not a number".
		{"per-criterion objects with score and reason",
			`{"Engagingness": {"score": 3, "reason": "Asks a question back."}, "Factual consistency": {"score": 4.5, "reason": "Agrees with the context."}, "Grammar": {"score": 5, "reason": "No errors."}}`,
			LLMEvalFive, "3 4.5 5", "", []string{"Asks a question back.", "Agrees with the context.", "No errors."}},
		{"score keys rating and value, any case, reason keys too",
			`{"engagingness": {"Rating": 70, "Explanation": "lively"}, "Factual consistency": {"VALUE": 60}, "Grammar": {"justification": "clean", "SCORE": 100}}`,
			LLMEvalHundred, "70 60 100", "", []string{"lively", "", "clean"}},
		{"per-criterion objects wrapped and fenced",
			"```json\n{\"evaluation\": {\"Engagingness\": {\"score\": 2, \"reasoning\": \"flat\"}, \"Factual consistency\": {\"score\": 3}, \"Grammar\": {\"score\": 4}}}\n```",
			LLMEvalFive, "2 3 4", "", []string{"flat", "", ""}},
		{"per-criterion objects mixed with bare numbers", `{"Engagingness": 3, "Factual consistency": {"rating": 2, "reason": "one slip"}, "Grammar": 4}`,
			LLMEvalFive, "3 2 4", "", []string{"", "one slip", ""}},
		{"score key and another number", `{"Engagingness": {"score": 3, "max": 5}, "Factual consistency": {"score": 2, "confidence": 0.9}, "Grammar": {"score": 0}}`,
			LLMEvalFive, "3 2 0", "", nil},
		{"two numbers, no score key: missing with a reason, not a guess",
			`{"Engagingness": {"clarity": 3, "depth": 4, "reason": "mixed"}, "Factual consistency": {"score": 2}, "Grammar": {"score": 1}}`, LLMEvalFive, "- 2 1",
			`Engagingness: the object holds "clarity": 3, "depth": 4 but no score key (score, rating, value), so which number is the score cannot be told`,
			[]string{"mixed", "", ""}},
		{"one number under another key is not read as the score",
			`{"Engagingness": {"confidence": 0.9}, "Factual consistency": {"score": 2}, "Grammar": {"score": 1}}`, LLMEvalFive, "- 2 1",
			`Engagingness: the object holds "confidence": 0.9 but no score key (score, rating, value), so which number is the score cannot be told`, nil},
		{"two score keys that disagree", `{"Engagingness": {"score": 3, "rating": 4}, "Factual consistency": {"score": 2, "rating": 2}, "Grammar": {"score": 1}}`,
			LLMEvalFive, "- 2 1", "Engagingness: the object gives 2 different scores (3, 4); none kept", nil},
		{"score key without a number", `{"Engagingness": {"score": "3", "reason": "good"}, "Factual consistency": {"score": null}, "Grammar": {"reason": "fine"}}`,
			LLMEvalFive, "- - -",
			`Engagingness: the object's "score": "3" is not a number | Factual consistency: the object's "score": null is not a number | Grammar: the object holds no score (a number under score, rating, value)`,
			[]string{"good", "", "fine"}},
		{"nested score outside the scale keeps its reason", `{"Engagingness": {"score": 8, "reason": "superb"}, "Factual consistency": {"score": 2}, "Grammar": {"score": 1}}`,
			LLMEvalFive, "- 2 1", "Engagingness: 8 is outside [0, 5]", []string{"superb", "", ""}},
		{"nested answer repeated with the same score", `{"Engagingness": {"score": 3, "reason": "ok"}} then {"Engagingness": 3.0, "Factual consistency": {"score": 2}, "Grammar": {"value": 1}}`,
			LLMEvalFive, "3 2 1", "", []string{"ok", "", ""}},
		{"nested answers that disagree", `{"Engagingness": {"score": 3}, "Factual consistency": {"score": 2}, "Grammar": {"score": 1}} {"Engagingness": {"score": 4}}`,
			LLMEvalFive, "- 2 1", "Engagingness: given 2 different scores (3, 4); none kept", nil},

		// Scores and reasons given as separate objects: the reasons were
		// dropped; each is now kept as its criterion's, as a
		// per-criterion object's is.
		{"scores and reasons wrapped side by side", `{"scores": {"Engagingness": 3, "Factual consistency": 2.5, "Grammar": 5}, "reasons": {"Engagingness": "dull", "Grammar": "fine"}}`,
			LLMEvalFive, "3 2.5 5", "", []string{"dull", "", "fine"}},
		{"reasons before scores in the wrapper", `{"reasons": {"Engagingness": "dull"}, "scores": {"Engagingness": 1, "Factual consistency": 2, "Grammar": 3}}`,
			LLMEvalFive, "1 2 3", "", []string{"dull", "", ""}},
		{"explanations two levels deep, any case of key", `{"evaluation": {"Scores": {"Engagingness": 60, "Factual consistency": 70, "Grammar": 80}, "Explanations": {"engagingness": " asks back ", "Factual_Consistency": "matches"}}}`,
			LLMEvalHundred, "60 70 80", "", []string{"asks back", "matches", ""}},
		{"a reason given apart and in a per-criterion object", `{"scores": {"Engagingness": {"score": 2, "reason": "flat"}, "Factual consistency": 3, "Grammar": 4}, "rationale": {"Engagingness": "no question back", "Grammar": ""}}`,
			LLMEvalFive, "2 3 4", "", []string{"flat\n\nno question back", "", ""}},
		{"a reason kept when its score is not", `{"scores": {"Engagingness": 9, "Factual consistency": 3, "Grammar": 4}, "reasons": {"Engagingness": "superb"}}`,
			LLMEvalFive, "- 3 4", "Engagingness: 9 is outside [0, 5]", []string{"superb", "", ""}},
		{"reasons without scores: missing, the reasons kept", `{"reasons": {"Engagingness": "dull", "Factual consistency": "fine", "Grammar": "clean"}}`,
			LLMEvalFive, "- - -", "Engagingness: missing from the JSON answer | Factual consistency: missing from the JSON answer | Grammar: missing from the JSON answer",
			[]string{"dull", "fine", "clean"}},
		// Reasons given beside top-level scores, and reasons given as
		// objects: the scores were read and the reasons dropped.
		{"reasons beside top-level scores", `{"Engagingness": 3, "Factual consistency": 2.5, "Grammar": 5, "reasons": {"Engagingness": "dull", "Grammar": "fine"}}`,
			LLMEvalFive, "3 2.5 5", "", []string{"dull", "", "fine"}},
		{"reasons beside top-level per-criterion objects", `{"Engagingness": {"score": 3, "reason": "flat"}, "Factual consistency": 2, "Grammar": 4, "Explanations": {"engagingness": "no question back"}}`,
			LLMEvalFive, "3 2 4", "", []string{"flat\n\nno question back", "", ""}},
		{"reasons as objects under a reason key", `{"scores": {"Engagingness": 3, "Factual consistency": 2, "Grammar": 4}, "reasons": {"Engagingness": {"reason": "dull"}, "Grammar": {"explanation": "clean", "comment": "one typo"}}}`,
			LLMEvalFive, "3 2 4", "", []string{"dull", "", "clean\n\none typo"}},
		{"an example object beside the scores is not read", `{"Engagingness": 3, "Factual consistency": 2, "Grammar": 4, "example": {"Engagingness": 1}}`,
			LLMEvalFive, "3 2 4", "", nil},
		{"text keyed by criterion outside a reason key is not a reason", `{"format": {"Engagingness": "a number from 0 to 5"}, "scores": {"Engagingness": 1, "Factual consistency": 2, "Grammar": 3}}`,
			LLMEvalFive, "1 2 3", "", nil},
	}
	for _, tt := range nested {
		checkLLMEvalAnswer(t, tt.name, tt.text, tt.scale, tt.scores, tt.problems, tt.reasons)
	}
}

// checkLLMEvalAnswer parses text with llmevalRubric and checks its scores
// (formatScores), problems (joined with " | ") and reasons (nil: none).
func checkLLMEvalAnswer(t *testing.T, name, text string, scale LLMEvalScale, wantScores, wantProblems string, wantReasons []string) {
	t.Helper()
	r := llmevalRubric()
	scores, reasons, problems := ParseLLMEvalAnswer(text, r, scale)
	if got := formatScores(scores); got != wantScores {
		t.Errorf("%s: scores %q, want %q (problems %q)", name, got, wantScores, problems)
	}
	if got := strings.Join(problems, " | "); got != wantProblems {
		t.Errorf("%s: problems %q, want %q", name, got, wantProblems)
	}
	if wantReasons == nil {
		wantReasons = make([]string, len(r.Criteria))
	}
	if !slices.Equal(reasons, wantReasons) {
		t.Errorf("%s: reasons %q, want %q", name, reasons, wantReasons)
	}
}

func TestNormKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Factual consistency", "factualconsistency"},
		{" factual_Consistency ", "factualconsistency"},
		{"Over-all", "overall"},
	}
	for _, tt := range tests {
		if got := normKey(tt.in); got != tt.want {
			t.Errorf("normKey(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := fmt.Sprint(jsonString(`a "b" <c>`)); got != `"a \"b\" <c>"` {
		t.Errorf("jsonString = %s", got)
	}
}
