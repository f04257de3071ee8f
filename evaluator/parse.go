package evaluator

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// BatchAnswer is what could be read from a judge's answer to a batch prompt.
// A sample whose score could not be read has a nil score and a line in
// Problems; a missing score is never written as 0 or -1.
type BatchAnswer struct {
	Scores   []*float64 // len n; Scores[i] is Sample(i+1)'s score, nil when missing
	Analyses []string   // len n; the judge's analysis of Sample(i+1), "" when none found
	Problems []string   // one plain-English line per failure, e.g. "Sample3: no score found"
}

// Missing lists the 1-based labels of the samples that have no score, in
// order: the labels to ask for in a repair request.
func (a BatchAnswer) Missing() []int {
	var out []int
	for i, s := range a.Scores {
		if s == nil {
			out = append(out, i+1)
		}
	}
	return out
}

// The patterns below are written once, as their bodies, so that the forms
// run over a whole text (the documented semantics) and the forms anchored
// at one position (run by the scanners in parsescan.go where they are not
// written out by hand) cannot drift apart. The anchored forms start with
// \A where the whole form starts with ^ or \b; for \b the scanners check
// the boundary themselves (see wordMatches).
const (
	// scoresMarker finds the start of a score list: "Float Scores:",
	// "Integer Scores:", "Final scores for Coherence:", "SCORES:".
	scoresMarkerBody = `scores\b[^:\n\[\]]{0,40}:`

	// labelRE finds a sample label: "Sample3", "sample 3", "Sample #3".
	labelBody = `sample\s*#?\s*(\d+)`

	// strictPair is a label and a score joined by ":" or "=" and ending the
	// item (end of line, comma or semicolon), for the last-resort search of
	// the whole answer, where looser forms would catch numbers in the prose
	// ("Sample1: 3 of its 5 sentences...").
	strictPairBody = `sample\s*#?\s*(\d+)[ \t*_)]*[:=][ \t*_]*([-+]?\d+(?:\.\d+)?)(?:[ \t]*/[ \t]*\d+(?:\.\d+)?)?[ \t*_]*(?:[,;]|\.?[ \t]*$)`

	// scoreOfRE reads one-stage score lines: "Score of Sample3: 2.5",
	// "Score for Sample 3 = 2".
	scoreOfBody = `score\s+(?:of|for)\s+sample\s*#?\s*(\d+)\b[ \t*_)]*[:=\-–—]?[ \t*_]*([-+]?\d+(?:\.\d+)?)\b`

	// scoreOfLine finds a one-stage score line, to end a sample's analysis.
	scoreOfLineBody = `[^\n]*\bscore\s+(?:of|for)\s+sample\s*#?\s*\d+[^\n]*$`

	// headingRE finds a line that opens one sample's analysis: "Sample1:",
	// "**Sample 1**", "### Sample 1", "- Sample1 -", "Analysis of Sample1:",
	// "2. Sample2: ...". A line that merely starts with a sample's name in
	// a sentence ("Sample2 is better...") is not a heading.
	headingBody = `[ \t>#*_\-•]*(?:\d+[.)][ \t]*)?(?:analysis\s+(?:of|for)\s+)?sample\s*#?\s*(\d+)\b[ \t*_)]*(?:[:\-–—.(]|$)[ \t*_]*`

	// rankingRE finds the start of a three-stage ranking section, which
	// ends the analysis part.
	rankingBody = `[ \t>#*_\-]*(?:step\s*2\b.*\brank.*|(?:final\s+|overall\s+)?ranking\b[^:\n]{0,40}:.*|(?:final\s+|overall\s+)?ranking[ \t]*|rank(?:ed)?\s+(?:order|from\s+best)\b.*)$`
)

var (
	// The whole-text forms are the specification. Only labelRE is run
	// here; the scanners of parsescan.go must find exactly what the others
	// find, which FuzzScannersMatchRegexps checks.
	scoresMarker = regexp.MustCompile(`(?i)\b` + scoresMarkerBody)
	labelRE      = regexp.MustCompile(`(?i)\b` + labelBody)
	strictPair   = regexp.MustCompile(`(?im)\b` + strictPairBody)
	scoreOfRE    = regexp.MustCompile(`(?i)\b` + scoreOfBody)
	scoreOfLine  = regexp.MustCompile(`(?im)^` + scoreOfLineBody)
	headingRE    = regexp.MustCompile(`(?im)^` + headingBody)
	rankingRE    = regexp.MustCompile(`(?im)^` + rankingBody)

	// The rare patterns, matching only at the start of the string given.
	strictPairAt = regexp.MustCompile(`(?im)\A` + strictPairBody)
	rankingAt    = regexp.MustCompile(`(?im)\A` + rankingBody)

	// scoreAfterLabel reads the score that directly follows a label:
	// "Sample3: 2.5", "Sample3 = 2.5", "Sample3 - 2.5", "Sample3): 2.5",
	// "Sample3 is 2.5", "Sample3: 2.5/3". Group 1 is the number. It is the
	// specification of matchScoreAfter.
	scoreAfterLabel = regexp.MustCompile(`^[ \t*_()\]]*(?:[:=\-–—]|\bis\b)?[ \t*_]*([-+]?\d+(?:\.\d+)?|[-+]?\.\d+)\b`)

	// listItemRE is a line of a score list written one per line: it starts
	// with a label, after any bullet or number ("- Sample1: 2", "2. Sample2 = 1").
	listItemRE = regexp.MustCompile(`(?i)^[ \t>#*_\-•+]*(?:\d+[.)][ \t]*)?(?:score\s+(?:of|for)\s+)?sample\s*#?\s*\d+`)
)

// scoreHit is one label and score read from the answer.
type scoreHit struct {
	label int
	value float64
	ok    bool   // false when the label had no readable number after it
	raw   string // the number as written
	// why, when not "", says why the number read is not the sample's score
	// on the criterion's scale: it opens a range ("3-4") or is out of
	// another maximum ("4/5" on [1, 10]); see scoreAside.
	why string
}

var (
	// asideRangeRE is a second number right after a score, making it a
	// range or a choice: "3-4", "3 – 4", "3 to 4", "3 or 4". A hyphen
	// between spaces is not taken for one ("1 - 3 points off"), as
	// CloserLook's scaleAfterRE does not.
	asideRangeRE = regexp.MustCompile(`(?i)^(?:-\d+(?:\.\d+)?|[ \t]*(?:[–—]|to\b|or\b)[ \t]*[-+]?\d+(?:\.\d+)?)`)
	// asideOutOfRE is the maximum a score is given out of: "/5", " / 10",
	// " out of 5", " of 5", " (out of 5)". Group 1 is the maximum. The
	// last three were read as scores on the criterion's scale until
	// fix-parse29 ("4 (out of 5)" on [1, 10] was 4).
	asideOutOfRE = regexp.MustCompile(`(?i)^[ \t]*(?:\([ \t]*)?(?:/|(?:out[ \t]+)?of\b)[ \t]*(\d+(?:\.\d+)?)`)
	// asideLabelRangeRE is a colon or "=" and a number right after a
	// number: "Sample1-3: 2" gives samples 1 to 3 one score, and was read
	// as Sample1 scored 3 (fix-parse29).
	asideLabelRangeRE = regexp.MustCompile(`^[ \t]*[:=][ \t*_]*[-+]?\.?\d+`)
	// asideCommaRE is a comma between digits right after a score: "2,5"
	// (a decimal comma), "1,000" (a thousands separator), "2,3" (two
	// numbers). Which is meant cannot be told; the first digits used to be
	// read as the score (fix-parse29).
	asideCommaRE = regexp.MustCompile(`^,\d+`)
	// asideGradeRE is a plus or minus sign right after a score that is not
	// a range: "3+", "4-" (a grade: more or less than the number). It used
	// to be read as the number (fix-parse29).
	asideGradeRE = regexp.MustCompile(`^(?:\+|-(?:[^\d.]|$))`)
	// asideRevisedRE is a second score that the judge says replaces the
	// first, right after it: "2, revised: 1", "2 (corrected to 1)",
	// "2; updated score = 1", "2 -> 1", "2 → 1", "2.5 (rounded to 3)"
	// (a rounding, since fix-parse29). Group 1 is the second
	// score. Only these words and arrows count, so that a number in a
	// remark ("2 (the final turn has 3 errors)") is not taken for one.
	// asideDotsRE is a second decimal point right after a score, with
	// digits after it: "1.5.2" (a version or section number, or a typo),
	// "1..5" (a range, or 1.5 mistyped). Which number is meant cannot be
	// told; the digits before the second point used to be read as the
	// score ("1.5.2" was 1.5, "1..5" was 1; fix-read30). A point that ends
	// a sentence ("3.", "1.5.") is not one: nothing but a point follows.
	asideDotsRE = regexp.MustCompile(`^\.+\d+(?:\.+\d+)*`)
	// asideQueriedRE is a question mark right after a score, after any
	// exclamation marks, or in brackets: "3?", "3??", "3?!", "3!?",
	// "3 (?)", "4/5?". The judge doubts the number; it used to be read as
	// the score (fix-read30). "3!" is emphasis and is read.
	asideQueriedRE = regexp.MustCompile(`^[ \t]*(?:!*[?？][?？!]*|\([ \t]*[?？][ \t]*\))`)
	asideRevisedRE = regexp.MustCompile(`(?i)^[ \t]*(?:(?:[,;(]|\band\b)[ \t]*)?(?:(?:revised|corrected|updated|adjusted|changed|amended|rounded(?:[ \t]+(?:up|down))?)(?:[ \t]+(?:score|rating))?[ \t]*(?:to\b|:|=)?|->|→|=>)[ \t]*([-+]?\d+(?:\.\d+)?)`)
)

// scoreAside returns why the number raw, followed by the text after, is
// not a score on c's scale, or "" when nothing after it says so. A number
// that opens a range or a choice ("3-4", "3 or 4") is not one score, and
// guessing its lower end would record a score the judge did not give; a
// number out of another maximum than c.Hi ("4/5" or "4 out of 5" on
// [1, 10]) is on another scale, where reading 4 as 4 of 10 would be wrong.
// "2.5/3" on [1, 3] is the score 2.5. A score followed by a different one
// that is said to replace it ("2, revised: 1"; asideRevisedRE) is not one
// score either: which the judge stands by is a guess (fix-parse28; the
// first used to be read). Nor is a number with a comma and digits after
// it ("2,5": a decimal comma, "1,000", or two numbers) or a sign after it
// ("3+", "4-": a grade), and "4 of 5", "4 (out of 5)" are out of 5 as
// "4/5" is (fix-parse29; the first number used to be read in all three).
// A number with a second decimal point and digits after it ("1.5.2",
// "1..5") is not one number, and one with a question mark after it ("3?",
// "3?!", "3 (?)", "4/5?" on [1, 5]) is one the judge doubts (fix-read30;
// both used to be read as the digits before the mark).
func scoreAside(raw, after string, c Criterion) string {
	// Almost every score is followed by "]" or a line end, or by "," in a
	// list: skip the patterns unless the first character after the blanks
	// can start one ("-", "–", "—", "/", "to", "or", "out of", "of", "(";
	// ",", ";", "(", "and", "→", "=>", "rounded" for a revision; ":", "="
	// for a range of labels; "," for a comma; "+", "-" for a grade; "." for
	// a second decimal point; "?", "!" for a doubt).
	if r, _ := utf8.DecodeRuneInString(strings.TrimLeft(after, " \t")); !strings.ContainsRune("-–—/tToO,;(aAcCrRuU→=+:.?？!", r) {
		return ""
	}
	if m := asideDotsRE.FindString(after); m != "" {
		return fmt.Sprintf("%q has more than one decimal point (a version or section number, or a typo), so which number is meant cannot be told", raw+m)
	}
	if m := asideLabelRangeRE.FindString(after); m != "" {
		return fmt.Sprintf("%q is followed by another number after a colon (a range of samples given one score?), so which score is meant cannot be told", raw+m)
	}
	if m := asideCommaRE.FindString(after); m != "" {
		return fmt.Sprintf("%q has a comma between digits (a decimal comma, a thousands separator or two numbers), so which number is meant cannot be told", raw+m)
	}
	if m := asideRevisedRE.FindStringSubmatch(after); m != nil {
		first, err1 := strconv.ParseFloat(raw, 64)
		second, err2 := strconv.ParseFloat(m[1], 64)
		if err1 == nil && err2 == nil && first != second {
			return fmt.Sprintf("%q gives a second score after the first, so which one stands cannot be told", raw+m[0])
		}
	}
	if m := asideRangeRE.FindString(after); m != "" {
		return fmt.Sprintf("%q gives two numbers (a range or a choice), not one score", raw+m)
	}
	written, rest := raw, after // the score as written, with "/5" when out of c.Hi, and what follows
	if m := asideOutOfRE.FindStringSubmatch(after); m != nil {
		written, rest = raw+m[0], after[len(m[0]):]
		if strings.Contains(m[0], "(") && strings.HasPrefix(strings.TrimLeft(rest, " \t"), ")") {
			written += ")" // "4 (out of 5)", not "4 (out of 5"
			rest = strings.TrimLeft(rest, " \t")[1:]
		}
		if hi, err := strconv.ParseFloat(m[1], 64); err == nil && hi != c.Hi {
			return fmt.Sprintf("%q is a score out of %s, not on the scale [%s, %s]", written, m[1], formatNumber(c.Lo), formatNumber(c.Hi))
		}
	}
	if m := asideQueriedRE.FindString(rest); m != "" {
		return fmt.Sprintf("%q has a question mark after it (the judge is unsure of it), not one score", written+m)
	}
	if asideGradeRE.MatchString(after) {
		return fmt.Sprintf("%q has a sign after the number (a grade such as 3+ or 4-), not one score", raw+after[:1])
	}
	return ""
}

// A dash between a label and a number can be a separator or a minus sign.
// The rule, for every reader (the score lists and "Score of" lines of
// ParseBatchAnswer, CloserLook's "Rating:" line):
//
//   - a dash with a blank (or a markdown mark) after it is a separator:
//     "Sample3 - 2", "Rating - 2" are 2, as are bullets ("- Sample3: 2");
//   - a dash written against the digits, with something between it and
//     the label (a blank, ":", "=", ")"), is the number's minus sign:
//     "Sample3 -2", "Sample3: -2", "Rating -2" are -2, and on a scale such
//     as [0, 10] they are out of range, never 3 or 2;
//   - a dash against both the label and the digits ("Sample3-2",
//     "Rating-2") can be either: the score is the reading that lies on
//     the scale, and none when both do (on [-2, 2], 2 and -2); when
//     neither does, it is read as a separator, as before, and reported as
//     out of range.
//
// A number followed by another ("3-4", "3 - 4" in a rating's place) is a
// range and is not read (scoreAside). Judges write minus signs as "-" or
// "−" (U+2212, which cleanMarkdown turns into "-"); an en or em dash is a
// separator ("Sample3 – 2"), except that one against the digits
// ("Sample3 –2", "Rating: –2" is unreadable anyway) is read as
// "Sample3-2" is: by the scale. An explicit plus sign is read wherever a
// minus is ("Sample3: +1", "Rating: +0", "Sentiment: +2"): "+1" is 1 on
// any scale (fix-parse29; it used to be unreadable).

// dashSign applies that rule to the number text[start:end], read after a
// label that ends at labelEnd, on c's scale. It returns the number as
// written with its sign, and why it cannot be told when the dash can be
// read both ways on the scale ("" otherwise).
func dashSign(text string, labelEnd, start, end int, c Criterion) (raw, why string) {
	raw = text[start:end]
	if raw == "" || raw[0] == '-' || raw[0] == '+' {
		return raw, "" // "+2" is 2: a plus is never a separator
	}
	var written, where string
	switch dash := start - 1; {
	case dash >= labelEnd && text[dash] == '-' && dash > labelEnd:
		return "-" + raw, "" // "Sample3 -2": a minus sign
	case dash >= labelEnd && text[dash] == '-':
		written, where = "-", "follows the label with no space" // "Sample3-2"
	case start-len("–") >= labelEnd && (text[start-len("–"):start] == "–" || text[start-len("—"):start] == "—"):
		// "Sample3 –2": an en or em dash against the digits.
		written, where = text[start-len("–"):start], "has a dash against the digits"
	default:
		return raw, ""
	}
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return raw, ""
	}
	plus, minus := v >= c.Lo && v <= c.Hi, -v >= c.Lo && -v <= c.Hi
	switch {
	case plus && minus && v != 0:
		return raw, fmt.Sprintf("%q %s, so it may be -%s or %s (a dash or a minus), both on the scale [%s, %s]",
			written+raw, where, raw, raw, formatNumber(c.Lo), formatNumber(c.Hi))
	case minus && !plus:
		return "-" + raw, ""
	}
	return raw, ""
}

// ParseBatchAnswer reads the scores and the per-sample analyses of a judge's
// answer to a batch prompt of n samples scored on criterion c.
//
// Scores are matched to samples by their labels, never by position. A
// score list follows a "Scores:" marker ("Float Scores", "Integer Scores",
// ...) and holds at least one score; when the answer has several, they are
// read together and a sample they score differently keeps none
// (findScoreList). Brackets, "Sample 3",
// markdown bold, "Sample3 = 2.5", "2.5/3", one score per line and text after
// the list are all accepted. Without such a list, one-stage lines ("Score of
// Sample3: 2.5") are used, and as a last resort "Sample3: 2.5" pairs anywhere
// in the answer. An answer with both one-stage lines and a list (the judge
// scored in its analysis, which the two-stage prompt asks it not to, and
// then listed the scores) is read from both: a sample they score
// differently keeps no score, with a problem naming both numbers, as with
// two lists; where they agree, or only one scores a sample, that score
// stands.
//
// Each failure is confined to its sample and reported in Problems: a label
// with no readable number, a number outside [c.Lo, c.Hi], a label given
// twice with different numbers (both are dropped), and a label never given.
// Labels outside 1..n are ignored and reported.
func ParseBatchAnswer(text string, n int, c Criterion) BatchAnswer {
	a := BatchAnswer{Scores: make([]*float64, max(n, 0)), Analyses: make([]string, max(n, 0))}
	text, only := StripReasoning(text)
	if only {
		a.Problems = append(a.Problems, reasoningOnlyProblem)
		return a
	}
	clean := newFoldText(cleanMarkdown(text))

	hits, listStart, found, listsProblem := findScoreList(clean, n, c)
	analysisEnd := listStart
	lines := readHits(clean, c, "core", matchScoreOf) // scoreOfRE
	linesProblem := ""
	if !found {
		analysisEnd = len(clean.s)
		hits = lines
		if len(hits) == 0 {
			hits = readHits(clean, c, "ample", regexpAt(strictPairAt)) // strictPair
		}
	} else if len(lines) > 0 {
		// "Score of" lines and a score list in one answer: read together,
		// so that a sample they score differently keeps none (fix-parse29;
		// the list used to win unseen).
		if hitsDisagree(lines, hits, n) {
			linesProblem = `the answer's "Score of" lines and its score list disagree; a sample they score differently keeps no score`
		}
		hits = slices.Concat(lines, hits)
	}
	if len(hits) == 0 {
		a.Problems = append(a.Problems, "no scores found in the answer")
	}
	if listsProblem != "" {
		a.Problems = append(a.Problems, listsProblem)
	}
	if linesProblem != "" {
		a.Problems = append(a.Problems, linesProblem)
	}
	a.Problems = append(a.Problems, assignScores(a.Scores, hits, n, c)...)
	fillAnalyses(a.Analyses, clean.slice(0, analysisEnd))
	return a
}

// findScoreList reads every score list of the answer: each score-list
// marker followed by at least one label with a readable score. It returns
// their labels and scores, where the first of them begins (the end of the
// analysis part), whether one was found, and a problem line when the lists
// disagree.
//
// An answer usually has one list. When it has several (the judge gives its
// scores and then an invented example, "a response would read Scores:
// [Sample1:1, ...]", or corrects itself), which one is meant cannot be told
// from the text, so none is preferred: the hits of all of them are read
// together, and a sample given different scores by two lists keeps none,
// as when one list gives a label twice (assignScores). Where the lists agree,
// or only one gives a sample, that score stands.
func findScoreList(t foldText, n int, c Criterion) ([]scoreHit, int, bool, string) {
	marks := wordMatches(t, "core", matchScoresMarker) // scoresMarker over t
	var lists [][]scoreHit
	start := len(t.s)
	for i := range marks {
		region := listRegion(t.slice(marks[i][1], len(t.s)))
		if hits := readLabels(region, c); hasScore(hits) {
			if len(lists) == 0 {
				start = listIntro(t.s, lineStart(t.s, marks[i][0]))
			}
			lists = append(lists, hits)
		}
	}
	if len(lists) == 0 {
		return nil, len(t.s), false, ""
	}
	if len(lists) == 1 {
		return lists[0], start, true, ""
	}
	return slices.Concat(lists...), start, true, listsDisagree(lists, n)
}

// listsDisagree returns the problem line for score lists of one answer
// where a later list gives one of the n samples a score that an earlier one
// did not give it, or "" when they agree. A label given twice within one
// list is assignScores' to report.
func listsDisagree(lists [][]scoreHit, n int) string {
	given := make([][]float64, max(n, 0)+1) // given[label]: the scores of earlier lists
	for k, hits := range lists {
		var mine []scoreHit
		for _, h := range hits {
			if !h.ok || h.why != "" || h.label < 1 || h.label > n {
				continue
			}
			if k > 0 && len(given[h.label]) > 0 && !slices.Contains(given[h.label], h.value) {
				return fmt.Sprintf("the answer has %d score lists that disagree (an example or a correction?); a sample they score differently keeps no score", len(lists))
			}
			mine = append(mine, h)
		}
		for _, h := range mine {
			given[h.label] = append(given[h.label], h.value)
		}
	}
	return ""
}

// hitsDisagree reports whether later gives one of the n samples a score
// that earlier gives it none of, where earlier gives it one: the "Score
// of" lines of an answer against its score lists. Numbers that are not
// the sample's score (why) and unreadable ones are left out, as in
// listsDisagree.
func hitsDisagree(earlier, later []scoreHit, n int) bool {
	usable := func(h scoreHit) bool { return h.ok && h.why == "" && h.label >= 1 && h.label <= n }
	for _, h := range later {
		if !usable(h) {
			continue
		}
		given, same := false, false
		for _, g := range earlier {
			if usable(g) && g.label == h.label {
				given, same = true, same || g.value == h.value
			}
		}
		if given && !same {
			return true
		}
	}
	return false
}

// listRegion cuts the score list off the text that follows a marker: the
// inside of a [...] list, or else the rest of the marker's line and the
// run of lines that start with a label (allowing blank lines, and a couple
// of other lines before the first label, e.g. "(out of 3)"), up to the
// first other line.
func listRegion(t foldText) string {
	after := t.s
	trimmed := strings.TrimLeft(after, " \t\r\n")
	if strings.HasPrefix(trimmed, "[") {
		if end := strings.Index(trimmed, "]"); end > 0 {
			return trimmed[1:end]
		}
	}
	// Why 2: enough for a note such as "(scale 1-3)" between the marker and
	// the list, but not so many that chatty text far below counts as a list.
	const maxLeadingLines = 2
	var b strings.Builder
	seenLabel, leading := false, 0
	// The lines of after, as strings.Split(after, "\n") would give them.
	for i, p := 0, 0; p <= len(after); i++ {
		end := len(after)
		if j := strings.IndexByte(after[p:], '\n'); j >= 0 {
			end = p + j
		}
		line := after[p:end]
		// Both patterns need "sample" (its s may be "ſ"), so a line
		// without "ample" cannot match either.
		isLabel := strings.Contains(t.lower[p:end], "ample") &&
			(listItemRE.MatchString(line) || (i == 0 && labelRE.MatchString(line)))
		p = end + 1
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case isLabel:
			seenLabel = true
		case seenLabel:
			return b.String()
		default:
			leading++
			if leading > maxLeadingLines {
				return b.String()
			}
			continue
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	return b.String()
}

// readLabels reads every label in a score list and the number right after it.
func readLabels(region string, c Criterion) []scoreHit {
	locs := wordMatches(newFoldText(region), "ample", matchLabel) // labelRE over region
	hits := make([]scoreHit, 0, len(locs))
	for i, loc := range locs {
		label, err := strconv.Atoi(region[loc[2]:loc[3]])
		if err != nil {
			continue
		}
		end := len(region)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		h := scoreHit{label: label}
		seg := region[loc[1]:end]
		if s, e, ok := matchScoreAfterSpan(seg); ok { // scoreAfterLabel
			raw, why := dashSign(seg, 0, s, e, c)
			if v, err := strconv.ParseFloat(raw, 64); err == nil {
				h.value, h.ok, h.raw = v, true, raw
				if h.why = why; why == "" {
					h.why = scoreAside(h.raw, seg[e:], c)
				}
			}
		}
		hits = append(hits, h)
	}
	return hits
}

// readHits reads label-score pairs matched anywhere in t by a pattern of
// two groups, label and number, that starts with \b and a word beginning
// with s; tail and match are as for wordMatches.
func readHits(t foldText, c Criterion, tail string, match func(s string, q int) (span, bool)) []scoreHit {
	var hits []scoreHit
	for _, m := range wordMatches(t, tail, match) {
		raw, why := dashSign(t.s, m[3], m[4], m[5], c)
		label, err1 := strconv.Atoi(t.s[m[2]:m[3]])
		v, err2 := strconv.ParseFloat(raw, 64)
		if err1 == nil && err2 == nil {
			after := t.s[m[5]:]
			if j := strings.IndexByte(after, '\n'); j >= 0 {
				after = after[:j]
			}
			if why == "" {
				why = scoreAside(raw, after, c)
			}
			hits = append(hits, scoreHit{label: label, value: v, ok: true, raw: raw, why: why})
		}
	}
	return hits
}

func hasScore(hits []scoreHit) bool {
	return slices.ContainsFunc(hits, func(h scoreHit) bool { return h.ok })
}

// assignScores puts each label's score in place and returns the problems.
func assignScores(scores []*float64, hits []scoreHit, n int, c Criterion) []string {
	var problems []string
	values := make([][]string, n) // the distinct numbers given per label, as written
	numbers := make([][]float64, n)
	// Almost every label is given one number: room for it in one backing
	// array per slice (capacity 1 each; a second number moves out).
	firstValues, firstNumbers := make([]string, n), make([]float64, n)
	for i := range n {
		values[i], numbers[i] = firstValues[i:i:i+1], firstNumbers[i:i:i+1]
	}
	kept := make([]float64, n) // the scores kept, which Scores points into
	unreadable := make([]bool, n)
	aside := make([]string, n) // why a number given is not the score (scoreAside)
	outside := map[int]bool{}
	var outsideOrder []int
	for _, h := range hits {
		if h.label < 1 || h.label > n {
			if !outside[h.label] {
				outside[h.label] = true
				outsideOrder = append(outsideOrder, h.label)
			}
			continue
		}
		i := h.label - 1
		if !h.ok {
			unreadable[i] = true
			continue
		}
		if h.why != "" {
			if aside[i] == "" {
				aside[i] = h.why
			}
			continue
		}
		if !slices.Contains(numbers[i], h.value) {
			numbers[i] = append(numbers[i], h.value)
			values[i] = append(values[i], h.raw)
		}
	}
	for i := 0; i < n; i++ {
		switch {
		case len(numbers[i]) > 1:
			problems = append(problems, fmt.Sprintf("%s: given %d different scores (%s); none kept", sampleLabel(i+1), len(numbers[i]), strings.Join(values[i], ", ")))
		case len(numbers[i]) == 1:
			v := numbers[i][0]
			if v < c.Lo || v > c.Hi {
				problems = append(problems, fmt.Sprintf("%s: %s is outside [%s, %s]", sampleLabel(i+1), values[i][0], formatNumber(c.Lo), formatNumber(c.Hi)))
				continue
			}
			kept[i] = v + 0 // "-0" is the score 0, not negative zero (fix-parse29)
			scores[i] = &kept[i]
		case aside[i] != "":
			problems = append(problems, fmt.Sprintf("%s: %s", sampleLabel(i+1), aside[i]))
		case unreadable[i]:
			problems = append(problems, fmt.Sprintf("%s: the score could not be read as a number", sampleLabel(i+1)))
		default:
			problems = append(problems, fmt.Sprintf("%s: no score found", sampleLabel(i+1)))
		}
	}
	for _, l := range outsideOrder {
		problems = append(problems, fmt.Sprintf("%s: there is no such sample in this batch of %d; ignored", sampleLabel(l), n))
	}
	return problems
}

// fillAnalyses splits the analysis part of an answer per sample. A
// sample's analysis runs from its heading to the next heading; in
// one-stage answers it stops at its "Score of" line. When a sample has no
// heading but a "Score of" line, its analysis is the text since the
// previous "Score of" line. The first heading of a label wins, so a
// later summary that names the sample again does not replace it.
//
// The searches are those of rankingRE, headingRE and scoreOfLine, run by
// lineMatches and headingMatches.
func fillAnalyses(analyses []string, t foldText) {
	n := len(analyses)
	if loc := lineMatches(t, rankingAt, "ran", 1); loc != nil {
		t = t.slice(0, loc[0][0])
	}
	part := t.s
	heads := headingMatches(t)
	for i, h := range heads {
		label, err := strconv.Atoi(part[h[2]:h[3]])
		if err != nil || label < 1 || label > n || analyses[label-1] != "" {
			continue
		}
		end := len(part)
		if i+1 < len(heads) {
			end = heads[i+1][0]
		}
		section := part[h[1]:end]
		if m, ok := nextScoreLine(t.slice(h[1], end), 0); ok {
			section = section[:m[0]]
		}
		analyses[label-1] = tidy(section)
	}

	// One-stage answers without headings: the text between score lines.
	prev := 0
	for _, loc := range scoreLineMatches(t) {
		m, ok := nextWordMatch(t.slice(loc[0], loc[1]), "ample", 0, matchLabel) // labelRE
		if !ok {
			continue
		}
		label, err := strconv.Atoi(part[loc[0]+m[2] : loc[0]+m[3]])
		if err == nil && label >= 1 && label <= n && analyses[label-1] == "" {
			analyses[label-1] = tidy(part[prev:loc[0]])
		}
		prev = loc[1]
	}
}

// cleanMarkdown drops the emphasis and code marks that judges wrap around
// labels and numbers ("**Sample1**: `2.5`"), and normalises line ends.
//
// It also writes numbers in ASCII, so that every reader sees the number
// the judge wrote: the minus sign U+2212 ("−2") becomes "-" (it is a
// minus: left alone, "−2" was unreadable in a score list and read as 2 by
// G-Eval's form), and full-width digits, minus, full stop and colon
// ("１２", "Sample1：２") their ASCII forms (left alone, "1２" was read as
// 1). The analyses shown are cut from this text, so they show the ASCII
// forms too.
func cleanMarkdown(s string) string {
	// A text with none of the strings replaced comes out unchanged: skip
	// the copy. "\xef\xbc" starts every rune from U+FF00 to U+FF3F, the
	// block of the full-width forms replaced.
	if !strings.ContainsAny(s, "\r`") && !strings.Contains(s, "**") && !strings.Contains(s, "__") &&
		!strings.Contains(s, "\u2212") && !strings.Contains(s, "\xef\xbc") {
		return s
	}
	return markdownMarks.Replace(s)
}

var markdownMarks = strings.NewReplacer(append([]string{"\r\n", "\n", "\r", "\n", "**", "", "__", "", "`", ""}, numberFormPairs...)...)

// numberFormPairs are the typeset minus and the full-width digits, signs,
// full stop and colon, each followed by its ASCII form: what cleanMarkdown
// and asciiNumberTokens write in ASCII. The full-width plus is read since
// fix-parse29, with the plus sign.
var numberFormPairs = []string{"\u2212", "-", "\uff0d", "-", "\uff0b", "+", "\uff0e", ".", "\uff1a", ":",
	"\uff10", "0", "\uff11", "1", "\uff12", "2", "\uff13", "3", "\uff14", "4",
	"\uff15", "5", "\uff16", "6", "\uff17", "7", "\uff18", "8", "\uff19", "9"}

// numberForms writes numberFormPairs in ASCII.
var numberForms = strings.NewReplacer(numberFormPairs...)

// tidy trims an analysis and drops separator lines such as "---".
func tidy(s string) string {
	s = strings.TrimSpace(s)
	// Most analyses have no separator line and no trailing blanks: every
	// line is kept as it is, so the result is s itself (trimming it again
	// changes nothing). Skip the split and join.
	if !tidyChanges(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && strings.Trim(t, "-=*_#") == "" {
			continue
		}
		out = append(out, strings.TrimRight(l, " \t"))
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// tidyChanges reports whether tidy drops or trims any line of s.
func tidyChanges(s string) bool {
	for rest := s; ; {
		l, after, more := strings.Cut(rest, "\n")
		if t := strings.TrimSpace(l); t != "" && strings.Trim(t, "-=*_#") == "" {
			return true
		}
		if strings.TrimRight(l, " \t") != l {
			return true
		}
		if !more {
			return false
		}
		rest = after
	}
}

// listIntro moves the start of a score list back over one lead-in line
// such as "Based on my analysis, here are the scores:", so that the line is
// not taken as part of the last sample's analysis.
func listIntro(text string, start int) int {
	before := strings.TrimRight(text[:start], " \t\n")
	if !strings.HasSuffix(before, ":") {
		return start
	}
	ls := lineStart(before, len(before))
	// before[ls:] is one line, so headingRE could match only at its start.
	if _, ok := matchHeading(before, ls); ok {
		return start // "Sample3:" heading with an empty analysis: keep it
	}
	return ls
}

// lineStart is the index where the line holding position i begins.
func lineStart(s string, i int) int {
	return strings.LastIndex(s[:i], "\n") + 1
}
