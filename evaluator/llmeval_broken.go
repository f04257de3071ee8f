package evaluator

import (
	"encoding/json"
	"slices"
	"strings"
)

// This file reads an LLM-Eval answer whose JSON object fails to decode
// but which also gives its scores as lines: "Score: 3" followed by an
// object cut off by the token limit ({"Appropriateness": ), or an object
// with a trailing comma and the scores written again below it. Such an
// answer lost every score ("the JSON object in the answer is not valid
// JSON") although the lines say plainly which number is which criterion's.
//
// The broken object itself is not read: a decoder that guesses where an
// object was cut or what a stray character meant can store a wrong
// number. Its text is taken out of the answer before the lines are read,
// so that its own "key": value lines are not read as score lines either,
// and every number it gives a criterion is held against that criterion's
// line: a criterion whose line and object disagree, or whose object value
// is cut off mid-number, is missing with a problem naming it.

// brokenJSONValue is a number a JSON object that fails to decode gives a
// criterion: under the criterion's key, or under a score key of the
// object under it ({"Coherence": {"score": 3, ...). cut is true when the
// number runs to the end of the answer, so more digits may have been cut.
type brokenJSONValue struct {
	criterion int
	score     float64
	raw       string
	cut       bool
}

// readLLMEvalLinesBesideBrokenJSON reads the score lines of an answer
// whose JSON objects naming a criterion fail to decode (see the top of
// this file). decodeProblem is the JSON reader's problem line, given for a
// criterion that has no line. found is false when no score line is left
// once the broken objects are taken out.
func readLLMEvalLinesBesideBrokenJSON(text string, r Rubric, scale LLMEvalScale, decodeProblem string) (scores []*float64, reasons, problems []string, found bool) {
	rest, checks := takeOutBrokenJSON(text, r)
	return readLLMEvalLinesAgainst(rest, r, scale, checks, decodeProblem)
}

// takeOutBrokenJSON returns text with each JSON object that fails to
// decode replaced by a line break (objects that decode are left as they
// are), and the numbers those objects give the criteria of r.
func takeOutBrokenJSON(text string, r Rubric) (string, []brokenJSONValue) {
	var b strings.Builder
	var values []brokenJSONValue
	for i := 0; i < len(text); {
		open := strings.IndexByte(text[i:], '{')
		if open < 0 {
			b.WriteString(text[i:])
			break
		}
		b.WriteString(text[i : i+open])
		i += open
		if _, n, err := decodeObjectAt(text[i:]); err == nil {
			b.WriteString(text[i : i+n])
			i += n
			continue
		}
		n, found := scanBrokenJSON(text[i:], r)
		values = append(values, found...)
		b.WriteByte('\n')
		i += n
	}
	return b.String(), values
}

// brokenFrame is an object or array open in scanBrokenJSON: under is the
// criterion whose key it is the value of (-1: none), key the key read in
// an object and waiting for its value (nil: none).
type brokenFrame struct {
	object bool
	under  int
	key    *string
}

// scanBrokenJSON walks the JSON-like text at the start of s (an object
// that failed to decode) and returns how many bytes of s it spans and the
// numbers it gives the criteria of r, at any depth. The object ends at its
// closing brace, at the end of s, or at the first character that cannot be
// JSON outside a string (a letter that starts no true, false or null; a
// "<" of "<score>"), so that lines written after an unclosed object are
// still read as lines. Commas out of place are passed over: only a number
// under a criterion's key is kept, never guessed from its neighbours.
func scanBrokenJSON(s string, r Rubric) (int, []brokenJSONValue) {
	crit := func(key string) int {
		k := normKey(key)
		return slices.IndexFunc(r.Criteria, func(c Criterion) bool { return normKey(c.Name) == k })
	}
	var stack []brokenFrame
	var out []brokenJSONValue
	// value reports a value read at the top of the stack and clears the
	// key it was for: the criterion it belongs to, or -1.
	value := func() int {
		if len(stack) == 0 {
			return -1
		}
		top := &stack[len(stack)-1]
		k := top.key
		top.key = nil
		switch {
		case !top.object || k == nil:
			return -1
		case crit(*k) >= 0:
			return crit(*k)
		case top.under >= 0 && slices.Contains(nestedScoreKeys, normKey(*k)):
			return top.under
		}
		return -1
	}
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',':
			if c == ',' && len(stack) > 0 {
				stack[len(stack)-1].key = nil
			}
			i++
		case c == '{' || c == '[':
			under := -1
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				if top.object && top.key != nil {
					under = crit(*top.key)
				} else if !top.object {
					under = top.under
				}
				value()
			}
			stack = append(stack, brokenFrame{object: c == '{', under: under})
			i++
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			i++
			if len(stack) == 0 {
				return i, out
			}
		case c == '"':
			end := jsonStringEnd(s, i)
			if end < 0 { // cut inside a string
				return len(s), out
			}
			str := s[i:end]
			i = end
			j := i
			for j < len(s) && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
				j++
			}
			if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].key == nil && j < len(s) && s[j] == ':' {
				var key string
				if json.Unmarshal([]byte(str), &key) != nil {
					key = strings.Trim(str, `"`)
				}
				stack[len(stack)-1].key = &key
				i = j + 1
				continue
			}
			value()
		case c == '-' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(s) && strings.IndexByte("0123456789.eE+-", s[j]) >= 0 {
				j++
			}
			raw := s[i:j]
			i = j
			k := value()
			if k < 0 {
				continue
			}
			v, err := jsonNumber(raw)
			cut := j == len(s)
			if err != nil && !cut {
				continue // "3.4.5": no number; passed over, as "high" is
			}
			out = append(out, brokenJSONValue{criterion: k, score: v, raw: raw, cut: cut})
		default:
			word := ""
			for j := i; j < len(s) && s[j] >= 'a' && s[j] <= 'z'; j++ {
				word = s[i : j+1]
			}
			if word == "" || !(word == "true" || word == "false" || word == "null" ||
				(i+len(word) == len(s) && (strings.HasPrefix("true", word) || strings.HasPrefix("false", word) || strings.HasPrefix("null", word)))) {
				return i, out // not JSON: the object ends here
			}
			value()
			i += len(word)
		}
	}
	return len(s), out
}

// jsonStringEnd is the index just after the JSON string opening at s[i]
// (a '"'), or -1 when it is not closed.
func jsonStringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}
