package evaluator

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file holds CloserLook's "analyze, then rate" (Chiang and Lee,
// Findings of EMNLP 2023), the BatchEval paper's strongest sample-wise
// baseline: one sample per call, the judge explains first and rates last,
// and n sampled ratings (20 in the papers) are averaged by the caller.

// ratingSlot is the line the analyze-rate prompt asks to end with; the
// simulated judge recognises the prompt by it.
const ratingSlot = "Rating: <score>"

// AnalyzeRateIntegerNote is what the analyze-rate prompt says of integer
// ratings; the simulated judge recognises it.
const AnalyzeRateIntegerNote = "whole numbers only"

// BuildAnalyzeRatePrompt builds the analyze-rate prompt for one sample: the
// task, criterion c with its range and level descriptions, the sample's
// fields, and the instruction to analyse the sample on c first and end with
// a line "Rating: <score>". With sc Integer (the original analyze-rate
// setup) the rating is asked for as a whole number; with Decimal (or "",
// as runs stored before the choice existed) decimals are allowed.
func BuildAnalyzeRatePrompt(r Rubric, c Criterion, s Sample, sc Scoring) []Message {
	var b strings.Builder
	b.WriteString(headingTask + "\n")
	writeSampleIntro(&b, r.Task, fieldLabels([]Sample{s}))
	fmt.Fprintf(&b, "Your job is to rate the sample on one criterion, %s, by first analysing it and then rating it.\n\n", c.Name)

	b.WriteString(headingCriteria + "\n")
	writeCriterionName(&b, c)
	if sc == Integer {
		fmt.Fprintf(&b, "Scale: a score within [%s, %s]; %s.\n", formatNumber(c.Lo), formatNumber(c.Hi), AnalyzeRateIntegerNote)
	} else {
		fmt.Fprintf(&b, "Scale: a score within [%s, %s]; decimal scores are allowed.\n", formatNumber(c.Lo), formatNumber(c.Hi))
	}
	writeLevels(&b, c.Levels, c.Lo, c.Hi, func(at float64) string { return "A score near " + formatNumber(at) })
	b.WriteString("\n")
	writeExamples(&b, c, c.Lo, c.Hi)

	writeSampleSection(&b, s)

	b.WriteString(headingFormat + "\n")
	fmt.Fprintf(&b, "First, analyse the sample with respect to %s: say what it does well and what it does badly on this criterion, "+
		"and explain how that places it on the scale. Then end your answer with one line of its own, exactly like this:\n", c.Name)
	b.WriteString(ratingSlot + "\n")
	what := "a number"
	if sc == Integer {
		what = "a whole number"
	}
	fmt.Fprintf(&b, "Replace <score> with %s within [%s, %s]. Write nothing after that line.\n", what, formatNumber(c.Lo), formatNumber(c.Hi))
	return []Message{{Role: "system", Content: sampleSystemPrompt}, {Role: "user", Content: b.String()}}
}

const ratingLineBody = `(rating|score)\b[ \t*_]*(?:\([^)\n]*\))?[ \t*_]*[:=\-–—+][ \t*_]*(.*)$`

var (
	// ratingLineRE finds a rating label and what follows it on its line:
	// "Rating: 2.5", "Final rating - 3", "Rating (1-3): 2". Group 1 is the
	// label word, group 2 the rest of the line.
	// It is the specification of ratingLines, which runs ratingLineAt.
	ratingLineRE = regexp.MustCompile(`(?im)\b` + ratingLineBody)
	ratingLineAt = regexp.MustCompile(`(?im)\A` + ratingLineBody)
	// ratingNumberRE reads the number that opens the rest of a rating line.
	ratingNumberRE = regexp.MustCompile(`^\[*([-+]?\d+(?:\.\d+)?|[-+]?\.\d+)\b`)
	// scaleAfterRE recognises what follows the number of a line that
	// describes the scale rather than rates: the rest of a range ("1-3",
	// "1 – 3", "1 to 3") or a level's meaning ("1 means dull").
	scaleAfterRE = regexp.MustCompile(`(?i)^(?:-\d|[ \t]*(?:[–—]|\bto\b)[ \t]*[-+]?\d|[ \t]+means\b)`)
)

// ParseAnalyzeRate reads an answer to BuildAnalyzeRatePrompt. The rating is
// the number after the "Rating:" labels (bold, "Rating - 3" and
// "Rating (1-3): 2" accepted), or, when there is none, after the "Score:"
// labels; when they give different numbers there is none
// (ratingsDisagree), and the same number given twice is that rating. A
// label line that describes the scale instead ("Rating:
// 1-3", "Rating: 1 means dull, 3 means lively"), as a judge may write
// after its rating, is passed over, since its number is never the rating;
// analysis is the text before that label's line. A rating
// outside [c.Lo, c.Hi], one that is one of a choice ("3 or 4") or out of
// another maximum than c.Hi ("4/5" on [1, 10]; scoreAside), an unreadable
// one and a missing one give a nil
// score and a plain-English problem; analysis is then the answer's text up
// to the label, or all of it when there is no label.
func ParseAnalyzeRate(text string, c Criterion) (score *float64, analysis string, problem string) {
	text, only := StripReasoning(text)
	if only {
		return nil, "", reasoningOnlyProblem
	}
	clean := cleanMarkdown(text)
	var ratings, scores []span
	for _, m := range ratingLines(newFoldText(clean)) {
		if strings.EqualFold(clean[m[2]:m[3]], "rating") {
			ratings = append(ratings, m)
		} else {
			scores = append(scores, m)
		}
	}
	// Rating labels before score labels. Of the kind used, every label
	// with a number is compared (ratingsDisagree); the last one's line
	// ends the analysis.
	var label span
	var raw, after, dashWhy string
	var given []string // every rating of the label's kind, as read, last first
	for _, group := range [][]span{ratings, scores} {
		for i := len(group) - 1; i >= 0; i-- {
			rest := clean[group[i][4]:group[i][5]]
			if n := ratingNumberRE.FindStringSubmatchIndex(rest); n != nil && !scaleAfterRE.MatchString(rest[n[1]:]) {
				// "Rating -2" is -2 (dashSign).
				r, why := dashSign(clean, group[i][3], group[i][4]+n[2], group[i][4]+n[3], c)
				if raw == "" {
					raw, dashWhy, label, after = r, why, group[i], rest[n[1]:]
					if why == "" {
						dashWhy = ratingList(rest, n)
					}
				}
				given = append(given, r)
			}
		}
		if raw != "" {
			break
		}
	}
	if raw == "" {
		if len(ratings) > 0 {
			last := ratings[len(ratings)-1]
			return nil, analysisBefore(clean, last[0]), "the rating could not be read as a number"
		}
		return nil, tidy(clean), `no "Rating:" line found`
	}
	analysis = analysisBefore(clean, label[0])
	v, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return nil, analysis, "the rating could not be read as a number"
	}
	if why := ratingsDisagree(given); why != "" {
		return nil, analysis, why
	}
	if dashWhy != "" {
		return nil, analysis, "the rating " + dashWhy
	}
	if why := scoreAside(raw, after, c); why != "" {
		return nil, analysis, "the rating " + why
	}
	if v < c.Lo || v > c.Hi {
		return nil, analysis, fmt.Sprintf("the rating %s is outside [%s, %s]", raw, formatNumber(c.Lo), formatNumber(c.Hi))
	}
	v += 0 // "-0" is the rating 0, not negative zero (fix-parse29)
	return &v, analysis, ""
}

// ratingListRE is what follows the first number of a bracketed list of
// numbers: "[-1, 0, 2]" after "[-1".
var ratingListRE = regexp.MustCompile(`^[ \t]*[,;][ \t]*[-+]?\.?\d`)

// ratingList returns why the rating rest[n[2]:n[3]] (n from ratingNumberRE
// on the rest of a rating line) is not one rating: it opens a bracketed
// list of numbers ("Rating: [-1, 0, 2]", which used to be read as -1), or
// "". "Rating: [2]" is the rating 2.
func ratingList(rest string, n []int) string {
	if n[2] == n[0] || !ratingListRE.MatchString(rest[n[1]:]) {
		return ""
	}
	list := rest[n[0]:]
	if j := strings.IndexByte(list, ']'); j >= 0 {
		list = list[:j+1]
	}
	return fmt.Sprintf("%q is a list of numbers, not one rating", list)
}

// ratingsDisagree returns the problem line when the ratings an answer
// gives, as read (last first), are not all the same number, or "".
//
// Why none is kept: a judge that writes "Rating: 2" and later "Rating: 3"
// has corrected itself, or given an example, or rated two things, and the
// text does not say which. Taking the last (the rule until fix-parse28)
// guessed; a missing rating is counted and shown, a wrong one is averaged
// in unseen. This is the rule of BatchEval's score lists
// (listsDisagree) and LLM-Eval's keys. Repeating one rating is no conflict.
func ratingsDisagree(given []string) string {
	var distinct []string
	var values []float64
	for i := len(given) - 1; i >= 0; i-- { // in the order written
		v, err := strconv.ParseFloat(given[i], 64)
		if err != nil || slices.Contains(values, v) {
			continue
		}
		values, distinct = append(values, v), append(distinct, given[i])
	}
	if len(distinct) < 2 {
		return ""
	}
	return fmt.Sprintf("the answer gives %d different ratings (%s); none kept", len(distinct), strings.Join(distinct, ", "))
}

// analysisBefore is the analysis that precedes a rating label at i: the
// text before the label's line, or, when that line also ends a sentence of
// the analysis ("... on topic. Rating: 3"), the text before the label.
func analysisBefore(text string, i int) string {
	ls := lineStart(text, i)
	if strings.ContainsAny(text[ls:i], ".!?") {
		return tidy(text[:i])
	}
	return tidy(text[:ls])
}

// ratingLines returns what ratingLineRE.FindAllStringSubmatchIndex(t.s, -1)
// returns, without running the regexp over the whole answer.
//
// Why it is the same: a match starts at "rating" or "score" (an "s", "S"
// or "ſ" before "core"; no other letter of either word has a non-ASCII
// case fold), found with strings.Index in t.lower, where \b holds (checked
// on the bytes, as in wordMatches). A match cannot leave its line (the
// pattern has no \s, and [^)\n] and . stop at "\n"), so the anchored form
// runs on the rest of the line, where $ and \b see the end of the text as
// they saw "\n". Candidates are tried in order from where the previous
// match ended, as FindAll does.
func ratingLines(t foldText) []span {
	starts := make([]int, 0, 8) // on the stack for a usual answer
	for i := 0; ; {
		j := strings.Index(t.lower[i:], "rating")
		if j < 0 {
			break
		}
		starts = append(starts, i+j)
		i += j + 1
	}
	for i := 0; ; {
		j := strings.Index(t.lower[i:], "core")
		if j < 0 {
			break
		}
		j += i
		i = j + 1
		switch {
		case j >= 1 && t.lower[j-1] == 's':
			starts = append(starts, j-1)
		case j >= 2 && t.s[j-2:j] == "ſ":
			starts = append(starts, j-2)
		}
	}
	slices.Sort(starts) // a place starts "rating" or "score", never both
	var out []span
	from := 0
	for _, q := range starts {
		if q < from || (q > 0 && isWordByte(t.s[q-1])) == isWordByte(t.s[q]) {
			continue
		}
		end := len(t.s)
		if j := strings.IndexByte(t.s[q:], '\n'); j >= 0 {
			end = q + j
		}
		if m, ok := regexpMatch(ratingLineAt, t.s[q:end], q); ok {
			out = append(out, m)
			from = m[1]
		}
	}
	return out
}
