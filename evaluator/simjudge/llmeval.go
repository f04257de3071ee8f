package simjudge

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
)

// The wording of evaluator.BuildLLMEvalPrompt that the simulated judge reads.
const llmevalRequest = "Answer with exactly one JSON object"

var (
	// llmevalScaleRE reads "Scale for every criterion: a number from 0 to 5"
	// or "... an integer from 0 to 100".
	llmevalScaleRE = regexp.MustCompile(`(?m)^Scale for every criterion: (a number|an integer) from (-?\d+(?:\.\d+)?) to (-?\d+(?:\.\d+)?)`)
	// llmevalKeyRE reads the criterion names of the JSON template,
	// "Name": <score>; group 1 is the JSON string.
	llmevalKeyRE = regexp.MustCompile(`("(?:[^"\\]|\\.)*"): <score>`)
)

// matchLLMEval answers LLM-Eval's prompt with one JSON object holding a
// score for every criterion of the template, each from the batch features
// with that criterion's weights and its own noise. When the request asks
// for JSON (response_format json_object or json_schema) the answer is the
// bare object; otherwise it is wrapped in a sentence and a code fence, as
// chatty models do, to exercise the parser. With Options.MissRate some
// criteria are left out.
func matchLLMEval(c *call) (answerFunc, bool) {
	content, ok := lastUser(c)
	if !ok || !strings.Contains(content, llmevalRequest) {
		return nil, false
	}
	m := llmevalScaleRE.FindStringSubmatch(content)
	fields, section, ok := readOneSample(content)
	if m == nil || !ok {
		return nil, false
	}
	lo, err1 := strconv.ParseFloat(m[2], 64)
	hi, err2 := strconv.ParseFloat(m[3], 64)
	if err1 != nil || err2 != nil || !(lo < hi) {
		return nil, false
	}
	var names []string
	format := content[strings.LastIndex(content, outputHeading):]
	for _, k := range llmevalKeyRE.FindAllStringSubmatch(format, -1) {
		var name string
		if err := json.Unmarshal([]byte(k[1]), &name); err == nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, false
	}
	prompts := make([]*batchPrompt, len(names))
	for i, name := range names {
		// The criterion's name is part of the text so that each criterion
		// draws its own noise.
		prompts[i] = &batchPrompt{criterion: name, lo: lo, hi: hi, integer: m[1] == "an integer",
			samples: [][]evaluator.Text{fields}, text: section + "\x00llmeval\x00" + name}
	}
	return func(choice int) reply {
		parts := make([]string, 0, len(names))
		for i, p := range prompts {
			v := judge(c, p, 0, choice)
			if v.omit {
				continue
			}
			key, _ := json.Marshal(names[i]) // a string always encodes
			parts = append(parts, string(key)+": "+formatScore(p, v.score))
		}
		obj := "{" + strings.Join(parts, ", ") + "}"
		if c.JSONFormat {
			return reply{Content: obj}
		}
		return reply{Content: "Simulated judge: these scores come from word counts, lexical variety, questions and word overlap; " +
			"no language model read the sample.\n```json\n" + obj + "\n```"}
	}, true
}
