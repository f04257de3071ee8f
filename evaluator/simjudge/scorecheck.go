package simjudge

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
)

// scoreCheckMarker opens the prompt of evaluator.ScoreCheckMessages, the
// scoring request of "Test connection"; the tests send the real prompt, so
// a change of wording there fails here first.
const scoreCheckMarker = "This is a connection test from BatchEval."

// scoreCheckCriterionRE reads the criterion the score check names.
var scoreCheckCriterionRE = regexp.MustCompile(`Rate the sample below on (.*?)\.\n`)

// matchScoreCheck answers the score check the way a judge should: only the
// score-list line it asks for, the sample scored from the same features as
// in a batch, and a note that the judge is simulated.
func matchScoreCheck(c *call) (answerFunc, bool) {
	last := c.Messages[len(c.Messages)-1]
	if last.Role != "user" || !strings.HasPrefix(last.Content, scoreCheckMarker) {
		return nil, false
	}
	m := scaleRE.FindStringSubmatch(last.Content)
	_, rest, found := strings.Cut(last.Content, "\nSample1: ")
	if m == nil || !found {
		return nil, false
	}
	lo, err1 := strconv.ParseFloat(m[2], 64)
	hi, err2 := strconv.ParseFloat(m[3], 64)
	if err1 != nil || err2 != nil || !(lo < hi) {
		return nil, false
	}
	sample, _, _ := strings.Cut(rest, "\n")
	p := &batchPrompt{lo: lo, hi: hi, integer: m[1] == "integer", text: sample,
		samples: [][]evaluator.Text{{{Label: "Text", Value: sample}}}}
	if cm := scoreCheckCriterionRE.FindStringSubmatch(last.Content); cm != nil {
		p.criterion = cm[1]
	}
	return func(choice int) reply {
		return reply{Content: scoreListName(p) + ": [Sample1:" + formatScore(p, judge(c, p, 0, choice).score) + "] (simulated judge)"}
	}, true
}
