package evaluator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file holds LLM-Eval (Lin and Chen, 2023): one call per sample that
// scores every criterion of the rubric at once, as one JSON object. Scores
// are on LLM-Eval's own scale (0-5 or 0-100), not on each criterion's
// [Lo, Hi]; correlations do not care, and a comparison that needs the
// criterion's scale must map them linearly.

// llmevalScoreSlot stands for a score in the JSON template of the prompt;
// the simulated judge reads the criterion names from "<name>": <score>.
const llmevalScoreSlot = "<score>"

// BuildLLMEvalPrompt builds LLM-Eval's prompt for one sample: the task,
// every criterion of r with its description and level descriptions placed
// on the scale, the sample's fields, and a request for exactly one JSON
// object with one key per criterion name, e.g.
// {"Coherence": <score>, "Engagingness": <score>}. On LLMEvalFive a score
// is a number from 0 to 5 with one decimal; on LLMEvalHundred an integer
// from 0 to 100 (any other value is taken as LLMEvalFive, as Range does).
func BuildLLMEvalPrompt(r Rubric, s Sample, scale LLMEvalScale) []Message {
	lo, hi := scale.Range()
	k := len(r.Criteria)
	var b strings.Builder
	b.WriteString(headingTask + "\n")
	writeSampleIntro(&b, r.Task, fieldLabels([]Sample{s}))
	fmt.Fprintf(&b, "Your job is to rate the sample on %s below, all on the same scale, and to answer with a single JSON object.\n\n",
		plural(k, "the one criterion", fmt.Sprintf("each of the %d criteria", k)))

	b.WriteString(headingAllCrit + "\n")
	fmt.Fprintf(&b, "Scale for every criterion: %s.\n", llmevalScaleText(scale))
	for _, c := range r.Criteria {
		b.WriteString("\n")
		writeCriterionName(&b, c)
		writeLevels(&b, c.Levels, lo, hi, func(at float64) string { return "A score near " + formatNumber(at) })
	}
	b.WriteString("\n")
	for _, c := range r.Criteria {
		writeExamples(&b, c, lo, hi)
	}

	writeSampleSection(&b, s)

	b.WriteString(headingFormat + "\n")
	b.WriteString("Answer with exactly one JSON object and nothing else: no code fence, no explanation. " +
		"It must have one key per criterion, spelled exactly as below, each holding that criterion's score:\n")
	parts := make([]string, k)
	for i, c := range r.Criteria {
		parts[i] = jsonString(c.Name) + ": " + llmevalScoreSlot
	}
	b.WriteString("{" + strings.Join(parts, ", ") + "}\n")
	fmt.Fprintf(&b, "Replace each %s with %s.\n", llmevalScoreSlot, llmevalScaleText(scale))
	return []Message{{Role: "system", Content: sampleSystemPrompt}, {Role: "user", Content: b.String()}}
}

// llmevalScaleText says what a score is on the scale.
func llmevalScaleText(scale LLMEvalScale) string {
	if scale == LLMEvalHundred {
		return "an integer from 0 to 100"
	}
	return "a number from 0 to 5 with one decimal, such as 3.5"
}

// LLMEvalSchema is the JSON schema of an LLM-Eval answer, for endpoints
// with structured output (response_format json_schema): an object with one
// number property per criterion name, bounded by the scale, all required
// and nothing else allowed (the strict subset OpenAI accepts). The 0-100
// scale's integers are asked for by the prompt, not by the schema, so that
// one schema shape serves both scales; ParseLLMEvalAnswer accepts any
// in-range number.
func LLMEvalSchema(r Rubric, scale LLMEvalScale) map[string]any {
	lo, hi := scale.Range()
	props := make(map[string]any, len(r.Criteria))
	required := make([]string, 0, len(r.Criteria))
	for _, c := range r.Criteria {
		props[c.Name] = map[string]any{"type": "number", "minimum": lo, "maximum": hi}
		required = append(required, c.Name)
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

// jsonPair is one key and value of a JSON object, in the order written.
type jsonPair struct {
	key   string
	value json.RawMessage
}

// ParseLLMEvalAnswer reads an answer to BuildLLMEvalPrompt: one score per
// criterion of r, in rubric order, nil where it could not be read; the
// reason the judge gave with each score, "" where it gave none; and one
// plain-English line per failure.
//
// The answer is every JSON object in the text that names at least one
// criterion, so code fences, text around them and objects that name none
// (an echo of the format such as {"criterion": "score"}) are passed over.
// An object that names no criterion is opened to look for ones that do
// inside it, at any depth: {"scores": {...}, "reasons": {...}}. An object
// under a reason key ("reasons", "explanations", ...; reasonKey) whose
// criterion keys hold text, not scores, gives each criterion's reason, as
// a per-criterion object's does; so does one beside the scores
// ({"Coherence": 4, "reasons": {"Coherence": "..."}}), and a criterion's
// key there may hold an object with the text under a reason key. When some of the other objects found
// hold a score under a criterion's key, those that do not (text keyed by
// criterion outside a reason key, which may be an echo of the format) are
// dropped. Keys match criterion names ignoring case, spaces, underscores
// and hyphens; keys that match no criterion are ignored.
//
// A criterion's key holds a JSON number, or an object with the number
// under a score key and, optionally, the judge's reason (a common judge
// format: {"Coherence": {"score": 3, "reason": "..."}}; see
// readNestedScore). A missing key, a value that is not a JSON number
// ("high", "3", null), an object whose score cannot be told (no score key,
// two different scores), two different values for one criterion (one
// object giving a key twice, or two objects disagreeing, as when the judge
// echoes an example before its answer), and a number outside the scale's
// range are failures of that criterion: its score is nil, never 0.
//
// When no JSON object names a criterion (or there is no object), score
// lines are read instead: "Coherence: 3", "**Grammar:** 4/5", "Score: 3"
// for a rubric of one criterion (readLLMEvalLines, with what it refuses).
// So they are when the only objects naming a criterion fail to decode (cut
// off, a trailing comma): the lines outside the broken object are read, and
// a number the broken object gives a criterion must agree with its line, or
// the criterion is missing (readLLMEvalLinesBesideBrokenJSON). When there
// are no lines either, every score is nil and the one problem says why.
// Free prose ("I'd give it a 3") is never read: "a 3 out of 5 rather than
// a 4" names two numbers, and which one is the score is a guess.
func ParseLLMEvalAnswer(text string, r Rubric, scale LLMEvalScale) (scores []*float64, reasons []string, problems []string) {
	scores = make([]*float64, len(r.Criteria))
	reasons = make([]string, len(r.Criteria))
	text, only := StripReasoning(text)
	if only {
		return scores, reasons, []string{reasoningOnlyProblem}
	}
	if strings.Contains(text, "\u2212") {
		text = jsonMinus.ReplaceAllString(text, "${1}-${2}")
	}
	if strings.Contains(text, "+") {
		text = jsonPlus.ReplaceAllString(text, "${1}${2}")
	}
	pairs, reasonPairs, problem, noCriterion := findScoreObjects(text, r)
	if problem != "" {
		// No JSON object names a criterion, or the one that does fails to
		// decode: read score lines instead ("Coherence: 3", "Score: 4" for
		// one criterion; llmeval_lines.go). A broken object's numbers are
		// not read as scores, only held against the lines
		// (readLLMEvalLinesBesideBrokenJSON). With no line either, the
		// answer keeps its one problem.
		if noCriterion {
			if s, why, p, ok := readLLMEvalLines(text, r, scale); ok {
				return s, why, p
			}
		} else if s, why, p, ok := readLLMEvalLinesBesideBrokenJSON(text, r, scale, problem); ok {
			return s, why, p
		}
		return scores, reasons, []string{problem}
	}
	lo, hi := scale.Range()
	for i, c := range r.Criteria {
		want := normKey(c.Name)
		var values []float64
		var raws, why []string
		bad := ""
		for _, p := range pairs {
			if normKey(p.key) != want {
				continue
			}
			cv := readCriterionValue(p.value)
			if cv.reason != "" && !slices.Contains(why, cv.reason) {
				why = append(why, cv.reason)
			}
			if cv.bad != "" {
				bad = c.Name + ": " + cv.bad
				continue
			}
			if !slices.Contains(values, cv.score) {
				values, raws = append(values, cv.score), append(raws, cv.raw)
			}
		}
		// Reasons given apart from the scores ({"reasons": {...}}).
		for _, p := range reasonPairs {
			if normKey(p.key) != want {
				continue
			}
			if s := reasonText(p.value); s != "" && !slices.Contains(why, s) {
				why = append(why, s)
			}
		}
		// The judge's words are kept even when its score is not: they
		// are what a reviewer reads to see what went wrong.
		reasons[i] = strings.Join(why, "\n\n")
		switch {
		case len(values) > 1:
			problems = append(problems, fmt.Sprintf("%s: given %d different scores (%s); none kept", c.Name, len(values), strings.Join(raws, ", ")))
		case len(values) == 1 && (values[0] < lo || values[0] > hi):
			problems = append(problems, fmt.Sprintf("%s: %s is outside [%s, %s]", c.Name, raws[0], formatNumber(lo), formatNumber(hi)))
		case len(values) == 1:
			v := values[0] + 0 // "-0" is the score 0, not negative zero (fix-parse29)
			scores[i] = &v
		case bad != "":
			problems = append(problems, bad)
		default:
			problems = append(problems, fmt.Sprintf("%s: missing from the JSON answer", c.Name))
		}
	}
	return scores, reasons, problems
}

// jsonMinus finds a typeset minus sign (U+2212) opening a number after a
// key's colon: {"Coherence": −1}. JSON has no such minus, so the whole
// answer failed to decode and every criterion was lost; it is a minus
// (fix-parse28). Only the place of a value is rewritten, so a reason's
// text keeps its "−" except after a colon and before a digit.
//
// Since fix-parse29 the number must also end where a value ends (at a
// comma, brace or bracket), so that a reason's "tone: −2 for typos" is
// left as written.
var jsonMinus = regexp.MustCompile(`(:[ \t\r\n]*)\x{2212}([0-9][0-9.eE+\-]*[ \t\r\n]*[,}\]])`)

// jsonPlus finds an explicit plus sign opening a number after a key's
// colon: {"Coherence": +3}. JSON has no plus sign, so the whole answer
// failed to decode and every criterion was lost; "+3" is 3 (fix-parse29).
// As with jsonMinus, only a value's place is rewritten: "style: +1 for
// rhythm" in a reason is left alone.
var jsonPlus = regexp.MustCompile(`(:[ \t\r\n]*)\+([0-9.][0-9.eE+\-]*[ \t\r\n]*[,}\]])`)

// criterionValue is what one criterion's key holds, read: its score and
// the score's JSON text (raw), the judge's reason, or why no score could
// be read (bad, naming the value).
type criterionValue struct {
	score  float64
	raw    string
	reason string
	bad    string
}

// nestedScoreKeys are the keys a per-criterion object holds its score
// under, as normKey folds them ({"score": 3}, {"Rating": 3}, {"value": 3}).
var nestedScoreKeys = []string{"score", "rating", "value"}

// nestedReasonKeys are the keys a per-criterion object holds the judge's
// reason under, as normKey folds them.
var nestedReasonKeys = []string{"reason", "reasoning", "rationale", "explanation", "justification", "analysis", "comment"}

// readCriterionValue reads a criterion key's value: a JSON number, or an
// object holding one (readNestedScore).
func readCriterionValue(value json.RawMessage) criterionValue {
	raw := strings.TrimSpace(string(value))
	if strings.HasPrefix(raw, "{") {
		return readNestedScore(raw)
	}
	v, err := jsonNumber(raw)
	if err != nil {
		return criterionValue{bad: raw + " is not a number"}
	}
	return criterionValue{score: v, raw: raw}
}

// readNestedScore reads a per-criterion object such as {"score": 3,
// "reason": "..."}: the score is the JSON number under a score key
// (nestedScoreKeys, any case), the reason the text under reason keys
// (nestedReasonKeys), joined by a blank line when there are several.
//
// Only a score key is read as the score. An object without one holds no
// score it names, even with one number in it: {"confidence": 0.9} or
// {"max": 5} is not a rating, and guessing would store a wrong score where
// a missing one is the truth. Two score keys with different numbers, or a
// score key that holds no number ("3", "high"), leave the score missing
// too, each with its own problem line.
func readNestedScore(raw string) criterionValue {
	pairs, _, err := decodeObjectAt(raw)
	if err != nil {
		// It decoded as part of the whole answer, so this cannot happen.
		return criterionValue{bad: raw + " is not a number"}
	}
	var out criterionValue
	var reasons, numbers, found, notNumbers []string
	var values []float64
	for _, p := range pairs {
		key := normKey(p.key)
		text := strings.TrimSpace(string(p.value))
		if slices.Contains(nestedReasonKeys, key) {
			var s string
			if json.Unmarshal(p.value, &s) == nil && strings.TrimSpace(s) != "" && !slices.Contains(reasons, strings.TrimSpace(s)) {
				reasons = append(reasons, strings.TrimSpace(s))
			}
			continue
		}
		v, numErr := jsonNumber(text)
		if numErr == nil {
			numbers = append(numbers, jsonString(p.key)+": "+text)
		}
		if !slices.Contains(nestedScoreKeys, key) {
			continue
		}
		if numErr != nil {
			notNumbers = append(notNumbers, jsonString(p.key)+": "+text)
			continue
		}
		if !slices.Contains(values, v) {
			values, found = append(values, v), append(found, text)
		}
	}
	out.reason = strings.Join(reasons, "\n\n")
	switch {
	case len(values) > 1:
		out.bad = fmt.Sprintf("the object gives %d different scores (%s); none kept", len(values), strings.Join(found, ", "))
	case len(values) == 1:
		out.score, out.raw = values[0], found[0]
	case len(notNumbers) > 0:
		out.bad = "the object's " + notNumbers[0] + " is not a number"
	case len(numbers) > 0:
		out.bad = fmt.Sprintf("the object holds %s but no score key (%s), so which number is the score cannot be told",
			strings.Join(numbers, ", "), strings.Join(nestedScoreKeys, ", "))
	default:
		out.bad = "the object holds no score (a number under " + strings.Join(nestedScoreKeys, ", ") + ")"
	}
	return out
}

// findScoreObjects returns the keys and values of every JSON object in
// text that names a criterion of r (see ParseLLMEvalAnswer), in the order
// written: those read for scores, and apart those of the objects under a
// reason key that hold no score (reasons). Or a problem line when there is
// none: that no object decodes, the first decoding error when one did not
// (the likeliest place of a broken answer), or that the objects found name
// no criterion.
//
// noCriterion is true when the problem is that no object names a criterion
// (or there is no object at all), not that one failed to decode.
func findScoreObjects(text string, r Rubric) (pairs, reasons []jsonPair, problem string, noCriterion bool) {
	names := make(map[string]bool, len(r.Criteria))
	for _, c := range r.Criteria {
		names[normKey(c.Name)] = true
	}
	firstErr := ""
	decoded := false
	var found []criterionObject
	for i := 0; i < len(text); i++ {
		if text[i] != '{' {
			continue
		}
		pairs, n, err := decodeObjectAt(text[i:])
		if err != nil {
			if firstErr == "" {
				firstErr = err.Error()
			}
			continue
		}
		decoded = true
		found = append(found, criterionObjects(pairs, "", names)...)
		i += n - 1 // the objects inside were looked at by criterionObjects
	}
	if len(found) == 0 {
		switch {
		case firstErr != "":
			return nil, nil, "the JSON object in the answer is not valid JSON: " + firstErr, false
		case decoded:
			crits := make([]string, len(r.Criteria))
			for i, c := range r.Criteria {
				crits[i] = c.Name
			}
			return nil, nil, "no JSON object in the answer names a criterion (" + strings.Join(crits, ", ") + ")", true
		default:
			// Said only when no score line is read either (the caller
			// tries them): a score in a sentence ("I'd give it a 3 out of
			// 5 rather than a 4") is not read, so the line to write is
			// named, with the first criterion.
			example := "Score: 3"
			if len(r.Criteria) > 0 {
				example = r.Criteria[0].Name + ": 3"
			}
			return nil, nil, fmt.Sprintf("no JSON object found in the answer, and no score line such as %q (a score in a sentence is not read)", example), true
		}
	}
	// Text keyed by criterion name is not a score: under a reason key it
	// is the judge's reasons; elsewhere, when some object holds a number
	// under a criterion, it is dropped (it may echo the format).
	numeric := slices.ContainsFunc(found, func(o criterionObject) bool { return holdsScore(o.pairs, names) })
	for _, o := range found {
		switch {
		case holdsScore(o.pairs, names):
			pairs = append(pairs, o.pairs...)
		case reasonKey(o.under):
			reasons = append(reasons, o.pairs...)
		case !numeric:
			pairs = append(pairs, o.pairs...)
		}
	}
	return pairs, reasons, "", false
}

// criterionObject is a JSON object one of whose keys names a criterion,
// with the key it is the value of (under, as normKey folds it; "" for an
// object not inside another).
type criterionObject struct {
	pairs []jsonPair
	under string
}

// reasonText is the judge's reason under a criterion's key of a reasons
// object: the text itself ({"reasons": {"Coherence": "..."}}), or the text
// under the reason keys of an object ({"reasons": {"Coherence": {"reason":
// "..."}}}), joined by a blank line; "" when there is none.
func reasonText(value json.RawMessage) string {
	var s string
	if json.Unmarshal(value, &s) == nil {
		return strings.TrimSpace(s)
	}
	if raw := strings.TrimSpace(string(value)); strings.HasPrefix(raw, "{") {
		return readNestedScore(raw).reason
	}
	return ""
}

// criterionObjects returns pairs (the value of the key under) when one of
// its keys names a criterion, else the objects inside its values that do,
// at any depth, in order. Beside an object that names a criterion, only
// its values under reason keys are looked into ({"Coherence": 4,
// "reasons": {"Coherence": "..."}}): an object under another key, such as
// "example", is not the answer.
func criterionObjects(pairs []jsonPair, under string, names map[string]bool) []criterionObject {
	if slices.ContainsFunc(pairs, func(p jsonPair) bool { return names[normKey(p.key)] }) {
		out := []criterionObject{{pairs: pairs, under: under}}
		for _, p := range pairs {
			key := normKey(p.key)
			if names[key] || !reasonKey(key) {
				continue
			}
			if v := bytes.TrimSpace(p.value); len(v) > 0 && v[0] == '{' {
				if inner, _, err := decodeObjectAt(string(v)); err == nil {
					out = append(out, criterionObjects(inner, key, names)...)
				}
			}
		}
		return out
	}
	var out []criterionObject
	for _, p := range pairs {
		if v := bytes.TrimSpace(p.value); len(v) > 0 && v[0] == '{' {
			if inner, _, err := decodeObjectAt(string(v)); err == nil {
				out = append(out, criterionObjects(inner, normKey(p.key), names)...)
			}
		}
	}
	return out
}

// reasonKey reports whether key (as normKey folds it) names the judge's
// reasons: a reason key of a per-criterion object (nestedReasonKeys), or
// its plural ("reasons", "explanations", "analyses").
func reasonKey(key string) bool {
	return slices.Contains(nestedReasonKeys, key) || slices.Contains(nestedReasonKeys, strings.TrimSuffix(key, "s")) || key == "analyses"
}

// holdsScore reports whether a criterion's key holds a score in pairs: a
// JSON number, or an object with one under a score key.
func holdsScore(pairs []jsonPair, names map[string]bool) bool {
	return slices.ContainsFunc(pairs, func(p jsonPair) bool {
		return names[normKey(p.key)] && readCriterionValue(p.value).bad == ""
	})
}

// decodeObjectAt decodes the JSON object at the start of s (text after it
// is ignored), keeping its keys in order and repeated keys as they are, and
// returns how many bytes of s it took.
func decodeObjectAt(s string) ([]jsonPair, int, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	var whole json.RawMessage
	if err := dec.Decode(&whole); err != nil {
		return nil, 0, err
	}
	n := int(dec.InputOffset())
	dec = json.NewDecoder(bytes.NewReader(whole))
	if _, err := dec.Token(); err != nil { // the opening brace
		return nil, 0, err
	}
	var pairs []jsonPair
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, 0, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, 0, err
		}
		pairs = append(pairs, jsonPair{key: key, value: v})
	}
	return pairs, n, nil
}

// normKey folds a criterion name or JSON key for matching: lower case,
// without spaces, underscores or hyphens ("Factual_Consistency" matches
// "factual consistency").
func normKey(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '_', '-':
			return -1
		}
		return r
	}, strings.ToLower(strings.TrimSpace(s)))
}

// jsonNumber reads a raw JSON value that must be a number.
func jsonNumber(raw string) (float64, error) {
	if raw == "" || !(raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')) {
		return 0, fmt.Errorf("not a number: %s", raw)
	}
	return strconv.ParseFloat(raw, 64)
}

// jsonString writes s as a JSON string, without escaping <, > and &.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
