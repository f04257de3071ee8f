package models

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The JSON of a dataset row's data and ratings, written by hand for
// imports: encoding/json reflects over every map and allocates for each,
// which at a million rows was a large share of an import. The output is
// byte for byte what encoding/json writes (keys sorted, HTML characters
// and U+2028/U+2029 escaped, invalid UTF-8 replaced), so rows stored either
// way read back alike (TestRowJSONMatchesEncodingJSON).

// rowEncoder keeps the scratch space reused from row to row.
type rowEncoder struct {
	keys []string
}

// appendData appends m as a JSON object of strings.
func (e *rowEncoder) appendData(b []byte, m map[string]string) []byte {
	e.keys = sortedKeys(e.keys[:0], m)
	b = append(b, '{')
	for i, k := range e.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, m[k])
	}
	return append(b, '}')
}

// appendRatings appends m as a JSON object of numbers, null where a rating
// is missing. A NaN or infinite rating cannot be written (nor can
// encoding/json write it).
func (e *rowEncoder) appendRatings(b []byte, m map[string]*float64) ([]byte, error) {
	e.keys = sortedKeys(e.keys[:0], m)
	b = append(b, '{')
	for i, k := range e.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		v := m[k]
		if v == nil {
			b = append(b, "null"...)
			continue
		}
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			return b, fmt.Errorf("the rating %q is %v, which cannot be stored", k, *v)
		}
		b = appendJSONFloat(b, *v)
	}
	return append(b, '}'), nil
}

// appendJSONFloat writes f as encoding/json does: plain decimals, and
// exponents only for very small or very large magnitudes.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-07 -> e-7, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string, escaped as encoding/json
// escapes it by default.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				// Control characters and <, >, & (HTML-safe, as
				// encoding/json writes them).
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// sortedKeys appends m's keys to dst, sorted (encoding/json's order).
func sortedKeys[V any](dst []string, m map[string]V) []string {
	for k := range m {
		dst = append(dst, k)
	}
	slices.Sort(dst)
	return dst
}
