package judge

// validJSON reports whether b is one well-formed JSON value, accepting
// exactly what json.Valid accepts (FuzzValidJSON compares them): the
// grammar of RFC 8259, any byte from 0x20 up inside strings (UTF-8 is not
// checked), and at most maxNesting levels of objects and arrays. It is
// json.Valid without the per-byte state machine, about five times faster
// on a judge's answer, where it was the largest cost of reading one.
func validJSON(b []byte) bool {
	v := validator{b: b}
	i, ok := v.value(v.space(0), 0)
	return ok && v.space(i) == len(b)
}

// maxNesting is encoding/json's limit on nested objects and arrays.
const maxNesting = 10000

type validator struct{ b []byte }

func (v *validator) space(i int) int {
	for i < len(v.b) {
		switch v.b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value checks the value starting at i, depth levels deep, and returns
// the index just past it.
func (v *validator) value(i, depth int) (int, bool) {
	b := v.b
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return v.str(i)
	case c == '{':
		if depth >= maxNesting {
			return i, false
		}
		i = v.space(i + 1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			var ok bool
			if i, ok = v.str(i); !ok {
				return i, false
			}
			i = v.space(i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			if i, ok = v.value(v.space(i+1), depth+1); !ok {
				return i, false
			}
			i = v.space(i)
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i = v.space(i + 1)
			case '}':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '[':
		if depth >= maxNesting {
			return i, false
		}
		i = v.space(i + 1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = v.value(i, depth+1); !ok {
				return i, false
			}
			i = v.space(i)
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i = v.space(i + 1)
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == 't':
		return v.literal(i, "true")
	case c == 'f':
		return v.literal(i, "false")
	case c == 'n':
		return v.literal(i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number(i)
	}
	return i, false
}

func (v *validator) literal(i int, lit string) (int, bool) {
	if len(v.b)-i < len(lit) || string(v.b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// str checks the string starting at the quote at i.
func (v *validator) str(i int) (int, bool) {
	b := v.b
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if len(b)-i < 5 || !isHex(b[i+1]) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) {
					return i, false
				}
				i += 5
			default:
				return i, false
			}
		default:
			i++
		}
	}
	return i, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at i.
func (v *validator) number(i int) (int, bool) {
	b := v.b
	digits := func(i int) (int, bool) {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i, i > start
	}
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false
	}
	var ok bool
	if b[i] == '0' {
		i++
	} else if i, ok = digits(i); !ok {
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		if i, ok = digits(i + 1); !ok {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i, ok = digits(i); !ok {
			return i, false
		}
	}
	return i, true
}
