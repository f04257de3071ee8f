package evaluator

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// MaxRubricFileBytes bounds a rubric file: the longest real rubric is a few
// kilobytes, so 1 MiB refuses only mistakes (a dataset chosen by accident).
const MaxRubricFileBytes = 1 << 20

// ParseRubricFile reads a rubric file, the format `batcheval run --rubric`
// takes and the dashboard imports and exports: YAML (JSON is YAML too) with
// task, fields and criteria. It is strict: a key the format lacks (a typo)
// is an error naming it, and the rubric must pass Validate. Fields may be
// empty here; a caller that needs them (the command line) says so.
func ParseRubricFile(b []byte) (Rubric, error) { return ParseRubricFileWith(b, nil) }

// ParseRubricFileWith is ParseRubricFile with the caller's own checks of
// the decoded rubric (more; nil for none), such as the lengths a store
// allows: their problems are told with the rubric's own, each with its
// line, all at once (a *RubricFileError when there are several).
func ParseRubricFileWith(b []byte, more func(Rubric) []*RubricProblem) (Rubric, error) {
	var r Rubric
	if len(bytes.TrimSpace(b)) == 0 {
		return r, errors.New("the file is empty: a rubric file holds task, fields and criteria")
	}
	if len(b) > MaxRubricFileBytes {
		return r, fmt.Errorf("the file is larger than %d KiB: a rubric file is a few kilobytes", MaxRubricFileBytes>>10)
	}
	if err := yaml.UnmarshalWithOptions(b, &r, yaml.Strict()); err != nil {
		return Rubric{}, errors.New(rubricFileProblem(b, err))
	}
	problems := append(r.Problems(), fileControlProblems(r)...)
	if more != nil {
		problems = append(problems, more(r)...)
	}
	if err := locateProblems(b, problems); err != nil {
		return Rubric{}, err
	}
	return r, nil
}

// RubricFileError is every problem of a rubric file, each message starting
// with its line ("line 9: ..."), in the file's order.
type RubricFileError struct {
	Problems []string
}

func (e *RubricFileError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0]
	}
	return fmt.Sprintf("%d problems: %s", len(e.Problems), strings.Join(e.Problems, "; "))
}

// locateProblems puts the file's line before each problem (withLines) and
// orders them by line: nil for none, the one problem alone (as before), a
// *RubricFileError for several.
func locateProblems(b []byte, problems []*RubricProblem) error {
	switch len(problems) {
	case 0:
		return nil
	case 1:
		return withLines(b, problems[0])
	}
	f, _ := parser.ParseBytes(b, 0)
	type located struct {
		line int
		msg  string
	}
	all := make([]located, len(problems))
	for i, p := range problems {
		all[i].msg = withLines(b, p).Error()
		if f != nil {
			all[i].line = lineOf(f, p.Path)
		}
	}
	// Stable: problems of one line keep the order they were found in.
	slices.SortStableFunc(all, func(x, y located) int { return x.line - y.line })
	e := &RubricFileError{}
	for _, l := range all {
		e.Problems = append(e.Problems, l.msg)
	}
	return e
}

// withLines puts the file's line before a RubricProblem's message
// ("line 9: criterion "A" appears twice ... (the first is on line 3)"),
// as the decoder's errors have it: the README promises the line of every
// rubric file error. An error without a place, or whose place the file
// does not show (a key left out: its part's line then), stays as it is.
func withLines(b []byte, err error) error {
	var p *RubricProblem
	if !errors.As(err, &p) {
		return err
	}
	f, perr := parser.ParseBytes(b, 0)
	if perr != nil {
		return err
	}
	line := lineOf(f, p.Path)
	if line == 0 {
		return err
	}
	msg := fmt.Sprintf("line %d: %s", line, p.Msg)
	if p.Also != "" {
		if also := lineOf(f, p.Also); also > 0 && also != line {
			msg += fmt.Sprintf(" (the first is on line %d): rename or remove one of them", also)
		}
	}
	return &RubricProblem{Path: p.Path, Also: p.Also, Msg: msg}
}

// lineOf is the line of the node at path in f, or of the nearest part
// holding it when the file leaves that key out (a criterion with no "lo"
// is found at its criterion, a top-level key at the top level's first
// line); 0 when there is none.
func lineOf(f *ast.File, path string) int {
	for path != "" && path != "$" {
		if yp, err := yaml.PathString(path); err == nil {
			if n, err := yp.FilterFile(f); err == nil && n != nil {
				if t := n.GetToken(); t != nil && t.Position != nil && t.Position.Line > 0 {
					return t.Position.Line
				}
			}
		}
		path = parentPath(path)
	}
	// A top-level key left out (no task at all): the line the rubric's
	// top level starts on, so that the message names a line too.
	if path == "$" && len(f.Docs) > 0 && f.Docs[0] != nil && f.Docs[0].Body != nil {
		if t := f.Docs[0].Body.GetToken(); t != nil && t.Position != nil && t.Position.Line > 0 {
			return t.Position.Line
		}
	}
	return 0
}

// fileControlProblems refuses a control character other than tab and line
// breaks in any text of a rubric file, naming where: a YAML "\0" or "\e"
// or a JSON "\u0000" in a task, a description, a column or an example is
// no text anyone means to show a judge, and PostgreSQL refuses NUL in
// text. (The checks of every request see a file's name, not its
// contents.) Criterion names and labels, one line each, are refused any
// control character by Validate.
func fileControlProblems(r Rubric) []*RubricProblem {
	var out []*RubricProblem
	// Each text: where it is said to be, its path in the file, its value.
	check := func(where, path, value string) {
		if what := controlProblem(value); what != "" {
			out = append(out, &RubricProblem{Path: path, Msg: fmt.Sprintf("%s holds %s, which is not text: remove it (tabs and line breaks are kept)", where, what)})
		}
	}
	check("the task", "$.task", r.Task)
	for i, f := range r.Fields {
		check(fmt.Sprintf("field %d: the column", i+1), fmt.Sprintf("$.fields[%d].column", i), f.Column)
	}
	for i, c := range r.Criteria {
		in, at := fmt.Sprintf("criterion %d (%q): ", i+1, c.Name), criterionPath(i)
		texts := [][3]string{{"the description", at + ".description", c.Description}, {"the low level description", at + ".levels.low", c.Levels.Low},
			{"the middle level description", at + ".levels.middle", c.Levels.Middle}, {"the high level description", at + ".levels.high", c.Levels.High},
			{"the human_column", at + ".human_column", c.HumanColumn}}
		for k, col := range c.AnnotatorColumns {
			texts = append(texts, [3]string{fmt.Sprintf("annotator column %d", k+1), fmt.Sprintf("%s.annotator_columns[%d]", at, k), col})
		}
		for _, t := range texts {
			check(in+t[0], t[1], t[2])
		}
		for j, ex := range c.Examples {
			in, at := fmt.Sprintf("criterion %d (%q), example %d: ", i+1, c.Name, j+1), fmt.Sprintf("%s.examples[%d]", at, j)
			texts := [][3]string{{"the sample_id", at + ".sample_id", ex.SampleID}, {"the reason", at + ".reason", ex.Reason}}
			for k, f := range ex.Fields {
				texts = append(texts, [3]string{fmt.Sprintf("the text of field %d", k+1), fmt.Sprintf("%s.fields[%d].value", at, k), f.Value})
			}
			for _, t := range texts {
				check(in+t[0], t[1], t[2])
			}
		}
	}
	return out
}

// controlProblem names the first control character of s other than tab,
// line feed and carriage return ("a control character (U+0000, NUL)"), or
// says "" when there is none.
func controlProblem(s string) string {
	for _, r := range s {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			if r == 0 {
				return "a control character (U+0000, NUL)"
			}
			return fmt.Sprintf("a control character (%U)", r)
		}
	}
	return ""
}

// yamlProblem is the decoder's message on one line, without the source
// excerpt it appends (the message already names the line, column and key).
func yamlProblem(err error) string {
	msg := yaml.FormatError(err, false, false)
	first, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	return strings.TrimSpace(first)
}

// MarshalRubricFile writes a rubric in the rubric-file format, so that
// ParseRubricFile reads back the same rubric.
func MarshalRubricFile(r Rubric) ([]byte, error) {
	file := rubricFile{Task: r.Task, Fields: r.Fields, Criteria: r.Criteria}
	return yaml.MarshalWithOptions(file, yaml.UseLiteralStyleIfMultiline(true))
}

// rubricFile is Rubric with the file's key order and empty lists left out.
type rubricFile struct {
	Task     string      `yaml:"task"`
	Fields   []Field     `yaml:"fields,omitempty"`
	Criteria []Criterion `yaml:"criteria"`
}
