package judge

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The 2xx body is read by a small scanner over the few fields decode
// needs, instead of the SDK's reflective decoder. It reads them exactly as
// the SDK did (testdata/outcomes.json, TestOutcomes), which is not how
// encoding/json would:
//   - keys match case-sensitively, and of two equal keys the first wins;
//   - a number, boolean, object or array where a string belongs is kept as
//     its text (a number in its shortest decimal form unless it is an
//     integer), null gives "";
//   - token counts and log probabilities are also read from strings and
//     booleans, large counts saturate, fractions are cut toward zero;
//   - an object that is not an object (a string, a number...) is ignored;
//   - an array with an element that is neither an object nor null is
//     ignored as a whole, and a null element is an empty one;
//   - invalid UTF-8 in a string without escapes is kept as it came.
//
// The body is checked first (validJSON, which accepts what json.Valid
// does), so the scanner only ever sees well-formed JSON, and a malformed
// body gets encoding/json's message.

// completion is what decode reads of a chat completion.
type completion struct {
	Choices          []Choice
	Model            string
	PromptTokens     int64
	CompletionTokens int64
}

// sdkTypeName is how the SDK's error named the type a non-object body
// failed to decode into; the message is kept as users have been seeing it.
const sdkTypeName = "openai.ChatCompletion"

// parseCompletion reads a well-formed JSON document (validJSON holds).
// The error is for a document that is not an object or null.
func parseCompletion(b []byte) (completion, error) {
	var cc completion
	i := skipSpace(b, 0)
	if i >= len(b) {
		return cc, nil
	}
	switch b[i] {
	case '{':
	case 'n':
		return cc, nil
	default:
		return cc, errors.New("json: cannot unmarshal " + jsonKind(b[i]) + " into Go value of type " + sdkTypeName)
	}
	var seen uint8
	eachField(b[i:], func(key, v []byte) {
		switch {
		case once(&seen, 1, key, "choices"):
			cc.Choices = parseArray(v, parseChoice)
		case once(&seen, 2, key, "model"):
			cc.Model = stringValue(v)
		case once(&seen, 4, key, "usage"):
			if v[0] != '{' {
				return
			}
			var seenUsage uint8
			eachField(v, func(key, v []byte) {
				switch {
				case once(&seenUsage, 1, key, "prompt_tokens"):
					cc.PromptTokens = intValue(v)
				case once(&seenUsage, 2, key, "completion_tokens"):
					cc.CompletionTokens = intValue(v)
				}
			})
		}
	})
	return cc, nil
}

func parseChoice(v []byte) Choice {
	var ch Choice
	if v[0] != '{' {
		return ch // null
	}
	var seen uint8
	eachField(v, func(key, v []byte) {
		switch {
		case once(&seen, 1, key, "message"):
			if v[0] != '{' {
				return
			}
			var seenMsg uint8
			eachField(v, func(key, v []byte) {
				if once(&seenMsg, 1, key, "content") {
					ch.Text = stringValue(v)
				}
			})
		case once(&seen, 2, key, "finish_reason"):
			ch.FinishReason = stringValue(v)
		case once(&seen, 4, key, "logprobs"):
			if v[0] != '{' {
				return
			}
			var seenLp uint8
			eachField(v, func(key, v []byte) {
				if once(&seenLp, 1, key, "content") {
					ch.Logprobs = parseArray(v, parseToken)
				}
			})
		}
	})
	return ch
}

// parseToken reads an output token with its alternatives.
func parseToken(v []byte) TokenLogprob {
	var t TokenLogprob
	if v[0] != '{' {
		return t // null
	}
	var seen uint8
	eachField(v, func(key, v []byte) {
		switch {
		case once(&seen, 1, key, "token"):
			t.Token = stringValue(v)
		case once(&seen, 2, key, "logprob"):
			t.Logprob = floatValue(v)
		case once(&seen, 4, key, "top_logprobs"):
			t.Top = parseArray(v, parseAlternative)
		}
	})
	return t
}

// parseAlternative reads one alternative token.
func parseAlternative(v []byte) TopLogprob {
	var t TopLogprob
	if v[0] != '{' {
		return t // null
	}
	var seen uint8
	eachField(v, func(key, v []byte) {
		switch {
		case once(&seen, 1, key, "token"):
			t.Token = stringValue(v)
		case once(&seen, 2, key, "logprob"):
			t.Logprob = floatValue(v)
		}
	})
	return t
}

// once reports whether key is name and the field (bit) was not seen yet,
// marking it seen: the first of duplicate keys wins. A later duplicate is
// matched here too, and ignored.
func once(seen *uint8, bit uint8, key []byte, name string) bool {
	if !keyIs(key, name) {
		return false
	}
	if *seen&bit != 0 {
		return false
	}
	*seen |= bit
	return true
}

// keyIs compares a raw key (between its quotes) with name, unescaping it
// first if it has escapes.
func keyIs(key []byte, name string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key) == name
	}
	return unescape(key) == name
}

// parseArray reads an array of objects. Anything else, an array with an
// element that is neither an object nor null, or an empty array gives nil
// (the client always left an empty list nil).
func parseArray[T any](v []byte, elem func([]byte) T) []T {
	if v[0] != '[' {
		return nil
	}
	n := 0
	ok := true
	eachElement(v, func(e []byte) {
		if e[0] != '{' && e[0] != 'n' {
			ok = false
		}
		n++
	})
	if !ok || n == 0 {
		return nil
	}
	out := make([]T, 0, n)
	eachElement(v, func(e []byte) { out = append(out, elem(e)) })
	return out
}

// stringValue reads a value where a string belongs.
func stringValue(v []byte) string {
	switch v[0] {
	case '"':
		return stringContent(v)
	case 'n':
		return ""
	case 't':
		return "true"
	case 'f':
		return "false"
	case '{', '[':
		return string(v)
	}
	// A number: an integer as written, anything else in its shortest
	// decimal form (1e2 is "100", 3.50 is "3.5").
	for i, c := range v {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			f, _ := strconv.ParseFloat(string(v), 64)
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	return string(v)
}

// intValue reads a token count.
func intValue(v []byte) int64 {
	switch c := v[0]; {
	case c == 't':
		return 1
	case c == '"':
		s := stringContent(v)
		n, ok := parseDigits(s)
		if !ok {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				n = clampInt(f)
			}
		}
		return n
	case c == '-' || (c >= '0' && c <= '9'):
		f, _ := strconv.ParseFloat(string(v), 64)
		// Integers a float64 holds exactly are converted; larger ones are
		// read digit by digit when they have no fraction or exponent.
		if f >= -maxExactInt && f <= maxExactInt {
			return int64(f)
		}
		if n, ok := parseDigits(string(v)); ok {
			return n
		}
		return clampInt(f)
	}
	return 0
}

// maxExactInt is the largest integer below which every integer is exact
// in a float64 (2^53 - 1).
const maxExactInt = 1<<53 - 1

// parseDigits reads an optionally negative run of decimal digits,
// saturating at the int64 range; false for anything else.
func parseDigits(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	var n uint64
	overflow := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if overflow {
			continue // only checking that the rest are digits
		}
		// The SDK's reader took a wrap-around that leaves the value
		// smaller as the overflow, and only that; so does this one.
		next := n*10 + uint64(c-'0')
		if next < n {
			overflow = true
		}
		n = next
	}
	if overflow {
		n = math.MaxUint64
	}
	if neg {
		if n > 1<<63 {
			return math.MinInt64, true
		}
		return -int64(n), true
	}
	if n > math.MaxInt64 {
		return math.MaxInt64, true
	}
	return int64(n), true
}

func clampInt(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f < math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// floatValue reads a log probability.
func floatValue(v []byte) float64 {
	switch c := v[0]; {
	case c == 't':
		return 1
	case c == '"':
		f, _ := strconv.ParseFloat(stringContent(v), 64) // ±Inf when out of range
		return f
	case c == '-' || (c >= '0' && c <= '9'):
		f, _ := strconv.ParseFloat(string(v), 64)
		return f
	}
	return 0
}

// jsonKind names a JSON value by its first byte as encoding/json does.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	}
	return "number"
}

// stringContent returns the text of a JSON string value (with its quotes).
func stringContent(v []byte) string {
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s)
	}
	return unescape(s)
}

// unescape decodes the escapes of a string's content. A \u escape of half
// a surrogate pair takes the next \u escape as its other half, whatever it
// is; a pair that does not decode, or a lone half, becomes U+FFFD.
func unescape(s []byte) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		// Copy the run up to the next escape in one go.
		j := bytes.IndexByte(s[i:], '\\')
		if j < 0 {
			b.Write(s[i:])
			break
		}
		b.Write(s[i : i+j])
		i += j + 1
		if i >= len(s) {
			break
		}
		switch s[i] {
		case '"', '\\', '/':
			b.WriteByte(s[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if i+5 > len(s) {
				return b.String()
			}
			r := hex4(s[i+1:])
			i += 4
			if utf16.IsSurrogate(r) && len(s)-i-1 >= 6 && s[i+1] == '\\' && s[i+2] == 'u' {
				r = utf16.DecodeRune(r, hex4(s[i+3:]))
				i += 6
			}
			if !utf8.ValidRune(r) {
				r = utf8.RuneError
			}
			b.WriteRune(r)
		default:
			return b.String()
		}
	}
	return b.String()
}

// hex4 reads the four hex digits of a \u escape (valid JSON has them).
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// eachField calls fn with the raw key (between its quotes) and the raw
// value of every member of the object v, in order.
func eachField(v []byte, fn func(key, val []byte)) {
	i := skipSpace(v, 1)
	for i < len(v) && v[i] == '"' {
		end := skipString(v, i)
		key := v[i+1 : end-1]
		i = skipSpace(v, end)
		i = skipSpace(v, i+1) // the colon
		vend := skipValue(v, i)
		fn(key, v[i:vend])
		i = skipSpace(v, vend)
		if i < len(v) && v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
}

// eachElement calls fn with the raw value of every element of the array v.
func eachElement(v []byte, fn func([]byte)) {
	i := skipSpace(v, 1)
	for i < len(v) && v[i] != ']' {
		end := skipValue(v, i)
		fn(v[i:end])
		i = skipSpace(v, end)
		if i < len(v) && v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i].
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		i += j
		// The quote is escaped if an odd number of backslashes precede it.
		k := i - 1
		for b[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1
		}
		i++
	}
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return len(b)
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\n', '\r', '\t':
			return i
		}
		i++
	}
	return i
}
