package models

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// sameRatings tells whether a and b hold the same names, each nil in
// both or the same value (bits: -0 is not 0).
func sameRatings(a, b map[string]*float64) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || (v == nil) != (w == nil) || (v != nil && math.Float64bits(*v) != math.Float64bits(*w)) {
			return false
		}
	}
	return true
}

// TestRatingsReaderAsJSON: the rows' ratings as ListDatasetRowFigures
// decodes them (ratingsReader, livemem47) are what encoding/json makes of
// the same text, every name and value, null, a name given twice, white
// space, and the same error where encoding/json refuses the text; the
// texts the hand decoder leaves to encoding/json (escapes, strings,
// nesting, too many names, numbers out of range) are still decoded.
func TestRatingsReaderAsJSON(t *testing.T) {
	many := make([]string, maxFastRatings+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"r%d":%d`, i, i)
	}
	cases := []struct {
		raw  string
		fast bool // decoded by hand, not by encoding/json
	}{
		{`{"human":4}`, true},
		{`{"human":3.4}`, true},
		{`{}`, true},
		{` { } `, true},
		{`{"human":null}`, true},
		{`{"a":1,"b":null,"c":-0.5e-3}`, true},
		{"{\n\t\"a\" : 1 ,\r\n \"b\":2E+2 }\n", true},
		{`{"a":1,"a":2}`, true},
		{`{"a":1,"a":null}`, true},
		{`{"a":-0}`, true},
		{`{"a":0.1,"b":1e308,"c":4.9e-324,"d":123456789012345678901234567890}`, true},
		{`{"résumé@ann":2.5,"日本":1}`, true},
		{`{"":1}`, true},
		{`{` + strings.Join(many[:maxFastRatings], ",") + `}`, true},
		// Left to encoding/json.
		{`{` + strings.Join(many, ",") + `}`, false},
		{`{"a\"b":1}`, false},
		{`{"a\u00e9":1}`, false},
		{`{"a":"3"}`, false},
		{`{"a":[1]}`, false},
		{`{"a":{"b":1}}`, false},
		{`{"a":1e400}`, false},
		{`{"a":01}`, false},
		{`{"a":.5}`, false},
		{`{"a":1.}`, false},
		{`{"a":1e}`, false},
		{`{"a":+1}`, false},
		{`{"a":-}`, false},
		{`{"a":nul}`, false},
		{`{"a":nullx}`, false},
		{`{"a":true}`, false},
		{`{"a":1,}`, false},
		{`{"a":1 "b":2}`, false},
		{`{"a" 1}`, false},
		{`{a:1}`, false},
		{`{"a":1}x`, false},
		{`{"a":1`, false},
		{`{"a`, false},
		{`null`, false},
		{`[]`, false},
		{``, false},
		{"{\"a\xff\":1}", false},
		{"{\"a\x01\":1}", false},
	}
	for _, c := range cases {
		t.Run(c.raw, func(t *testing.T) {
			var want map[string]*float64
			wantErr := json.Unmarshal([]byte(c.raw), &want)
			var rr ratingsReader
			if _, fast := rr.decodeFlat([]byte(c.raw)); fast != c.fast {
				t.Errorf("decoded by hand: %v, want %v", fast, c.fast)
			}
			got, err := rr.of([]byte(c.raw))
			if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
				t.Fatalf("error %v, want %v", err, wantErr)
			}
			if err == nil && !sameRatings(got, want) {
				t.Fatalf("decoded %v, want %v", show(got), show(want))
			}
		})
	}
}

// TestRatingsReaderRandom: random flat ratings texts, as a dataset's rows
// store continuous and whole ratings, nulls and annotators, decode as
// encoding/json decodes them; rows whose text is the same share one map,
// and rows whose texts differ never share a value.
func TestRatingsReaderRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 1))
	var rr ratingsReader
	seen := map[string]map[string]*float64{}
	owner := map[*float64]string{} // the text each value was decoded from
	for i := range 5000 {
		n := rng.IntN(5)
		parts := make([]string, n)
		for j := range parts {
			name := []string{"human", "human@ann", "human@bob", "fluency", "x y"}[rng.IntN(5)]
			var v string
			switch rng.IntN(5) {
			case 0:
				v = "null"
			case 1:
				v = strconv.Itoa(rng.IntN(11) - 5)
			case 2:
				v = strconv.FormatFloat(rng.NormFloat64()*1e3, 'g', -1, 64)
			case 3:
				v = strconv.FormatFloat(rng.Float64(), 'e', rng.IntN(20), 64)
			default:
				v = strconv.FormatFloat(rng.Float64()*5, 'f', rng.IntN(6), 64)
			}
			parts[j] = fmt.Sprintf("%q:%s", name, v)
		}
		raw := "{" + strings.Join(parts, ",") + "}"
		var want map[string]*float64
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatalf("row %d: %s: %v", i, raw, err)
		}
		got, err := rr.of([]byte(raw))
		if err != nil || !sameRatings(got, want) {
			t.Fatalf("row %d: %s: decoded %v (%v), want %v", i, raw, show(got), err, show(want))
		}
		if prev, ok := seen[raw]; ok {
			if fmt.Sprintf("%p", prev) != fmt.Sprintf("%p", got) {
				t.Fatalf("row %d: %s decoded again, not shared", i, raw)
			}
			continue
		}
		for _, v := range got {
			if v == nil {
				continue
			}
			if other, ok := owner[v]; ok {
				t.Fatalf("row %d: %s shares a value with %s", i, raw, other)
			}
			owner[v] = raw
		}
		seen[raw] = got
	}
}

// show prints ratings with their values, not their pointers.
func show(m map[string]*float64) string {
	if m == nil {
		return "nil"
	}
	var b strings.Builder
	b.WriteString("{")
	for k, v := range m {
		if v == nil {
			fmt.Fprintf(&b, "%q:null ", k)
		} else {
			fmt.Fprintf(&b, "%q:%v ", k, *v)
		}
	}
	b.WriteString("}")
	return b.String()
}
