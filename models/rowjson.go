package models

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/batcheval/batcheval/evaluator/jsontext"
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
		b = jsontext.AppendString(b, k, true)
		b = append(b, ':')
		b = jsontext.AppendString(b, m[k], true)
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
		b = jsontext.AppendString(b, k, true)
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

// sortedKeys appends m's keys to dst, sorted (encoding/json's order).
func sortedKeys[V any](dst []string, m map[string]V) []string {
	for k := range m {
		dst = append(dst, k)
	}
	slices.Sort(dst)
	return dst
}
