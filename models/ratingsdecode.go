package models

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// maxFastRatings is the most ratings a row's stored text may hold for
// decodeFlatRatings to decode it; a row with more is decoded by
// encoding/json.
const maxFastRatings = 16

// ratingsReader decodes the rows' stored ratings for a run's figures
// (ListDatasetRowFigures, livemem47): rows with the same text share one
// map (ratingMaps), and a text that is a flat object of names and numbers
// or nulls, the form the rows' ratings are stored in, is decoded by hand
// (decodeFlatRatings) with its names shared between rows and its values
// in one array, as encoding/json would decode it; any other text goes to
// encoding/json, which gives the same result and errors as before.
type ratingsReader struct {
	shared ratingMaps
	// names holds each rating name seen once, so rows share its string.
	names map[string]string
}

// of is the decoded ratings of raw, shared with every row whose text is
// the same (ratingMaps.of).
func (rr *ratingsReader) of(raw []byte) (map[string]*float64, error) {
	if rr.shared == nil {
		rr.shared = ratingMaps{}
	}
	if r, ok := rr.shared[string(raw)]; ok {
		return r, nil
	}
	r, ok := rr.decodeFlat(raw)
	if !ok {
		if err := json.Unmarshal(raw, &r); err != nil {
			return nil, err
		}
	}
	if len(rr.shared) < maxSharedRatings {
		rr.shared[string(raw)] = r
	}
	return r, nil
}

// flatRating is one name and value of a text being decoded: the name's
// bytes at raw[from:to], null when it has no value.
type flatRating struct {
	from, to int
	null     bool
	v        float64
}

// decodeFlat decodes raw when it is a JSON object whose names need no
// unescaping (no backslash, valid UTF-8) and whose values are numbers
// that fit a float64 or null, at most maxFastRatings of them: the map
// encoding/json.Unmarshal makes of it into a map[string]*float64 (a name
// given twice keeps its last value; null is a nil value). ok is false for
// any other text, which the caller decodes with encoding/json.
func (rr *ratingsReader) decodeFlat(raw []byte) (m map[string]*float64, ok bool) {
	var buf [maxFastRatings]flatRating
	got := buf[:0]
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		i++
	} else {
		for {
			if i >= len(raw) || raw[i] != '"' || len(got) == maxFastRatings {
				return nil, false
			}
			from := i + 1
			to := from
			for to < len(raw) && raw[to] != '"' {
				if raw[to] == '\\' || raw[to] < 0x20 {
					return nil, false
				}
				to++
			}
			if to >= len(raw) || !utf8.Valid(raw[from:to]) {
				return nil, false
			}
			i = skipSpace(raw, to+1)
			if i >= len(raw) || raw[i] != ':' {
				return nil, false
			}
			i = skipSpace(raw, i+1)
			f := flatRating{from: from, to: to}
			if end := i + 4; end <= len(raw) && string(raw[i:end]) == "null" {
				f.null = true
				i = end
			} else {
				end := numberEnd(raw, i)
				if end < 0 {
					return nil, false
				}
				v, err := strconv.ParseFloat(string(raw[i:end]), 64)
				if err != nil {
					return nil, false // out of range: encoding/json's error
				}
				f.v = v
				i = end
			}
			got = append(got, f)
			i = skipSpace(raw, i)
			if i < len(raw) && raw[i] == ',' {
				i = skipSpace(raw, i+1)
				continue
			}
			if i < len(raw) && raw[i] == '}' {
				i++
				break
			}
			return nil, false
		}
	}
	if skipSpace(raw, i) != len(raw) {
		return nil, false
	}
	values := 0
	for _, f := range got {
		if !f.null {
			values++
		}
	}
	vals := make([]float64, 0, values)
	m = make(map[string]*float64, len(got))
	if rr.names == nil {
		rr.names = map[string]string{}
	}
	for _, f := range got {
		name, seen := rr.names[string(raw[f.from:f.to])]
		if !seen {
			name = string(raw[f.from:f.to])
			rr.names[name] = name
		}
		if f.null {
			m[name] = nil
			continue
		}
		vals = append(vals, f.v)
		m[name] = &vals[len(vals)-1]
	}
	return m, true
}

// skipSpace is the first place at or after i in raw that is not JSON
// white space.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}

// numberEnd is the end of the JSON number that starts at raw[i], -1 when
// none does: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func numberEnd(raw []byte, i int) int {
	digits := func(i int) int {
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(raw) && raw[i] == '-' {
		i++
	}
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case i < len(raw) && raw[i] >= '1' && raw[i] <= '9':
		i = digits(i)
	default:
		return -1
	}
	if i < len(raw) && raw[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}
