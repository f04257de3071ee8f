package evaluator

import (
	"reflect"
	"strings"
	"testing"
)

func TestRubricFileRoundTrip(t *testing.T) {
	r := Rubric{Task: "A reply.\nJudge the reply only.", Fields: []Field{{Column: "context", Label: "Conversation"}},
		Criteria: []Criterion{
			{Name: "Engaging", Description: "Worth answering?", Lo: 1, Hi: 3, Levels: Levels{Low: "dull", Middle: "plain", High: "lively"}, HumanColumn: "engaging"},
			{Name: "Overall", Lo: 0.5, Hi: 5, AnnotatorColumns: []string{"a1", "a2"}},
		}}
	b, err := MarshalRubricFile(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseRubricFile(b)
	if err != nil {
		t.Fatalf("reading back:\n%s\n%v", b, err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip changed the rubric:\n got %+v\nwant %+v\nfile:\n%s", back, r, b)
	}
}

// An import error names what is wrong, so the person can find it.
func TestParseRubricFileErrorsNameTheField(t *testing.T) {
	cases := []struct {
		name, file string
		want       []string
	}{
		{"misspelt key", "task: t\ncriteria:\n  - nmae: A\n    lo: 1\n    hi: 3\n", []string{"nmae"}},
		{"range not a number", "task: t\ncriteria:\n  - name: A\n    lo: low\n    hi: 3\n", []string{"lo"}},
		{"no task", "criteria:\n  - name: A\n    lo: 1\n    hi: 3\n", []string{"task"}},
		{"criterion without name", "task: t\ncriteria:\n  - name: A\n    lo: 1\n    hi: 3\n  - lo: 1\n    hi: 3\n", []string{"criterion 2 has no name"}},
		{"empty range", "task: t\ncriteria:\n  - name: A\n    lo: 3\n    hi: 3\n", []string{`criterion "A"`, "range"}},
		{"no criteria", "task: t\n", []string{"no criteria"}},
		{"empty file", "  \n", []string{"empty"}},
		{"JSON with a typo", `{"task": "t", "critera": []}`, []string{"critera"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseRubricFile([]byte(tc.file))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}
