package evaluator

import (
	"regexp"
	"strings"
)

// The answer parser used to run its case-insensitive patterns over the
// whole answer. Go's regexp engine then tries every position of the text,
// folding case rune by rune, and clears a bit set the size of the text for
// every match it looks for: about 0.3 ms for a ten-sample answer. The
// scanners below return exactly what those whole-text searches returned,
// but run the pattern only where it can match:
//
//   - at the start of a line (for the patterns that begin with (?m)^), or
//     at a keyword (for the patterns that begin with \b and a word), found
//     with strings.Index in an ASCII-lowercased copy of the text;
//   - over a window that ends at the first line break no match can cross
//     (see windowEnd), rather than over the rest of the text.
//
// The patterns themselves are unchanged (see the *Body constants in
// parse.go), so every match found is the one regexp found.

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
	i := 0
	for i < len(s) && !('A' <= s[i] && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return foldText{s, s}
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return foldText{s, string(b)}
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
// with \A. Every match contains need (lowercase ASCII, "" for none), so a
// window without it is skipped.
//
// Why it is the same: every match of a (?m)^ pattern starts at a line
// start; at a line start p, matching the \A form on the window starting at
// p sees what ^ sees at p (start of text, or just after "\n": neither is a
// word character for \b), and reads only what the whole-text match reads
// (windowEnd). Line starts are tried in order from where the previous match
// ended, which is how FindAll proceeds; none of these patterns can match
// the empty string.
func lineMatches(t foldText, at *regexp.Regexp, need string, limit int) [][]int {
	var out [][]int
	from := 0
	for p := 0; p < len(t.s) && (limit < 0 || len(out) < limit); {
		next := len(t.s)
		if j := strings.IndexByte(t.s[p:], '\n'); j >= 0 {
			next = p + j + 1
		}
		if p >= from {
			if end := windowEnd(t.s, p); strings.Contains(t.lower[p:end], need) {
				if loc := at.FindStringSubmatchIndex(t.s[p:end]); loc != nil {
					out = append(out, offset(loc, p))
					from = loc[1]
				}
			}
		}
		p = next
	}
	return out
}

// wordMatches returns what re.FindAllStringSubmatchIndex(t.s, -1) returns
// for re = \b followed by the body of at, a body that starts with a word
// beginning with s (case-insensitive) whose remaining letters tail contain
// no s or k (lowercase ASCII: "ample" for "sample", "core" for "score").
//
// Why it is the same: a match starts at an "s", "S" or "ſ" right before
// tail, and those are found with strings.Index in t.lower. The \b before
// it is checked here, on the bytes (ASCII word characters are single bytes,
// and any other byte belongs to a non-word rune); the rest of the pattern
// looks only to the right, and windowEnd bounds what it reads. Candidates
// are tried in order from where the previous match ended, as FindAll does.
func wordMatches(t foldText, at *regexp.Regexp, tail string) [][]int {
	var out [][]int
	from := 0
	for i := 0; i < len(t.lower); i++ {
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
		end := windowEnd(t.s, q)
		if loc := at.FindStringSubmatchIndex(t.s[q:end]); loc != nil {
			out = append(out, offset(loc, q))
			from = loc[1]
		}
	}
	return out
}

// isWordByte is Go regexp's \w for the byte starting a rune: [0-9A-Za-z_].
// A byte of 0x80 or above starts (or continues) a non-ASCII rune, never a
// word character for \b.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// offset moves submatch indexes found in a window starting at p to indexes
// in the whole text (-1 stays -1: a group that did not take part).
func offset(loc []int, p int) []int {
	for i, v := range loc {
		if v >= 0 {
			loc[i] = v + p
		}
	}
	return loc
}
