package simjudge

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
)

// The wording of evaluator.BuildAnalyzeRatePrompt that the simulated judge reads.
const ratingRequest = "\nRating: <score>\n"

var (
	oneCriterionRE = regexp.MustCompile(`(?m)^Your job is to rate the sample on one criterion, (.*), by first analysing it and then rating it\.$`)
	ratingScaleRE  = regexp.MustCompile(`(?m)^Scale: a score within \[([^,\]]+), ([^\]]+)\]`)
)

// matchAnalyzeRate answers the analyze-rate prompt: a short analysis that
// names the features behind the score, then "Rating: x" with one decimal.
// Every choice draws its own noise, so n choices give n different ratings
// to average. With Options.MissRate some answers end without a rating.
func matchAnalyzeRate(c *call) (answerFunc, bool) {
	content, ok := lastUser(c)
	if !ok || !strings.Contains(content, ratingRequest) {
		return nil, false
	}
	m := ratingScaleRE.FindStringSubmatch(content)
	fields, section, ok := readOneSample(content)
	if m == nil || !ok {
		return nil, false
	}
	lo, err1 := strconv.ParseFloat(m[1], 64)
	hi, err2 := strconv.ParseFloat(m[2], 64)
	if err1 != nil || err2 != nil || !(lo < hi) {
		return nil, false
	}
	p := &batchPrompt{lo: lo, hi: hi, samples: [][]evaluator.Text{fields}, text: section + "\x00analyze-rate",
		integer: strings.Contains(content, evaluator.AnalyzeRateIntegerNote)}
	if cm := oneCriterionRE.FindStringSubmatch(content); cm != nil {
		p.criterion = cm[1]
	}
	return func(choice int) reply {
		v := judge(c, p, 0, choice)
		var b strings.Builder
		b.WriteString("(Simulated judge: this analysis and rating are computed from word counts, lexical variety, " +
			"questions and word overlap. No language model read the sample.)\n\n")
		b.WriteString(analysis(p, 0, v))
		if !v.omit {
			b.WriteString("\n\nRating: " + formatScore(p, v.score))
		}
		return reply{Content: b.String()}
	}, true
}
