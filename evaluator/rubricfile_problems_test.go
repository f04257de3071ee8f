package evaluator

import (
	"errors"
	"reflect"
	"testing"
)

// TestParseRubricFileSaysEveryProblem (forms46): a rubric file with
// several mistakes was told only the first; each is now said with its
// line, in the file's order, and Validate still gives the first.
func TestParseRubricFileSaysEveryProblem(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"one problem reads as before", "task: t\ncriteria:\n  - {name: A, lo: 3, hi: 3}\n",
			[]string{`line 3: criterion "A": the range [3, 3] is empty: the low end must be below the high end`}},
		{"a name and a range of one criterion, and a later duplicate",
			"task: t\ncriteria:\n  - lo: 2\n    hi: 1\n  - {name: B, lo: 1, hi: 5}\n  - {name: b, lo: 1, hi: 5}\n",
			[]string{`line 3: criterion 1 has no name`, `line 3: criterion 1: the range [2, 1] is empty: the low end must be below the high end`,
				`line 6: criterion "b" appears twice: criterion names must be unique (the first is on line 5): rename or remove one of them`}},
		{"no task, and a field without a column", "fields:\n  - {label: Reply}\ncriteria:\n  - {name: A, lo: 1, hi: 5}\n",
			[]string{`line 1: task description is empty: say what one sample is (e.g. a dialogue and its next response)`, `line 2: field 1 names no column`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRubricFile([]byte(tc.file))
			var got []string
			var all *RubricFileError
			switch {
			case errors.As(err, &all):
				got = all.Problems
			case err != nil:
				got = []string{err.Error()}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("problems\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	r := Rubric{Task: "t", Criteria: []Criterion{{Name: "A", Lo: 1, Hi: 5}, {Name: "a", Lo: 5, Hi: 1}}}
	if ps := r.Problems(); len(ps) != 2 || r.Validate() == nil || r.Validate().Error() != ps[0].Error() {
		t.Errorf("Problems = %v and Validate = %v, want two, Validate the first", ps, r.Validate())
	}
}
