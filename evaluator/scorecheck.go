package evaluator

import "fmt"

// The score check is the scoring call of "Test connection": one tiny sample,
// scored on one criterion, answered in the score-list template of the
// batch prompts ("Float Scores: [Sample1:<score>]") and read by
// ParseBatchAnswer, the reader every BatchEval run uses. A judge that
// answers it with a readable score can answer the product's prompts; one
// that answers anything else (a greeting, a refusal, a model that ignores
// instructions, a proxy's canned text) would leave a run without scores.
//
// It is kept small on purpose, a few dozen tokens each way, so that testing
// a judge costs next to nothing.

// scoreCheckSample is the one sample the check asks the judge to score: a
// short, plainly clear sentence, so any score in the range is a fair answer.
const scoreCheckSample = "The train leaves at nine, so please be at the station by half past eight."

// ScoreCheckCriterion is the criterion of the score check: clarity, on the
// paper's float scale of 1 to 5.
var ScoreCheckCriterion = Criterion{Name: "clarity", Lo: 1, Hi: 5}

// ScoreCheckMaxTokens caps the check's answer. The answer asked for,
// "Float Scores: [Sample1:4.5]", is about 10 tokens under the usual
// tokenizers; the cap leaves room for a few words around it while keeping
// the call tiny.
const ScoreCheckMaxTokens = 30

// ScoreCheckMessages is the prompt of the score check: one user message
// that asks for the score of a single sample in the batch prompts'
// score-list template and nothing else.
func ScoreCheckMessages() []Message {
	c := ScoreCheckCriterion
	content := fmt.Sprintf("This is a connection test from BatchEval. Rate the sample below on %s.\n\n"+
		"Sample1: %s\n\n"+
		"Reply with only this line, replacing <score> with %s:\n%s",
		c.Name, scoreCheckSample, scaleText(c, Decimal), scoreTemplate(Decimal, []int{1}))
	return []Message{{Role: "user", Content: content}}
}

// ReadScoreCheck reads the score of the score check's answer, as a run
// reads a batch answer. ok is false when no score in the criterion's range
// could be read.
func ReadScoreCheck(answer string) (score float64, ok bool) {
	a := ParseBatchAnswer(answer, 1, ScoreCheckCriterion)
	if len(a.Scores) != 1 || a.Scores[0] == nil {
		return 0, false
	}
	return *a.Scores[0], true
}
