// Package excerpt shortens text for previews: table cells, list labels,
// log lines. Every preview in the product is cut by Cut, so a cut never
// splits a word when a word boundary is near and is always marked.
package excerpt

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis marks where a text was cut.
const Ellipsis = "…"

// Cut returns s unchanged when it has at most n characters; otherwise it
// keeps at most n-1 characters, ending at the last word boundary, and adds
// an ellipsis, so the result has at most n characters. A word is split
// only when keeping whole words would drop more than half of what fits
// (one very long word, a URL).
func Cut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n == 1 {
		return Ellipsis
	}
	r := []rune(s)
	head := r[:n-1]
	// The cut falls between words when the next character is a space.
	if !unicode.IsSpace(r[n-1]) {
		// Back off to the last space, unless that loses too much.
		for i := len(head) - 1; i >= 0; i-- {
			if unicode.IsSpace(head[i]) {
				if i >= (n-1)/2 {
					head = head[:i]
				}
				break
			}
		}
	}
	// Trailing spaces and joining punctuation read badly before "…".
	out := strings.TrimRightFunc(string(head), func(c rune) bool {
		return unicode.IsSpace(c) || strings.ContainsRune(",;:-–—", c)
	})
	if out == "" {
		out = string(r[:n-1])
	}
	return out + Ellipsis
}

// Line is Cut on s with its runs of white space (line breaks included)
// written as one space, for previews that must stay on one line.
func Line(s string, n int) string {
	return Cut(strings.Join(strings.Fields(s), " "), n)
}
