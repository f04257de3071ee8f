package evaluator

import (
	"strings"
	"testing"
)

// TestRubricFileCheckErrorsGiveTheLine (forms45): a rubric file that parses
// but fails the rubric's own checks (a repeated criterion name, an empty
// range, a missing name, an example off the scale, a control character) was
// refused without a line number, which the README promises for every
// rubric file error. Each now starts with the line of the part at fault,
// and a repeated name also gives the line of the first one.
func TestRubricFileCheckErrorsGiveTheLine(t *testing.T) {
	crit := "task: t\ncriteria:\n  - name: A\n    lo: 1\n    hi: 3\n"
	cases := []struct {
		name, file string
		want       string
	}{
		{"repeated name", crit + "  - name: B\n    lo: 1\n    hi: 3\n  - name: a\n    lo: 1\n    hi: 5\n",
			`line 9: criterion "a" appears twice: criterion names must be unique (the first is on line 3): rename or remove one of them`},
		{"repeated name in JSON", "{\"task\": \"t\",\n \"criteria\": [\n  {\"name\": \"A\", \"lo\": 1, \"hi\": 3},\n  {\"name\": \"A\", \"lo\": 1, \"hi\": 3}]}\n",
			`line 4: criterion "A" appears twice: criterion names must be unique (the first is on line 3)`},
		{"empty range", crit + "  - name: B\n    lo: 3\n    hi: 3\n", `line 7: criterion "B": the range [3, 3] is empty`},
		{"no range", crit + "  - name: B\n    description: x\n", `line 6: criterion "B" has no score range`},
		{"no name", crit + "  - description: x\n    lo: 1\n    hi: 3\n", "line 6: criterion 2 has no name"},
		{"empty task", "task: \"\"\ncriteria:\n  - {name: A, lo: 1, hi: 3}\n", "line 1: task description is empty"},
		{"field without column", "task: t\nfields:\n  - label: x\ncriteria:\n  - {name: A, lo: 1, hi: 3}\n", "line 3: field 1 names no column"},
		{"example off the scale", crit + "    examples:\n      - sample_id: s\n        score: 9\n        fields: [{label: R, value: v}]\n",
			`line 8: criterion "A", example 1: the score 9 is outside`},
		{"control character", crit + "  - name: B\n    lo: 1\n    hi: 3\n    levels:\n      high: \"x\\0\"\n",
			`line 10: criterion 2 ("B"): the high level description holds a control character (U+0000, NUL)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRubricFile([]byte(tc.file))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tc.want)
			}
		})
	}
}
