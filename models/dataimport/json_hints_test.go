package dataimport

import (
	"strings"
	"testing"
)

// Files of JSON objects that are nearly JSON Lines or a JSON array (found
// as a newcomer): objects pretty-printed over several lines in a .jsonl
// file (jq without -c) were refused as "line 1: invalid JSON: unexpected
// end of input — fix the line or remove it", though line 1 is a lone "{";
// a comma after an array's last item was "invalid JSON in item 4: invalid
// character ']'..." in a file of three items.
func TestJSONNearMissesSayWhatIsWrong(t *testing.T) {
	tests := []struct {
		name  string
		f     Format
		input string
		want  string
	}{
		{"pretty-printed JSON Lines", JSONL, "{\n  \"id\": \"s1\",\n  \"answer\": \"Hi\"\n}\n{\n  \"id\": \"s2\",\n  \"answer\": \"Yo\"\n}\n",
			"line 1: invalid JSON: this line starts a JSON object that goes on over the next lines, but JSON Lines holds each object whole on one line"},
		{"pretty-printed after a good line", JSONL, "{\"id\": \"s1\"}\n{\"id\": \"s2\", \"meta\": {\n\"a\": 1}}\n",
			"line 2: invalid JSON: this line starts a JSON object that goes on over the next lines"},
		{"objects on one line", JSONL, "{\"id\": \"s1\"}{\"id\": \"s2\"}\n",
			"line 1: invalid JSON: this line holds more than one JSON value"},
		{"line cut short is not pretty-printing", JSONL, "{\"id\": \"s1\", \"answer\": \"Hi\n",
			"line 1: invalid JSON: unexpected end of input — fix the line or remove it"},
		// QA: one truncated line among whole ones was told it was
		// pretty-printed and to run jq -c.
		{"a line cut short between whole lines", JSONL, "{\"id\": \"s1\"}\n{\"id\": \"s2\", \"answer\": \n{\"id\": \"s3\"}\n\n",
			"line 2: invalid JSON: unexpected end of input — fix the line or remove it"},
		{"a line cut short, a blank line, then a whole line", JSONL, "{\"id\": \"s1\", \n\n  {\"id\": \"s2\"}\n",
			"line 1: invalid JSON: unexpected end of input — fix the line or remove it"},
		{"comma after the last item", JSON, "[\n  {\"id\": \"s1\"},\n  {\"id\": \"s2\"},\n  {\"id\": \"s3\"},\n]\n",
			"line 4: a comma follows the last item (item 3), which JSON does not allow: remove the comma before the closing ]"},
		{"comma after the last item, one line", JSON, `[{"id": "s1"} , ]`,
			"line 1: a comma follows the last item (item 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.input), tt.f, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse: %v\nwant: %s", err, tt.want)
			}
		})
	}
}
