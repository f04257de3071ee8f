// Package jsontext writes JSON strings by hand, byte for byte as
// encoding/json writes them, for the documents made often enough that
// reflection and the encoder's own buffer cost more than the escaping: a
// judge call's request body and cache key, the stored request, and the
// rows of a dataset import.
package jsontext

import (
	"encoding/binary"
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes copied into a JSON string as they are:
// printable characters other than the quote and the backslash. htmlPlain
// also leaves out <, > and &, which json.Marshal escapes.
var plain, htmlPlain = func() (p, h [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		p[c] = c != '"' && c != '\\'
		h[c] = p[c] && c != '<' && c != '>' && c != '&'
	}
	return p, h
}()

// AppendString appends s as a JSON string as encoding/json writes it:
// control characters as \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd
// (one per bad byte), U+2028 and U+2029 escaped, and with html <, > and &
// as \u003c, \u003e and \u0026.
func AppendString(dst []byte, s string, html bool) []byte {
	safe := &plain
	if html {
		safe = &htmlPlain
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip eight plain bytes at a time (most of a prompt is plain
		// ASCII), then look at the next eight one by one.
		for len(s)-i >= 8 && plainWord(binary.LittleEndian.Uint64([]byte(s[i:i+8])), html) {
			i += 8
		}
		for end := min(i+8, len(s)); i < end; {
			c := s[i]
			if c < utf8.RuneSelf {
				if safe[c] {
					i++
					continue
				}
				dst = append(dst, s[start:i]...)
				switch c {
				case '"', '\\':
					dst = append(dst, '\\', c)
				case '\b':
					dst = append(dst, '\\', 'b')
				case '\f':
					dst = append(dst, '\\', 'f')
				case '\n':
					dst = append(dst, '\\', 'n')
				case '\r':
					dst = append(dst, '\\', 'r')
				case '\t':
					dst = append(dst, '\\', 't')
				default: // other control characters, and <>& in html mode
					dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				}
				i++
				start = i
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
			case r == '\u2028' || r == '\u2029':
				// Valid JSON, but not valid JavaScript: encoding/json
				// escapes them always.
				dst = append(dst, s[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			default:
				i += size
				continue
			}
			i += size
			start = i
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Word-at-a-time tests on eight bytes (SWAR). They may report a byte that
// is not there after one that is (a borrow carries over), never miss one:
// enough to decide that a word needs no escape.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasLess reports whether a byte of x is below n (n <= 128).
func hasLess(x, n uint64) uint64 { return (x - ones*n) &^ x & highs }

// hasByte reports whether a byte of x is c.
func hasByte(x, c uint64) uint64 { return hasLess(x^(ones*c), 1) }

// plainWord reports whether the eight bytes of x are all copied as they
// are: ASCII, printable, neither quote nor backslash (nor <, >, & for
// html).
func plainWord(x uint64, html bool) bool {
	bad := x&highs | hasLess(x, 0x20) | hasByte(x, '"') | hasByte(x, '\\')
	if html {
		bad |= hasByte(x, '<') | hasByte(x, '>') | hasByte(x, '&')
	}
	return bad == 0
}
