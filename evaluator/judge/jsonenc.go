package judge

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"unicode/utf8"
)

// Hand-written JSON for the two documents made on every call: the request
// body (wire.go) and the cache key (RequestHash). Both must come out byte
// for byte as encoding/json wrote them, since endpoints have been receiving
// those bytes and databases hold answers under hashes of them: the rules
// below are encoding/json's, and FuzzAppendString, TestEncodeBody and
// FuzzRequestHash compare with it. What is worth writing by hand is only
// this: reflection, the encoder's own buffer and its copy into ours cost
// more than the escaping itself.

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

// appendString appends s as a JSON string as encoding/json writes it:
// control characters as \b \f \n \r \t or \u00XX, invalid UTF-8 as \ufffd
// (one per bad byte), U+2028 and U+2029 escaped, and with html <, > and &
// as \u003c, \u003e and \u0026.
func appendString(dst []byte, s string, html bool) []byte {
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

// appendFloat appends f as encoding/json writes a float64: the shortest
// form that reads back the same, with an exponent only below 1e-6 or from
// 1e21 up, and a one-digit negative exponent not padded (1e-7, not 1e-07).
// NaN and infinities are an error, as there.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// appendValue appends v encoded by encoding/json (a JSON schema: maps and
// slices of anything), with or without HTML escaping, without the
// encoder's trailing newline.
func appendValue(dst []byte, v any, html bool) ([]byte, error) {
	if html {
		b, err := json.Marshal(v)
		return append(dst, b...), err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// appendBody appends the request body: the fields of chatRequest in
// order, the optional ones only when set (the omitempty rules), strings
// without HTML escaping (the SDK turned it off).
func appendBody(b []byte, r *chatRequest) ([]byte, error) {
	b = append(b, `{"messages":[`...)
	for i, m := range r.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"content":`...)
		b = appendString(b, m.Content, false)
		b = append(b, `,"role":`...)
		b = appendString(b, m.Role, false)
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = appendString(b, r.Model, false)
	if r.Logprobs {
		b = append(b, `,"logprobs":true`...)
	}
	if r.MaxTokens != 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(r.MaxTokens), 10)
	}
	if r.N != 0 {
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, int64(r.N), 10)
	}
	if r.Seed != nil {
		b = append(b, `,"seed":`...)
		b = strconv.AppendInt(b, *r.Seed, 10)
	}
	var err error
	b = append(b, `,"temperature":`...)
	if b, err = appendFloat(b, r.Temperature); err != nil {
		return b, err
	}
	if r.TopLogprobs != 0 {
		b = append(b, `,"top_logprobs":`...)
		b = strconv.AppendInt(b, int64(r.TopLogprobs), 10)
	}
	if r.TopP != 0 {
		b = append(b, `,"top_p":`...)
		if b, err = appendFloat(b, r.TopP); err != nil {
			return b, err
		}
	}
	if rf := r.ResponseFormat; rf != nil {
		b = append(b, `,"response_format":{`...)
		if js := rf.JSONSchema; js != nil {
			b = append(b, `"json_schema":{"name":`...)
			b = appendString(b, js.Name, false)
			b = append(b, `,"strict":`...)
			b = strconv.AppendBool(b, js.Strict)
			b = append(b, `,"schema":`...)
			if b, err = appendValue(b, js.Schema, false); err != nil {
				return b, err
			}
			b = append(b, "},"...)
		}
		b = append(b, `"type":`...)
		b = appendString(b, rf.Type, false)
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendCacheKey appends the JSON of cacheKey{baseURL, model, r} as
// json.Marshal wrote it: Request's fields under their Go names, none
// omitted, strings HTML-escaped. TestRequestHashCoversRequest fails when
// Request gains a field this does not write.
func appendCacheKey(b []byte, baseURL, model string, r *Request) ([]byte, error) {
	b = append(b, `{"base_url":`...)
	b = appendString(b, baseURL, true)
	b = append(b, `,"model":`...)
	b = appendString(b, model, true)
	b = append(b, `,"request":{"Messages":`...)
	b = appendMessages(b, r.Messages)
	var err error
	b = append(b, `,"Temperature":`...)
	if b, err = appendFloat(b, r.Temperature); err != nil {
		return b, err
	}
	b = append(b, `,"TopP":`...)
	if b, err = appendFloat(b, r.TopP); err != nil {
		return b, err
	}
	b = append(b, `,"MaxTokens":`...)
	b = strconv.AppendInt(b, int64(r.MaxTokens), 10)
	b = append(b, `,"N":`...)
	b = strconv.AppendInt(b, int64(r.N), 10)
	b = append(b, `,"Seed":`...)
	if r.Seed == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *r.Seed, 10)
	}
	b = append(b, `,"Logprobs":`...)
	b = strconv.AppendBool(b, r.Logprobs)
	b = append(b, `,"TopLogprobs":`...)
	b = strconv.AppendInt(b, int64(r.TopLogprobs), 10)
	b = append(b, `,"JSONMode":`...)
	b = strconv.AppendBool(b, r.JSONMode)
	b = append(b, `,"JSONSchema":`...)
	if r.JSONSchema == nil {
		b = append(b, "null"...)
	} else if b, err = appendValue(b, r.JSONSchema, true); err != nil {
		return b, err
	}
	return append(b, "}}"...), nil
}
