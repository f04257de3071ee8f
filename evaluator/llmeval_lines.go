package evaluator

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file reads an LLM-Eval answer written as lines instead of the JSON
// object the prompt asks for ("Coherence: 3", "**Score:** 4/5"). Judges
// that ignore the format write this way often enough (explore43's
// OpenAI-compatible judge answered "Score: N" and every score was lost),
// and the line says plainly which criterion each number is for. It is read
// only when no JSON object in the answer names a criterion, or when those
// that do fail to decode (llmeval_broken.go), so a JSON answer is read
// exactly as before.
//
// What is read: a line (after list markers, quotes and markdown emphasis
// are dropped) whose label names a criterion, or "<criterion> score", or,
// when the rubric has a single criterion, "Score", "Rating", "Final score"
// or "Overall score"; then ":" or "="; then a number first thing, with an
// optional "/max" or "out of max" that must be the scale's top; then
// nothing, or an explanation set off by punctuation (". ", ", ", " - ",
// "(") or "because", which becomes the criterion's reason. One line may
// score several criteria, cut at a comma, semicolon or bar before a
// criterion's label ("Coherence: 4, Fluency: 3").
//
// What is not read, leaving the score missing with a problem line: a
// second number joined to the first ("3-4", "3 or 4", "3, 4", "3 4"), a
// number followed by words that may make it a count rather than the score
// ("2 of the 3 facts"), a "/max" that is not the scale's top ("4/10" on
// 0-5), a number outside the scale, and two lines that give one criterion
// different scores (or a readable and an unreadable one). A label whose
// value does not start with a number ("Coherence: <score>", "Coherence:
// good") is passed over: it is an echo of the format or commentary.

// llmevalLineNumber is the number first thing in a value, optionally
// followed by its maximum ("/5", "out of 100").
var llmevalLineNumber = regexp.MustCompile(`^([+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+))(?:[ \t]*(?:/|out[ \t]+of)[ \t]*([0-9]+(?:\.[0-9]+)?))?`)

// llmevalSecondNumber is a second number joined to the first: a range or
// an alternative ("-4", "to 4", "or 4", ", 4", "/ 4" after the max, " 4"),
// or a time or version (":30", ". 5").
var llmevalSecondNumber = regexp.MustCompile(`^(?:-|\x{2013}|\x{2014}|~|to\b|or\b|and\b|,|/|;|:|\.)?[ \t]*[+-]?\.?[0-9]`)

// llmevalListMarker is a list or quote marker opening a line: "- ", "* ",
// "• ", "1. ", "2) ", "## ", "> ".
var llmevalListMarker = regexp.MustCompile(`^(?:[-*+>#\x{2022}]+|[0-9]+[.)])[ \t]+`)

// llmevalSingleLabels are the labels, as normKey folds them, that name the
// score of a rubric with one criterion.
var llmevalSingleLabels = []string{"score", "rating", "finalscore", "overallscore", "overallrating"}

// llmevalLine is one score line read for a criterion: the score and its
// text, the explanation after it, or why no score could be read (bad).
type llmevalLine struct {
	score  float64
	raw    string
	reason string
	bad    string
}

// readLLMEvalLines reads the score lines of text for each criterion of r
// (see the top of this file). found is false when no line names a
// criterion; then the caller keeps its own problem line.
func readLLMEvalLines(text string, r Rubric, scale LLMEvalScale) (scores []*float64, reasons, problems []string, found bool) {
	return readLLMEvalLinesAgainst(text, r, scale, nil, "no JSON object")
}

// readLLMEvalLinesAgainst is readLLMEvalLines with the numbers a broken
// JSON object gives the criteria (checks, which must agree with the lines)
// and what to say of the JSON in a criterion's missing-score problem
// (noJSON).
func readLLMEvalLinesAgainst(text string, r Rubric, scale LLMEvalScale, checks []brokenJSONValue, noJSON string) (scores []*float64, reasons, problems []string, found bool) {
	lines := make([][]llmevalLine, len(r.Criteria))
	var pieces []string
	for _, line := range strings.Split(cleanMarkdown(text), "\n") {
		pieces = append(pieces, llmevalLinePieces(line, r)...)
	}
	for _, line := range pieces {
		k, value, ok := llmevalLineLabel(line, r)
		if !ok {
			continue
		}
		l, ok := readLLMEvalValue(value, scale)
		if !ok {
			continue
		}
		lines[k] = append(lines[k], l)
		found = true
	}
	if !found {
		return nil, nil, nil, false
	}
	// The broken object's numbers come after the lines: a criterion with
	// no line is not read from them, and one with a line must agree.
	inJSON := make([][]string, len(r.Criteria))
	for _, v := range checks {
		if len(lines[v.criterion]) == 0 {
			if !v.cut {
				inJSON[v.criterion] = append(inJSON[v.criterion], v.raw)
			}
			continue
		}
		l := llmevalLine{score: v.score, raw: v.raw}
		if v.cut {
			l.bad = fmt.Sprintf("the JSON object gives %s but is cut off there, so the score it was writing cannot be told", v.raw)
		}
		lines[v.criterion] = append(lines[v.criterion], l)
	}
	scores = make([]*float64, len(r.Criteria))
	reasons = make([]string, len(r.Criteria))
	lo, hi := scale.Range()
	for i, c := range r.Criteria {
		var values []float64
		var raws, why, bad []string
		if len(lines[i]) == 0 && len(inJSON[i]) > 0 {
			problems = append(problems, fmt.Sprintf("%s: given %s only in a JSON object that is not valid JSON, which is not read, and in no line such as %q",
				c.Name, strings.Join(inJSON[i], ", "), c.Name+": 3"))
			continue
		}
		for _, l := range lines[i] {
			if l.reason != "" && !slices.Contains(why, l.reason) {
				why = append(why, l.reason)
			}
			if l.bad != "" {
				bad = append(bad, l.bad)
				continue
			}
			if !slices.Contains(values, l.score) {
				values, raws = append(values, l.score), append(raws, l.raw)
			}
		}
		reasons[i] = strings.Join(why, "\n\n")
		switch {
		case len(values) > 1:
			problems = append(problems, fmt.Sprintf("%s: given %d different scores (%s); none kept", c.Name, len(values), strings.Join(raws, ", ")))
		case len(bad) > 0:
			// An unreadable line beside a readable one may be the
			// score: keep neither rather than guess.
			problems = append(problems, c.Name+": "+bad[0])
		case len(values) == 1 && (values[0] < lo || values[0] > hi):
			problems = append(problems, fmt.Sprintf("%s: %s is outside [%s, %s]", c.Name, raws[0], formatNumber(lo), formatNumber(hi)))
		case len(values) == 1:
			v := values[0] + 0 // "-0" is the score 0
			scores[i] = &v
		default:
			problems = append(problems, fmt.Sprintf("%s: missing from the answer (%s, and no line such as %q)", c.Name, noJSON, c.Name+": 3"))
		}
	}
	return scores, reasons, problems, true
}

// llmevalPieceBreak is where a line may hold another criterion's score:
// "Coherence: 4, Fluency: 3; Grammar: 5 | ...".
var llmevalPieceBreak = regexp.MustCompile(`[,;|][ \t]*`)

// llmevalLinePieces cuts a line that scores several criteria ("Coherence:
// 4, Fluency: 3") into one piece per criterion: at a comma, semicolon or
// bar followed by a label that names a criterion. The text between is
// left with the piece before it, as its explanation ("Coherence: 4,
// because it flows; Fluency: 3"), and so is a number after a comma
// ("Coherence: 3, 4" stays one piece, and unreadable).
func llmevalLinePieces(line string, r Rubric) []string {
	var out []string
	start := 0
	for _, m := range llmevalPieceBreak.FindAllStringIndex(line, -1) {
		if _, _, ok := llmevalLineLabel(line[m[1]:], r); ok {
			out = append(out, line[start:m[0]])
			start = m[1]
		}
	}
	return append(out, line[start:])
}

// llmevalLineLabel splits line at its first ":" or "=" and returns the
// index of the criterion its label names and the value after it.
func llmevalLineLabel(line string, r Rubric) (k int, value string, ok bool) {
	line = strings.TrimSpace(line)
	for {
		m := llmevalListMarker.FindString(line)
		if m == "" {
			break
		}
		line = line[len(m):]
	}
	sep := strings.IndexAny(line, ":=")
	if sep <= 0 {
		return 0, "", false
	}
	label := strings.Trim(line[:sep], " \t*_\"'")
	// A range after the label: "Coherence (0-5): 3".
	if strings.HasSuffix(label, ")") {
		if open := strings.LastIndex(label, "("); open > 0 {
			label = strings.TrimSpace(label[:open])
		}
	}
	key := normKey(label)
	for i, c := range r.Criteria {
		name := normKey(c.Name)
		if key == name || key == name+"score" || key == name+"rating" {
			return i, line[sep+1:], true
		}
	}
	if len(r.Criteria) == 1 && slices.Contains(llmevalSingleLabels, key) {
		return 0, line[sep+1:], true
	}
	return 0, "", false
}

// readLLMEvalValue reads the value of a score line. ok is false when it
// does not start with a number (not a score line).
func readLLMEvalValue(value string, scale LLMEvalScale) (llmevalLine, bool) {
	v := strings.TrimLeft(value, " \t*_\"'")
	m := llmevalLineNumber.FindStringSubmatchIndex(v)
	if m == nil {
		return llmevalLine{}, false
	}
	raw := v[m[2]:m[3]]
	score, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return llmevalLine{}, false
	}
	out := llmevalLine{score: score, raw: raw}
	shown := strings.TrimSpace(v[:m[1]])
	if m[4] >= 0 {
		top, err := strconv.ParseFloat(v[m[4]:m[5]], 64)
		if _, hi := scale.Range(); err != nil || top != hi {
			out.bad = fmt.Sprintf("%q is out of %s, not the scale's %s", shown, v[m[4]:m[5]], formatNumber(hi))
		}
	}
	rest := strings.TrimLeft(v[m[1]:], " \t*_\"'")
	if out.bad != "" {
		out.reason = llmevalLineReason(rest)
		return out, true
	}
	// Only an explanation set off from the score is the judge's reason;
	// the rest of an unreadable value is shown in its problem line.
	lower := strings.ToLower(rest)
	switch {
	case rest == "":
	case llmevalSecondNumber.MatchString(lower):
		out.bad = fmt.Sprintf("%q gives more than one number, so which is the score cannot be told", strings.TrimSpace(v))
	case strings.HasPrefix(lower, "because") || strings.ContainsRune(".,;:|([-\u2013\u2014", []rune(rest)[0]):
		out.reason = llmevalLineReason(rest)
	default:
		out.bad = fmt.Sprintf("%q: the number is followed by words, so it cannot be told it is the score", strings.TrimSpace(v))
	}
	return out, true
}

// llmevalLineReason is the explanation after a score, without the
// punctuation that sets it off.
func llmevalLineReason(rest string) string {
	s := strings.TrimSpace(strings.TrimLeft(rest, " \t.,;:|-\u2013\u2014"))
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}
