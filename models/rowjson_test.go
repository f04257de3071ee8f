package models

import (
	"encoding/json"
	"math"
	"testing"
)

// TestRowJSONMatchesEncodingJSON: the hand-written JSON of imported rows is
// byte for byte what encoding/json writes (GORM's serializer, used for rows
// stored any other way), for texts with every kind of escape and for
// ratings of every magnitude.
func TestRowJSONMatchesEncodingJSON(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	texts := []map[string]string{
		{},
		{"text": "plain"},
		{"b": "quote \" backslash \\ slash /", "a": "tab\tnewline\nreturn\r", "c": "\b\f\x00\x01\x1f\x7f"},
		{"html": "<b>&amp;</b>", "sep": "line\u2028para\u2029end", "bad": "ok \xff\xfe then \xc3 cut"},
		{"é": "accents é ü 中文 😀", "": "empty key", "k": ""},
	}
	var e rowEncoder
	for _, m := range texts {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.appendData(nil, m); string(got) != string(want) {
			t.Errorf("data %q:\n got %s\nwant %s", m, got, want)
		}
	}
	ratings := []map[string]*float64{
		{},
		{"q": nil},
		{"q": f(3), "a": f(-2.5), "z": f(0), "n": nil},
		{"tiny": f(1e-7), "small": f(0.000001), "big": f(1e21), "bigger": f(-1.5e300), "frac": f(1.0 / 3), "neg0": f(math.Copysign(0, -1))},
		{"x@ann<1>": f(4.25)},
	}
	for _, m := range ratings {
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.appendRatings(nil, m)
		if err != nil || string(got) != string(want) {
			t.Errorf("ratings %v:\n got %s (%v)\nwant %s", m, got, err, want)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := e.appendRatings(nil, map[string]*float64{"q": &bad}); err == nil {
			t.Errorf("rating %v encoded; want an error", bad)
		}
	}
}
