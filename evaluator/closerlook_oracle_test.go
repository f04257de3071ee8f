package evaluator

// The regexp-based ParseAnalyzeRate exactly as it was before the keyword
// scanner (ratingLines), under "oracle" names, for the equivalence tests.
// Do not change it, except to follow a deliberate change of what the parser
// reads (so far seven: a label line that describes the scale, "Rating: 1-3",
// is not a rating, see oracleScaleAfterRE; a rating that is one of a
// choice, "3 or 4", or out of another maximum, "4/5" on [1, 10], is
// missing, see scoreAside; a dash written against the rating's digits,
// "Rating -2", is its minus sign, see dashSign; two labels giving
// different ratings leave none, where the last used to win, see
// ratingsDisagree; a rating that opens a bracketed list, "[-1, 0, 2]", is
// none, see ratingList; and one followed by a revision, "2, revised: 1",
// is none, see scoreAside; and an explicit plus sign is read, "Rating: +1"
// and "Rating +1" are 1, fix-parse29).

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

var (
	// oracleRatingLineRE finds a rating label and what follows it on its line:
	// "Rating: 2.5", "Final rating - 3", "Rating (1-3): 2". Group 1 is the
	// label word, group 2 the rest of the line.
	oracleRatingLineRE = regexp.MustCompile(`(?im)\b(rating|score)\b[ \t*_]*(?:\([^)\n]*\))?[ \t*_]*[:=\-–—+][ \t*_]*(.*)$`)
	// oracleRatingNumberRE reads the number that opens the rest of a rating line.
	oracleRatingNumberRE = regexp.MustCompile(`^\[*([-+]?\d+(?:\.\d+)?|[-+]?\.\d+)\b`)
	// oracleScaleAfterRE follows what comes after the number of a line
	// that describes the scale: the rest of a range or a level's meaning.
	oracleScaleAfterRE = regexp.MustCompile(`(?i)^(?:-\d|[ \t]*(?:[–—]|\bto\b)[ \t]*[-+]?\d|[ \t]+means\b)`)
)

// oracleParseAnalyzeRate reads an answer to BuildAnalyzeRatePrompt. The rating is
// the number after the last "Rating:" label (bold, "Rating - 3" and
// "Rating (1-3): 2" accepted), or, when there is none, after the last
// "Score:" label; analysis is the text before that label's line. A rating
// outside [c.Lo, c.Hi], an unreadable one and a missing one give a nil
// score and a plain-English problem; analysis is then the answer's text up
// to the label, or all of it when there is no label.
func oracleParseAnalyzeRate(text string, c Criterion) (score *float64, analysis string, problem string) {
	clean := cleanMarkdown(text)
	var ratings, scores [][]int
	for _, m := range oracleRatingLineRE.FindAllStringSubmatchIndex(clean, -1) {
		if strings.EqualFold(clean[m[2]:m[3]], "rating") {
			ratings = append(ratings, m)
		} else {
			scores = append(scores, m)
		}
	}
	// Rating labels before score labels. Of the kind used, every label
	// with a number is compared (ratingsDisagree); the last one's line
	// ends the analysis.
	var label []int
	var raw, after, dashWhy string
	var given []string // every rating of the label's kind, as read, last first
	for _, group := range [][][]int{ratings, scores} {
		for i := len(group) - 1; i >= 0; i-- {
			rest := clean[group[i][4]:group[i][5]]
			if n := oracleRatingNumberRE.FindStringSubmatchIndex(rest); n != nil && !oracleScaleAfterRE.MatchString(rest[n[1]:]) {
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
			return nil, oracleAnalysisBefore(clean, last[0]), "the rating could not be read as a number"
		}
		return nil, tidy(clean), `no "Rating:" line found`
	}
	analysis = oracleAnalysisBefore(clean, label[0])
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
	v += 0 // changed with the production parser (fix-parse29): "-0" is 0
	return &v, analysis, ""
}

// oracleAnalysisBefore is the analysis that precedes a rating label at i: the
// text before the label's line, or, when that line also ends a sentence of
// the analysis ("... on topic. Rating: 3"), the text before the label.
func oracleAnalysisBefore(text string, i int) string {
	ls := lineStart(text, i)
	if strings.ContainsAny(text[ls:i], ".!?") {
		return tidy(text[:i])
	}
	return tidy(text[:ls])
}
