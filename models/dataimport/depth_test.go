package dataimport

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// nested returns a JSON object whose key "a" holds depth-1 further levels
// of objects (or arrays), with a string containing brackets at the bottom.
func nested(depth int, open, close string) string {
	inner := `"[[{{ not structure }}]]"`
	return `{"id":"1","a":` + strings.Repeat(open, depth-1) + inner + strings.Repeat(close, depth-1) + `}`
}

func TestJSONDepthLimit(t *testing.T) {
	tests := []struct {
		name     string
		format   Format
		input    string
		wantErr  string // "" when the file must parse
		wantLine int
	}{
		{"64 levels of objects parse", JSONL, nested(MaxJSONDepth, `{"b":`, `}`), "", 0},
		{"64 levels of arrays parse", JSONL, nested(MaxJSONDepth, `[`, `]`), "", 0},
		{"65 levels refused", JSONL, nested(MaxJSONDepth+1, `{"b":`, `}`), "nested more than 64 levels", 1},
		{"10,000 levels on line 3 refused", JSONL, `{"id":"x","t":"ok"}` + "\n\n" + nested(10000, `{"b":`, `}`), "nested more than 64 levels", 3},
		{"10,000 levels of arrays refused", JSONL, nested(10000, `[`, `]`), "nested more than 64 levels", 1},
		{"deep item of a JSON array names the item", JSON, `[{"id":"x","t":"ok"},` + nested(10000, `{"b":`, `}`) + `]`, "nested more than 64 levels", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := Parse(strings.NewReader(tt.input), tt.format, Options{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if len(tab.Records) != 1 || tab.Records[0].Values["id"] != "1" {
					t.Fatalf("records = %+v", tab.Records)
				}
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(pe.Msg, tt.wantErr) || pe.Line != tt.wantLine {
				t.Fatalf("Parse error = %v, want %q at line/item %d", err, tt.wantErr, tt.wantLine)
			}
			if tt.format == JSON && !pe.Item {
				t.Errorf("error %v should count items", pe)
			}
		})
	}
}

// TestDeepJSONMemoryBounded checks that refusing a 10,000-deep line costs
// memory in proportion to the line, not to the square of its depth (which
// took gigabytes before the limit).
func TestDeepJSONMemoryBounded(t *testing.T) {
	line := nested(10000, `{"b":`, `}`) // about 60 KB
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Parse(strings.NewReader(line), JSONL, Options{})
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a 10,000-deep line was accepted")
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	if limit := uint64(50 * len(line)); allocated > limit {
		t.Errorf("refusing a %d-byte line allocated %d bytes, more than %d", len(line), allocated, limit)
	}
}

func TestJSONDepthIgnoresStrings(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{`{}`, 1},
		{`{"a":[1,{"b":2}]}`, 3},
		{`{"a":"[[[[{{{{"}`, 1},
		{`{"a":"quote \" [[["}`, 1},
		{`{"a":"backslash \\","b":[[1]]}`, 3},
	}
	for _, tt := range tests {
		if got := jsonDepth([]byte(tt.text), 100); got != tt.want {
			t.Errorf("jsonDepth(%s) = %d, want %d", tt.text, got, tt.want)
		}
	}
}
