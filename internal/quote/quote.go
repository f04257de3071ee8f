// Package quote writes names people typed into messages people read:
// between the product's quotation marks, “ and ”, as typed, with only what
// cannot be seen made visible. The pages (web.Quoted) and the models'
// messages (models/dataimport) both use it, so a column name reads the
// same in a flash and in an import error. Imports nothing of the product.
package quote

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Quoted puts a name a person typed (a judge's, a rubric's, a column's, a
// value from a form) between the product's quotation marks, “ and ”, as
// typed: a quotation mark, a backslash or a <b> in it stays as it is (no
// Go-style escaping), and HTML escaping is left to the template that shows
// the text. Only what cannot be seen is made visible: a control character
// (a line break, a tab) as its Unicode control picture (␊, ␉), and a
// direction override, which would reorder the text around it, as its code
// point (⟨U+202E⟩). Invalid UTF-8 is shown as �. Use it for messages
// people read; text for machines (JSON, logs, headers) keeps %q.
func Quoted(s string) string {
	return "“" + Visible(s) + "”"
}

// QuotedList quotes each name with Quoted and joins them with commas and
// conj ("and", "or") before the last: “a”, “b” or “c”.
func QuotedList(names []string, conj string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = Quoted(n)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " " + conj + " " + q[len(q)-1]
}

// Visible is s with its control characters and direction overrides
// written visibly, as Quoted writes them, and nothing else changed.
func Visible(s string) string {
	if !needsVisible(s) {
		return s
	}
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, size := utf8.DecodeRuneInString(s[i:])
		w = size
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(utf8.RuneError)
		case r < 0x20:
			b.WriteRune(0x2400 + r) // U+2400 to U+241F picture C0 controls: ␀ … ␟
		case r == 0x7f:
			b.WriteRune('␡')
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// VisibleLines is Visible for a block of text shown with its line breaks
// (a <pre>): line breaks (\r\n written as \n) and tabs are kept as they
// are, every other control character is made visible.
func VisibleLines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		cells := strings.Split(l, "\t")
		for k, c := range cells {
			cells[k] = Visible(c)
		}
		lines[i] = strings.Join(cells, "\t")
	}
	return strings.Join(lines, "\n")
}

func needsVisible(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029' {
			return true
		}
	}
	return false
}
