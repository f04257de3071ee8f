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

// TestRubricFileErrorsInPlainWords: a broken rubric file was refused with
// the YAML parser's own message ("[5:9] sequence end token ']' not
// found", `[7:5] unknown field "low"`), which a person who is not an
// engineer cannot act on. The error keeps the line, names the part of the
// rubric and says what to do, and shows no parser wording.
func TestRubricFileErrorsInPlainWords(t *testing.T) {
	crit := "task: t\ncriteria:\n  - name: A\n    lo: 1\n    hi: 3\n"
	cases := []struct {
		name, file string
		want       string
	}{
		{"list not closed", crit[:len(crit)-2] + "[3, 4\n", `line 5: a list opened with "[" is not closed: add the "]"`},
		{"level key on the criterion", crit + "  - name: B\n    low: x\n    lo: 1\n    hi: 3\n",
			`line 7, criterion 2 ("B"): "low" is not a criterion field; the fields of a criterion are name, description, lo, hi, levels, human_column, annotator_columns and examples ("low" goes under "levels"`},
		{"unknown level", crit + "    levels: {low: a, lowest: b}\n", `line 6, criterion 1 ("A"): "lowest" is not a level; the levels are low, middle and high`},
		{"misspelt top key", "task: t\ncritera: []\n", `line 2: "critera" is not a rubric file key; a rubric file holds task, fields and criteria`},
		{"misspelt field setting", "task: t\nfields:\n  - {column: a, lable: b}\ncriteria:\n  - {name: Q, lo: 1, hi: 5}\n",
			`line 3, field 1: "lable" is not a field setting; a field has column and label`},
		{"example key", crit + "    examples:\n      - {sample_id: x, score: 2, fieldz: []}\n",
			`line 7, criterion 1 ("A"), example 1: "fieldz" is not an example field; an example has sample_id, fields, score and reason`},
		{"range not a number", "task: t\ncriteria:\n  - name: A\n    lo: low\n    hi: 3\n", `line 4, criterion 1 ("A"): "lo" must be a number, not "low"`},
		{"criteria not a list", "task: t\ncriteria: {name: A}\n", `line 2: "criteria" must be a list`},
		{"quote not closed", "task: t\ncriteria:\n  - name: \"A\n    lo: 1\n    hi: 3\n", `line 3: a text opened with " is not closed`},
		{"brace not closed", crit + "  - {name: B, lo: 1, hi: 3\n", `line 6: a "{" is not closed`},
		{"key twice", "task: t\ncriteria:\n  - name: A\n    name: B\n    lo: 1\n    hi: 3\n", `line 4: "name" is given twice (also on line 3): keep one of them`},
		{"tab", "task: t\n\tcriteria: []\n", "line 2: a tab indents this line: indent with spaces, not tabs"},
		{"bad indentation", "task: t\ncriteria:\n  - name: A\n   lo: 1\n    hi: 3\n", "line 4: this line is not indented as its neighbours"},
		{"JSON with a typo", `{"task": "t", "critera": []}`, `line 1: "critera" is not a rubric file key`},
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
			for _, parser := range []string{"unknown field", "token", "cannot unmarshal", "Go struct", "mapping key", "sequence", "[1:", "[2:", "[3:", "[4:", "[5:", "[6:", "[7:"} {
				if strings.Contains(err.Error(), parser) {
					t.Errorf("error %q speaks the parser's words (%q)", err, parser)
				}
			}
		})
	}
}
