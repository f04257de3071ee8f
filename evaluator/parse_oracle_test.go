package evaluator

// This file keeps the regexp-based answer parser exactly as it was before
// the fast scanners of parse.go, under "oracle" names, so that tests and the
// fuzzer can check that the production parser returns the same BatchAnswer
// for every input. Do not "improve" it: its value is that it is unchanged.
// Its patterns and scanning are; two reading rules were changed in it and
// in parse.go alike (fix-parse27), so that both still read the same: all
// score lists are read together (oracleFindScoreList), and a number that
// opens a range or is out of another maximum is not a score (scoreAside,
// shared). A third (fix-parse28): a dash written against a score's digits
// is its minus sign, as dashSign (shared) decides; and a fourth: the minus
// sign U+2212 and full-width digits are read as ASCII (oracleCleanMarkdown);
// a fifth: a score followed by a revision, "2, revised: 1", is none
// (scoreAside). A sixth (fix-parse29): "Score of" lines are read together
// with the score lists, when there are lists; a seventh: an explicit plus
// sign is read, "+1" is 1 (the number patterns take [-+]?); an eighth:
// a "Score of" line's label digits are taken whole (oracleScoreOfRE has
// \b after them), so "Score of Sample12" is no longer Sample1 scored 2.

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	// oracleScoresMarker finds the start of a score list: "Float Scores:",
	// "Integer Scores:", "Final scores for Coherence:", "SCORES:".
	oracleScoresMarker = regexp.MustCompile(`(?i)\bscores\b[^:\n\[\]]{0,40}:`)

	// oracleLabelRE finds a sample label: "Sample3", "sample 3", "Sample #3".
	oracleLabelRE = regexp.MustCompile(`(?i)\bsample\s*#?\s*(\d+)`)

	// oracleScoreAfterLabel reads the score that directly follows a label:
	// "Sample3: 2.5", "Sample3 = 2.5", "Sample3 - 2.5", "Sample3): 2.5",
	// "Sample3 is 2.5", "Sample3: 2.5/3". Group 1 is the number.
	oracleScoreAfterLabel = regexp.MustCompile(`^[ \t*_()\]]*(?:[:=\-–—]|\bis\b)?[ \t*_]*([-+]?\d+(?:\.\d+)?|[-+]?\.\d+)\b`)

	// oracleListItemRE is a line of a score list written one per line: it starts
	// with a label, after any bullet or number ("- Sample1: 2", "2. Sample2 = 1").
	oracleListItemRE = regexp.MustCompile(`(?i)^[ \t>#*_\-•+]*(?:\d+[.)][ \t]*)?(?:score\s+(?:of|for)\s+)?sample\s*#?\s*\d+`)

	// oracleStrictPair is a label and a score joined by ":" or "=" and ending the
	// item (end of line, comma or semicolon), for the last-resort search of
	// the whole answer, where looser forms would catch numbers in the prose
	// ("Sample1: 3 of its 5 sentences...").
	oracleStrictPair = regexp.MustCompile(`(?im)\bsample\s*#?\s*(\d+)[ \t*_)]*[:=][ \t*_]*([-+]?\d+(?:\.\d+)?)(?:[ \t]*/[ \t]*\d+(?:\.\d+)?)?[ \t*_]*(?:[,;]|\.?[ \t]*$)`)

	// oracleScoreOfRE reads one-stage score lines: "Score of Sample3: 2.5",
	// "Score for Sample 3 = 2".
	oracleScoreOfRE = regexp.MustCompile(`(?i)\bscore\s+(?:of|for)\s+sample\s*#?\s*(\d+)\b[ \t*_)]*[:=\-–—]?[ \t*_]*([-+]?\d+(?:\.\d+)?)\b`)

	// oracleScoreOfLine finds a one-stage score line, to end a sample's analysis.
	oracleScoreOfLine = regexp.MustCompile(`(?im)^[^\n]*\bscore\s+(?:of|for)\s+sample\s*#?\s*\d+[^\n]*$`)

	// oracleHeadingRE finds a line that opens one sample's analysis: "Sample1:",
	// "**Sample 1**", "### Sample 1", "- Sample1 -", "Analysis of Sample1:",
	// "2. Sample2: ...". A line that merely starts with a sample's name in
	// a sentence ("Sample2 is better...") is not a heading.
	oracleHeadingRE = regexp.MustCompile(`(?im)^[ \t>#*_\-•]*(?:\d+[.)][ \t]*)?(?:analysis\s+(?:of|for)\s+)?sample\s*#?\s*(\d+)\b[ \t*_)]*(?:[:\-–—.(]|$)[ \t*_]*`)

	// oracleRankingRE finds the start of a three-stage ranking section, which
	// ends the analysis part.
	oracleRankingRE = regexp.MustCompile(`(?im)^[ \t>#*_\-]*(?:step\s*2\b.*\brank.*|(?:final\s+|overall\s+)?ranking\b[^:\n]{0,40}:.*|(?:final\s+|overall\s+)?ranking[ \t]*|rank(?:ed)?\s+(?:order|from\s+best)\b.*)$`)
)

// oracleScoreHit is one label and score read from the answer.
type oracleScoreHit struct {
	label int
	value float64
	ok    bool   // false when the label had no readable number after it
	raw   string // the number as written
	why   string // why the number is not the score (scoreAside), or ""
}

// oracleParseBatchAnswer reads the scores and the per-sample analyses of a judge's
// answer to a batch prompt of n samples scored on criterion c.
//
// Scores are matched to samples by their labels, never by position. The
// score list is the one after the last "Scores:" marker ("Float Scores",
// "Integer Scores", ...) that holds at least one score; brackets, "Sample 3",
// markdown bold, "Sample3 = 2.5", "2.5/3", one score per line and text after
// the list are all accepted. Without such a list, one-stage lines ("Score of
// Sample3: 2.5") are used, and as a last resort "Sample3: 2.5" pairs anywhere
// in the answer.
//
// Each failure is confined to its sample and reported in Problems: a label
// with no readable number, a number outside [c.Lo, c.Hi], a label given
// twice with different numbers (both are dropped), and a label never given.
// Labels outside 1..n are ignored and reported.
func oracleParseBatchAnswer(text string, n int, c Criterion) BatchAnswer {
	a := BatchAnswer{Scores: make([]*float64, max(n, 0)), Analyses: make([]string, max(n, 0))}
	clean := oracleCleanMarkdown(text)

	hits, listStart, found, listsProblem := oracleFindScoreList(clean, n, c)
	analysisEnd := listStart
	linesProblem := ""
	if !found {
		analysisEnd = len(clean)
		hits = oracleReadHits(clean, c, oracleScoreOfRE)
		if len(hits) == 0 {
			hits = oracleReadHits(clean, c, oracleStrictPair)
		}
	} else if lines := oracleReadHits(clean, c, oracleScoreOfRE); len(lines) > 0 {
		// Changed with the production parser (fix-parse29): "Score of"
		// lines are read with the lists, and a sample they score
		// differently from the lists keeps none.
		byLabel := map[int][]float64{}
		for _, h := range lines {
			if h.ok && h.why == "" && h.label >= 1 && h.label <= n {
				byLabel[h.label] = append(byLabel[h.label], h.value)
			}
		}
		for _, h := range hits {
			if h.ok && h.why == "" && len(byLabel[h.label]) > 0 && !slices.Contains(byLabel[h.label], h.value) {
				linesProblem = `the answer's "Score of" lines and its score list disagree; a sample they score differently keeps no score`
			}
		}
		hits = append(lines, hits...)
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
	a.Problems = append(a.Problems, oracleAssignScores(a.Scores, hits, n, c)...)
	oracleFillAnalyses(a.Analyses, clean[:analysisEnd])
	return a
}

// oracleFindScoreList reads every score list: each marker followed by at
// least one readable score. It returns their labels and scores, where the
// first begins (the end of the analysis part), whether one was found and
// the problem line when two lists score one of the n samples differently.
//
// Changed with the production parser (fix-parse27): it used to return only
// the last such list, so an invented example list after the real one won.
// The lists are now read together, as findScoreList does; how each list is
// found is unchanged.
func oracleFindScoreList(text string, n int, c Criterion) ([]oracleScoreHit, int, bool, string) {
	marks := oracleScoresMarker.FindAllStringIndex(text, -1)
	var all []oracleScoreHit
	var listOf []int // listOf[i]: which list all[i] came from
	lists := 0
	start := len(text)
	for i := range marks {
		region := oracleListRegion(text[marks[i][1]:])
		if hits := oracleReadLabels(region, c); oracleHasScore(hits) {
			if lists == 0 {
				start = oracleListIntro(text, oracleLineStart(text, marks[i][0]))
			}
			for range hits {
				listOf = append(listOf, lists)
			}
			lists++
			all = append(all, hits...)
		}
	}
	if lists == 0 {
		return nil, len(text), false, ""
	}
	// Disagreement: a later list gives a sample a score that no earlier
	// list gave it, where an earlier list gave it one.
	problem := ""
	for i, h := range all {
		if !h.ok || h.why != "" || h.label < 1 || h.label > n {
			continue
		}
		earlier, same := false, false
		for j := range i {
			if g := all[j]; g.ok && g.why == "" && g.label == h.label && listOf[j] < listOf[i] {
				earlier = true
				same = same || g.value == h.value
			}
		}
		if earlier && !same {
			problem = fmt.Sprintf("the answer has %d score lists that disagree (an example or a correction?); a sample they score differently keeps no score", lists)
			break
		}
	}
	return all, start, true, problem
}

// oracleListRegion cuts the score list off the text that follows a marker: the
// inside of a [...] list, or else the rest of the marker's line and the
// run of lines that start with a label (allowing blank lines, and a couple
// of other lines before the first label, e.g. "(out of 3)"), up to the
// first other line.
func oracleListRegion(after string) string {
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
	for i, line := range strings.Split(after, "\n") {
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case oracleListItemRE.MatchString(line) || (i == 0 && oracleLabelRE.MatchString(line)):
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

// oracleReadLabels reads every label in a score list and the number right after it.
func oracleReadLabels(region string, c Criterion) []oracleScoreHit {
	var hits []oracleScoreHit
	locs := oracleLabelRE.FindAllStringSubmatchIndex(region, -1)
	for i, loc := range locs {
		label, err := strconv.Atoi(region[loc[2]:loc[3]])
		if err != nil {
			continue
		}
		end := len(region)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		h := oracleScoreHit{label: label}
		seg := region[loc[1]:end]
		if m := oracleScoreAfterLabel.FindStringSubmatchIndex(seg); m != nil {
			raw, why := dashSign(seg, 0, m[2], m[3], c)
			if v, err := strconv.ParseFloat(raw, 64); err == nil {
				h.value, h.ok, h.raw = v, true, raw
				if h.why = why; why == "" {
					h.why = scoreAside(h.raw, seg[m[3]:], c)
				}
			}
		}
		hits = append(hits, h)
	}
	return hits
}

// oracleReadHits reads label-score pairs matched by re anywhere in text.
func oracleReadHits(text string, c Criterion, re *regexp.Regexp) []oracleScoreHit {
	var hits []oracleScoreHit
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		label, err1 := strconv.Atoi(text[m[2]:m[3]])
		raw, why := dashSign(text, m[3], m[4], m[5], c)
		v, err2 := strconv.ParseFloat(raw, 64)
		if err1 == nil && err2 == nil {
			after, _, _ := strings.Cut(text[m[5]:], "\n")
			if why == "" {
				why = scoreAside(raw, after, c)
			}
			hits = append(hits, oracleScoreHit{label: label, value: v, ok: true, raw: raw, why: why})
		}
	}
	return hits
}

func oracleHasScore(hits []oracleScoreHit) bool {
	return slices.ContainsFunc(hits, func(h oracleScoreHit) bool { return h.ok })
}

// oracleAssignScores puts each label's score in place and returns the problems.
func oracleAssignScores(scores []*float64, hits []oracleScoreHit, n int, c Criterion) []string {
	var problems []string
	values := make([][]string, n) // the distinct numbers given per label, as written
	numbers := make([][]float64, n)
	unreadable := make([]bool, n)
	aside := make([]string, n)
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
		label := sampleLabel(i + 1)
		switch {
		case len(numbers[i]) > 1:
			problems = append(problems, fmt.Sprintf("%s: given %d different scores (%s); none kept", label, len(numbers[i]), strings.Join(values[i], ", ")))
		case len(numbers[i]) == 1:
			v := numbers[i][0]
			if v < c.Lo || v > c.Hi {
				problems = append(problems, fmt.Sprintf("%s: %s is outside [%s, %s]", label, values[i][0], formatNumber(c.Lo), formatNumber(c.Hi)))
				continue
			}
			v += 0 // changed with the production parser (fix-parse29): "-0" is 0
			scores[i] = &v
		case aside[i] != "":
			problems = append(problems, fmt.Sprintf("%s: %s", label, aside[i]))
		case unreadable[i]:
			problems = append(problems, fmt.Sprintf("%s: the score could not be read as a number", label))
		default:
			problems = append(problems, fmt.Sprintf("%s: no score found", label))
		}
	}
	for _, l := range outsideOrder {
		problems = append(problems, fmt.Sprintf("%s: there is no such sample in this batch of %d; ignored", sampleLabel(l), n))
	}
	return problems
}

// oracleFillAnalyses splits the analysis part of an answer per sample. A
// sample's analysis runs from its heading to the next heading; in
// one-stage answers it stops at its "Score of" line. When a sample has no
// heading but a "Score of" line, its analysis is the text since the
// previous "Score of" line. The first heading of a label wins, so a
// later summary that names the sample again does not replace it.
func oracleFillAnalyses(analyses []string, part string) {
	n := len(analyses)
	if loc := oracleRankingRE.FindStringIndex(part); loc != nil {
		part = part[:loc[0]]
	}
	heads := oracleHeadingRE.FindAllStringSubmatchIndex(part, -1)
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
		if loc := oracleScoreOfLine.FindStringIndex(section); loc != nil {
			section = section[:loc[0]]
		}
		analyses[label-1] = oracleTidy(section)
	}

	// One-stage answers without headings: the text between score lines.
	prev := 0
	for _, loc := range oracleScoreOfLine.FindAllStringIndex(part, -1) {
		m := oracleLabelRE.FindStringSubmatch(part[loc[0]:loc[1]])
		if m == nil {
			continue
		}
		label, err := strconv.Atoi(m[1])
		if err == nil && label >= 1 && label <= n && analyses[label-1] == "" {
			analyses[label-1] = oracleTidy(part[prev:loc[0]])
		}
		prev = loc[1]
	}
}

// oracleCleanMarkdown drops the emphasis and code marks that judges wrap around
// labels and numbers ("**Sample1**: `2.5`"), and normalises line ends.
//
// Changed with the production parser (fix-parse28): the minus sign U+2212
// and full-width digits, minus, full stop and colon are written in ASCII.
func oracleCleanMarkdown(s string) string {
	return strings.NewReplacer("\r\n", "\n", "\r", "\n", "**", "", "__", "", "`", "",
		"\u2212", "-", "\uff0d", "-", "\uff0b", "+", "\uff0e", ".", "\uff1a", ":",
		"\uff10", "0", "\uff11", "1", "\uff12", "2", "\uff13", "3", "\uff14", "4",
		"\uff15", "5", "\uff16", "6", "\uff17", "7", "\uff18", "8", "\uff19", "9").Replace(s)
}

// oracleTidy trims an analysis and drops separator lines such as "---".
func oracleTidy(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	out := lines[:0]
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && strings.Trim(t, "-=*_#") == "" {
			continue
		}
		out = append(out, strings.TrimRight(l, " \t"))
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// oracleListIntro moves the start of a score list back over one lead-in line
// such as "Based on my analysis, here are the scores:", so that the line is
// not taken as part of the last sample's analysis.
func oracleListIntro(text string, start int) int {
	before := strings.TrimRight(text[:start], " \t\n")
	if !strings.HasSuffix(before, ":") {
		return start
	}
	ls := oracleLineStart(before, len(before))
	if oracleHeadingRE.MatchString(before[ls:]) {
		return start // "Sample3:" heading with an empty analysis: keep it
	}
	return ls
}

// oracleLineStart is the index where the line holding position i begins.
func oracleLineStart(s string, i int) int {
	return strings.LastIndex(s[:i], "\n") + 1
}
