package evaluator

import (
	"encoding/binary"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The answer parser used to run its case-insensitive patterns over the
// whole answer. Go's regexp engine then tries every position of the text,
// folding case rune by rune, and clears a bit set the size of the text for
// every match it looks for: about 0.3 ms of CPU for a ten-sample answer.
// The scanners below return exactly what those whole-text searches
// returned (FuzzScannersMatchRegexps compares them), but look only where a
// match can start:
//
//   - at the start of a line, for the patterns that begin with (?m)^;
//   - at a keyword, for the patterns that begin with \b and a word, found
//     with strings.Index in an ASCII-lowercased copy of the text.
//
// There, the patterns that run for every sample (headings, labels, the
// score after a label, the "Scores:" marker, one-stage score lines) are
// written out by hand, each with a note on why it agrees with its regexp.
// The rare ones (rankingRE, strictPair) still run as regexps, anchored at
// that place and over a window that ends at the first line break no match
// can cross (windowEnd), rather than over the rest of the text.

// foldText is a text and its copy with ASCII capitals lowered, of the same
// length, so that byte offsets agree. Keyword searches run in lower.
//
// Why ASCII only is enough: the patterns are (?i), which folds Unicode, but
// the only non-ASCII runes that fold to an ASCII letter are "ſ" (long s, to
// s) and "K" (Kelvin sign, to k). No keyword searched for below contains s
// or k except at its first letter (handled in wordMatches) or where the
// search only narrows the places to try (see the callers).
type foldText struct {
	s, lower string
}

func newFoldText(s string) foldText {
	var b strings.Builder // its String() takes the bytes without a copy
	b.Grow(len(s))
	i := 0
	// Eight bytes at a time: the high bit of each byte of upper is set
	// where that byte is in 'A'..'Z' (a byte of 0x80 or above never is),
	// and shifted down it is the 0x20 that lowers the letter.
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	var w [8]byte
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		h := x &^ highs
		upper := (h + (0x80-'A')*ones) &^ (h + (0x80-'Z'-1)*ones) &^ x & highs
		binary.LittleEndian.PutUint64(w[:], x|upper>>2)
		b.Write(w[:])
	}
	for ; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return foldText{s, b.String()}
}

func (t foldText) slice(i, j int) foldText {
	return foldText{t.s[i:j], t.lower[i:j]}
}

// crossByte marks the bytes after which (with only \s between) a pattern
// can run across a line break. The patterns cross lines only inside a \s
// run, and every \s run in them follows one of these: "analysis", "sample",
// "score", "of", "for", "step", "final", "overall", "rank", "ranked",
// "from" (last letters s e f r p l k d m, in either case) or "#". Bytes of
// 0x80 and above stand for "ſ" and "K" (which fold to s and k) and, to be
// safe, for any other non-ASCII rune.
var crossByte = func() (t [256]bool) {
	for _, c := range "sefrplkdmSEFRPLKDM#" {
		t[c] = true
	}
	for c := 0x80; c < 256; c++ {
		t[c] = true
	}
	return t
}()

// isRESpace is Go regexp's \s: ASCII space, \t, \n, \f and \r only.
func isRESpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// windowEnd is where a search for a match starting at p may stop reading:
// the first line break that no match starting at p can cross, or the end.
//
// Why a match stops there, and why the result is the same as on the whole
// text: a match crosses a line break only inside a \s run, and a \s run
// only follows the words listed at crossByte. When the last byte before
// the line break that is not \s (looking back no further than p) is not a
// crossByte, no way of matching from p reads past the line break, except
// for the assertions $ and \b, which see "end of text" in the window and
// "\n" in the whole text and answer alike for both. So every way of
// matching, its success and its order of preference, is the same in the
// window as in the whole text.
func windowEnd(s string, p int) int {
	for i := p; ; {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			return len(s)
		}
		x := i + j
		k := x - 1
		for k >= p && isRESpace(s[k]) {
			k--
		}
		if k < p || !crossByte[s[k]] {
			return x
		}
		i = x + 1
	}
}

// lineMatches returns what re.FindAllStringSubmatchIndex(t.s, limit) returns
// for re = (?m)^ followed by the body of at, where at is that body anchored
// with \A. Every match holds need (lowercase ASCII without s or k), so a
// window without it is skipped.
//
// Why it is the same: every match of a (?m)^ pattern starts at a line
// start; at a line start p, matching the \A form on the window starting at
// p sees what ^ sees at p (start of text, or just after "\n": neither is a
// word character for \b), and reads only what the whole-text match reads
// (windowEnd). Line starts are tried in order from where the previous match
// ended, which is how FindAll proceeds; none of these patterns can match
// the empty string.
func lineMatches(t foldText, at *regexp.Regexp, need string, limit int) []span {
	var out []span
	from := 0
	for p := 0; p < len(t.s) && (limit < 0 || len(out) < limit); {
		next := len(t.s)
		if j := strings.IndexByte(t.s[p:], '\n'); j >= 0 {
			next = p + j + 1
		}
		if p >= from {
			if end := windowEnd(t.s, p); strings.Contains(t.lower[p:end], need) {
				if m, ok := regexpMatch(at, t.s[p:end], p); ok {
					out = append(out, m)
					from = m[1]
				}
			}
		}
		p = next
	}
	return out
}

// wordMatches returns what re.FindAllStringSubmatchIndex(t.s, -1)
// returns for re = \b followed by a pattern P that starts with a word
// beginning with s (case-insensitive) whose remaining letters, tail, hold
// no s or k (lowercase ASCII: "ample" for "sample", "core" for "score").
// match(s, q) returns the submatch indexes (in s) of P's match starting at
// q, or nil: regexpAt or one of the hand-written matchers.
//
// Why it is the same: a match starts at an "s", "S" or "ſ" right before
// tail, and those are found with strings.Index in t.lower. The \b before
// it is checked here, on the bytes (ASCII word characters are single bytes,
// and any other byte belongs to a non-word rune); P looks only to the
// right. Candidates are tried in order from where the previous match
// ended, as FindAll does.
func wordMatches(t foldText, tail string, match func(s string, q int) (span, bool)) []span {
	out := make([]span, 0, 16) // room for a usual batch without regrowing
	for from := 0; ; {
		m, ok := nextWordMatch(t, tail, from, match)
		if !ok {
			return out
		}
		out = append(out, m)
		from = m[1]
	}
}

// nextWordMatch is the first match of wordMatches that starts at or after
// from (a candidate whose tail starts before from starts before it too).
func nextWordMatch(t foldText, tail string, from int, match func(s string, q int) (span, bool)) (span, bool) {
	for i := from; i < len(t.lower); i++ {
		j := strings.Index(t.lower[i:], tail)
		if j < 0 {
			break
		}
		i += j
		q := -1
		switch {
		case i >= 1 && t.lower[i-1] == 's':
			q = i - 1
		case i >= 2 && t.s[i-2:i] == "ſ":
			q = i - 2
		}
		if q < from {
			continue
		}
		if (q > 0 && isWordByte(t.s[q-1])) == isWordByte(t.s[q]) {
			continue // no \b at q
		}
		if m, ok := match(t.s, q); ok {
			return m, true
		}
	}
	return span{}, false
}

// regexpAt returns a match function for wordMatches that runs at, a
// pattern anchored with \A, on the window of s starting at q (windowEnd).
func regexpAt(at *regexp.Regexp) func(s string, q int) (span, bool) {
	return func(s string, q int) (span, bool) {
		return regexpMatch(at, s[q:windowEnd(s, q)], q)
	}
}

// regexpMatch runs at on window, which starts at p of the whole text, and
// returns its match with indexes in the whole text.
func regexpMatch(at *regexp.Regexp, window string, p int) (span, bool) {
	loc := at.FindStringSubmatchIndex(window)
	if loc == nil {
		return span{}, false
	}
	var m span
	for i, v := range loc {
		m[i] = v + p // every group of these patterns takes part in a match
	}
	return m, true
}

// matchScoresMarker is scoresMarker's match without its \b, at q of s:
// "scores", \b, at most 40 runes other than ":", "\n", "[" and "]", and
// a ":". It returns nil or {start, end}.
//
// Why it is the same: the bounded run is greedy and what it gives back is
// never a ":", so the match exists exactly when the first of those four
// characters, within 41 runes, is a ":". Runes are counted as regexp
// counts them (an invalid byte is one rune).
func matchScoresMarker(s string, q int) (span, bool) {
	n := foldPrefix(s[q:], "scores")
	if n < 0 {
		return span{}, false
	}
	i := q + n
	lastWord := s[i-1] == 's' || s[i-1] == 'S' // else "ſ", not a word character
	if lastWord == (i < len(s) && isWordByte(s[i])) {
		return span{}, false // no \b after "scores"
	}
	for runes := 0; i < len(s); runes++ {
		switch s[i] {
		case ':':
			return span{q, i + 1}, true
		case '\n', '[', ']':
			return span{}, false
		}
		if runes == 40 {
			return span{}, false
		}
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return span{}, false
}

// matchLabel is labelRE's match without its \b, at q of s: "sample",
// \s*, an optional "#", \s*, and the label's digits, group 1. It returns
// nil or {start, end, digits start, digits end}.
//
// Why hand-written, and why it is the same: it runs for every label of a
// score list. The pattern has no choice to make: each \s* and \d+ is
// greedy and what follows it cannot start with what it consumes ("#" or a
// digit after spaces, a digit after "#"), so the first way of matching is
// the only one.
func matchLabel(s string, q int) (span, bool) {
	n := foldPrefix(s[q:], "sample")
	if n < 0 {
		return span{}, false
	}
	i := skipRESpace(s, q+n)
	if i < len(s) && s[i] == '#' {
		i = skipRESpace(s, i+1)
	}
	ds := i
	i = skipDigits(s, i)
	if i == ds {
		return span{}, false
	}
	return span{q, i, ds, i}, true
}

// headingMatches returns what headingRE.FindAllStringSubmatchIndex(t.s, -1)
// returns: matchHeading at each line start, in order from where the
// previous match ended (a match ends on a line it cannot leave, before any
// "\n", so the next one starts on a later line).
func headingMatches(t foldText) []span {
	out := make([]span, 0, 16) // room for a usual batch without regrowing
	for p := 0; p < len(t.s); {
		if m, ok := matchHeading(t.s, p); ok {
			out = append(out, m)
			p = m[1]
		}
		j := strings.IndexByte(t.s[p:], '\n')
		if j < 0 {
			break
		}
		p += j + 1
	}
	return out
}

// matchHeading is headingRE at the line start p of s, written out:
//
//	^[ \t>#*_\-•]*(?:\d+[.)][ \t]*)?(?:analysis\s+(?:of|for)\s+)?sample\s*#?\s*(\d+)\b[ \t*_)]*(?:[:\-–—.(]|$)[ \t*_]*
//
// It returns nil or {start, end, label start, label end}.
//
// Why it is the same: every part has one way to match. Each starred class
// is followed by something it cannot consume (the leading run by a digit or
// a letter; [ \t*_)]* by punctuation or a line end), so giving back
// characters cannot help; each optional part, when it fails, leaves at its
// start a digit or an "a" where the rest needs an "s"; and \d+ followed by
// \b must take the whole run of digits. The last run is greedy with
// nothing after it, so the match takes all of it.
func matchHeading(s string, p int) (span, bool) {
	i := p
lead:
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '>', '#', '*', '_', '-':
			i++
		default:
			if !strings.HasPrefix(s[i:], "•") {
				break lead
			}
			i += len("•")
		}
	}
	if j := skipDigits(s, i); j > i { // (?:\d+[.)][ \t]*)?
		if j == len(s) || (s[j] != '.' && s[j] != ')') {
			return span{}, false
		}
		i = skipSpaceTab(s, j+1)
	}
	if n := foldPrefix(s[i:], "analysis"); n >= 0 { // (?:analysis\s+(?:of|for)\s+)?
		j := skipRESpace(s, i+n)
		if j == i+n {
			return span{}, false
		}
		m := foldPrefix(s[j:], "of")
		if m < 0 {
			m = foldPrefix(s[j:], "for")
		}
		if m < 0 {
			return span{}, false
		}
		i = skipRESpace(s, j+m)
		if i == j+m {
			return span{}, false
		}
	}
	n := foldPrefix(s[i:], "sample")
	if n < 0 {
		return span{}, false
	}
	i = skipRESpace(s, i+n)
	if i < len(s) && s[i] == '#' {
		i = skipRESpace(s, i+1)
	}
	ds := i
	i = skipDigits(s, i)
	if i == ds || (i < len(s) && isWordByte(s[i])) { // (\d+)\b
		return span{}, false
	}
	de := i
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '*' || s[i] == '_' || s[i] == ')') {
		i++
	}
	switch {
	case i == len(s) || s[i] == '\n': // $ in (?m)
	case s[i] == ':' || s[i] == '-' || s[i] == '.' || s[i] == '(':
		i++
	case strings.HasPrefix(s[i:], "–") || strings.HasPrefix(s[i:], "—"):
		i += len("–") // both are three bytes
	default:
		return span{}, false
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '*' || s[i] == '_') {
		i++
	}
	return span{p, i, ds, de}, true
}

// foldPrefix is the length of the prefix of s that (?i) matches with word
// (lowercase ASCII letters), or -1. Besides both ASCII cases, (?i) lets
// "ſ" stand for s and the Kelvin sign "K" for k: the only non-ASCII runes
// that fold to ASCII letters.
func foldPrefix(s, word string) int {
	n := 0
	for i := 0; i < len(word); i++ {
		c := word[i]
		switch {
		case n < len(s) && s[n]|0x20 == c: // c is a letter: s[n] is c or its capital
			n++
		case c == 's' && strings.HasPrefix(s[n:], "ſ"):
			n += len("ſ")
		case c == 'k' && strings.HasPrefix(s[n:], "\u212a"):
			n += len("\u212a")
		default:
			return -1
		}
	}
	return n
}

func skipRESpace(s string, i int) int {
	for i < len(s) && isRESpace(s[i]) {
		i++
	}
	return i
}

func skipSpaceTab(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

func skipDigits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// span is a match as regexp's Find*SubmatchIndex gives it, in a fixed
// array so that matches need no allocation of their own: start, end, then
// the start and end of each group (unused entries stay 0).
type span [6]int

// isWordByte is Go regexp's \w for the byte starting a rune: [0-9A-Za-z_].
// A byte of 0x80 or above starts (or continues) a non-ASCII rune, never a
// word character for \b.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// matchScoreAfter is scoreAfterLabel on r, written out:
//
//	^[ \t*_()\]]*(?:[:=\-–—]|\bis\b)?[ \t*_]*([-+]?\d+(?:\.\d+)?|[-+]?\.\d+)\b
//
// It returns the number (group 1) and whether there was a match.
//
// Why it is the same: let i end the run of [ \t*_()\]] at the start. The
// regexp first tries the separator at i, then the spaces after it, then the
// number; when that fails, it tries the number at i (giving back part of
// the run cannot help: what is given back can start neither a separator
// nor a number, and [ \t*_]* can only retake it). The number's own choices
// are made by matchNumber.
func matchScoreAfter(r string) (string, bool) {
	start, end, ok := matchScoreAfterSpan(r)
	return r[start:end], ok
}

// matchScoreAfterSpan is matchScoreAfter giving where the number starts and
// ends in r, so that what follows it can be read (scoreAside).
func matchScoreAfterSpan(r string) (int, int, bool) {
	i := 0
	for i < len(r) && strings.IndexByte(" \t*_()]", r[i]) >= 0 {
		i++
	}
	sep := -1
	switch {
	case i == len(r):
	case r[i] == ':' || r[i] == '=' || r[i] == '-':
		sep = i + 1
	case strings.HasPrefix(r[i:], "–") || strings.HasPrefix(r[i:], "—"):
		sep = i + len("–")
	case strings.HasPrefix(r[i:], "is") && (i == 0 || !isWordByte(r[i-1])) && (i+2 == len(r) || !isWordByte(r[i+2])):
		sep = i + 2
	}
	if sep >= 0 {
		k := sep
		for k < len(r) && (r[k] == ' ' || r[k] == '\t' || r[k] == '*' || r[k] == '_') {
			k++
		}
		if end := matchNumber(r, k); end >= 0 {
			return k, end, true
		}
	}
	if end := matchNumber(r, i); end >= 0 {
		return i, end, true
	}
	return 0, 0, false
}

// matchNumber is ([-+]?\d+(?:\.\d+)?|[-+]?\.\d+)\b at k of r: the end of the
// number, or -1. A "-" or "+" is taken when there is one (without it the
// number would have to start at the sign); \d+ runs are taken whole (\b cannot
// hold between two digits); the fraction is dropped when \b fails after
// it, since "." is not a word character and \b then holds before it.
func matchNumber(r string, k int) int {
	j := k
	if j < len(r) && (r[j] == '-' || r[j] == '+') {
		j++
	}
	if d := skipDigits(r, j); d > j {
		if d+1 < len(r) && r[d] == '.' && isDigit(r[d+1]) {
			if f := skipDigits(r, d+1); wordEnds(r, f) {
				return f
			}
		}
		if wordEnds(r, d) {
			return d
		}
		return -1
	}
	if j+1 < len(r) && r[j] == '.' && isDigit(r[j+1]) {
		if f := skipDigits(r, j+1); wordEnds(r, f) {
			return f
		}
	}
	return -1
}

// wordEnds is \b at i of r just after a digit: r ends or a non-word
// character follows.
func wordEnds(r string, i int) bool {
	return i == len(r) || !isWordByte(r[i])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// scoreLineMatches returns what scoreOfLine.FindAllStringIndex(t.s, -1)
// returns: matchScoreLine at each line start, in order from where the
// previous match ended (the end of a line).
func scoreLineMatches(t foldText) []span {
	var out []span
	for p := 0; ; {
		m, ok := nextScoreLine(t, p)
		if !ok {
			return out
		}
		out = append(out, m)
		p = m[1]
	}
}

// nextScoreLine is the first match of scoreLineMatches at a line start at
// or after p, where p is 0 or the end of an earlier match (a line end,
// "\n" or the end of the text, which no "core" search stops at).
func nextScoreLine(t foldText, p int) (span, bool) {
	for p < len(t.s) {
		// A match has "score" on its first line: skip to the next line
		// holding "core" (found with the fast strings.Index).
		j := strings.Index(t.lower[p:], "core")
		if j < 0 {
			break
		}
		p += strings.LastIndexByte(t.s[p:p+j], '\n') + 1
		if m, ok := matchScoreLine(t, p); ok {
			return m, true
		}
		j = strings.IndexByte(t.s[p:], '\n')
		if j < 0 {
			break
		}
		p += j + 1
	}
	return span{}, false
}

// matchScoreLine is scoreOfLine at the line start p of t.s, written out:
//
//	^[^\n]*\bscore\s+(?:of|for)\s+sample\s*#?\s*\d+[^\n]*$
//
// It returns nil or {start, end}.
//
// Why it is the same: [^\n]* is greedy, so the regexp tries the places
// where "score" may start on the first line from the last to the first;
// from a place, the rest has one way to match (see matchScoreChain); the
// match then runs to the end of the line holding the label's digits.
func matchScoreLine(t foldText, p int) (span, bool) {
	e := len(t.s)
	if j := strings.IndexByte(t.s[p:], '\n'); j >= 0 {
		e = p + j
	}
	// "score" is on the first line, in t.s[p:e].
	for lim := e; ; {
		j := strings.LastIndex(t.lower[p:lim], "core")
		if j < 0 {
			return span{}, false
		}
		j += p
		lim = j + 3 // the next search finds the "core" starting before j
		c := -1
		switch {
		case j >= 1 && t.lower[j-1] == 's':
			c = j - 1
		case j >= 2 && t.s[j-2:j] == "ſ":
			c = j - 2
		}
		if c < p || (c > 0 && isWordByte(t.s[c-1])) == isWordByte(t.s[c]) {
			continue
		}
		if d := matchScoreChain(t.s, c); d >= 0 {
			end := len(t.s)
			if k := strings.IndexByte(t.s[d:], '\n'); k >= 0 {
				end = d + k
			}
			return span{p, end}, true
		}
	}
}

// matchScoreChain matches score\s+(?:of|for)\s+sample\s*#?\s* at c of s
// (after the \b, which the caller checks) and returns where the label's
// digits start, or -1. There is one way to match: every \s run is
// followed by a letter, "#" or a digit, which it cannot consume.
func matchScoreChain(s string, c int) int {
	n := foldPrefix(s[c:], "score")
	if n < 0 {
		return -1
	}
	i := skipRESpace(s, c+n)
	if i == c+n {
		return -1
	}
	m := foldPrefix(s[i:], "of")
	if m < 0 {
		m = foldPrefix(s[i:], "for")
	}
	if m < 0 {
		return -1
	}
	j := skipRESpace(s, i+m)
	if j == i+m {
		return -1
	}
	if n = foldPrefix(s[j:], "sample"); n < 0 {
		return -1
	}
	i = skipRESpace(s, j+n)
	if i < len(s) && s[i] == '#' {
		i = skipRESpace(s, i+1)
	}
	if !(i < len(s) && isDigit(s[i])) {
		return -1
	}
	return i
}

// matchScoreOf is scoreOfRE's match without its \b, at q of s:
//
//	score\s+(?:of|for)\s+sample\s*#?\s*(\d+)\b[ \t*_)]*[:=\-–—]?[ \t*_]*([-+]?\d+(?:\.\d+)?)\b
//
// It returns nil or {start, end, label start, label end, number start,
// number end}.
//
// Why it is the same: the label's digits must be taken whole (\b cannot
// hold between two digits) and be followed by a non-word character; then
// the regexp reads the score after them as matchScoreAfter does (the
// separator at the end of the [ \t*_)] run, then the number; else the
// number at that end). Until fix-parse29 the pattern had no \b there and
// gave back the label's last digit as the score ("Score of Sample12" was
// Sample1 scored 2).
func matchScoreOf(s string, q int) (span, bool) {
	ds := matchScoreChain(s, q)
	if ds < 0 {
		return span{}, false
	}
	de := skipDigits(s, ds)
	if !wordEnds(s, de) {
		return span{}, false
	}
	i := de
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '*' || s[i] == '_' || s[i] == ')') {
		i++
	}
	sep := -1
	switch {
	case i == len(s):
	case s[i] == ':' || s[i] == '=' || s[i] == '-':
		sep = i + 1
	case strings.HasPrefix(s[i:], "–") || strings.HasPrefix(s[i:], "—"):
		sep = i + len("–")
	}
	if sep >= 0 {
		k := sep
		for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '*' || s[k] == '_') {
			k++
		}
		if end := matchSignedNumber(s, k); end >= 0 {
			return span{q, end, ds, de, k, end}, true
		}
	}
	if end := matchSignedNumber(s, i); end >= 0 {
		return span{q, end, ds, de, i, end}, true
	}
	return span{}, false
}

// matchSignedNumber is [-+]?\d+(?:\.\d+)?\b at k of s: the first
// alternative of matchNumber.
func matchSignedNumber(s string, k int) int {
	j := k
	if j < len(s) && (s[j] == '-' || s[j] == '+') {
		j++
	}
	d := skipDigits(s, j)
	if d == j {
		return -1
	}
	if d+1 < len(s) && s[d] == '.' && isDigit(s[d+1]) {
		if f := skipDigits(s, d+1); wordEnds(s, f) {
			return f
		}
	}
	if wordEnds(s, d) {
		return d
	}
	return -1
}
