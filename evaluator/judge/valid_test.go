package judge

import (
	"encoding/json"
	"strings"
	"testing"
)

var validSeeds = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `nul`, `truex`, `0`, `-0`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `1E-2`,
	`-12.5e+30`, `"`, `"\"`, `"\u12"`, `"\u12G4"`, `"\uABCD"`, `"\x"`, "\"\x01\"", "\"\x7f\xff\"", `"\/\b\f\n\r\t"`,
	`{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{1:2}`, `{"a":1}}`, ` [ 1 , { "b" : [ ] } ] `, `[1]x`, "\ufeff{}",
	`{"choices":[{"message":{"content":"x"}}]}`, "[\n\t\r ]", `{"a":"b"  ,  "c" : null}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

// TestValidJSON: validJSON agrees with json.Valid, the nesting limit
// included.
func TestValidJSON(t *testing.T) {
	for _, s := range append(validSeeds, string(benchAnswer())) {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%.60q) = %v, json.Valid says %v", s, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range validSeeds {
		if len(s) < 1000 { // the nesting limit seeds stall the fuzzer's mutator
			f.Add([]byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
		if validJSON(b) {
			parseCompletion(b) // must not panic on any well-formed document
		}
	})
}
