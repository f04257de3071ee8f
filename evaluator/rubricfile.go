package evaluator

import (
	"bytes"
	"errors"
	"fmt"
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
func ParseRubricFile(b []byte) (Rubric, error) {
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
	if err := r.Validate(); err != nil {
		return Rubric{}, withLines(b, err)
	}
	if err := checkFileControls(r); err != nil {
		return Rubric{}, withLines(b, err)
	}
	return r, nil
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
// is found at its criterion); 0 when there is none.
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
	return 0
}

// checkFileControls refuses a control character other than tab and line
// breaks in any text of a rubric file, naming where: a YAML "\0" or "\e"
// or a JSON "\u0000" in a task, a description, a column or an example is
// no text anyone means to show a judge, and PostgreSQL refuses NUL in
// text. (The checks of every request see a file's name, not its
// contents.) Criterion names and labels, one line each, are refused any
// control character by Validate.
func checkFileControls(r Rubric) error {
	// Each text: where it is said to be, its path in the file, its value.
	check := func(where, path, value string) error {
		if what := controlProblem(value); what != "" {
			return problemAt(path, "%s holds %s, which is not text: remove it (tabs and line breaks are kept)", where, what)
		}
		return nil
	}
	if err := check("the task", "$.task", r.Task); err != nil {
		return err
	}
	for i, f := range r.Fields {
		if err := check(fmt.Sprintf("field %d: the column", i+1), fmt.Sprintf("$.fields[%d].column", i), f.Column); err != nil {
			return err
		}
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
			if err := check(in+t[0], t[1], t[2]); err != nil {
				return err
			}
		}
		for j, ex := range c.Examples {
			in, at := fmt.Sprintf("criterion %d (%q), example %d: ", i+1, c.Name, j+1), fmt.Sprintf("%s.examples[%d]", at, j)
			texts := [][3]string{{"the sample_id", at + ".sample_id", ex.SampleID}, {"the reason", at + ".reason", ex.Reason}}
			for k, f := range ex.Fields {
				texts = append(texts, [3]string{fmt.Sprintf("the text of field %d", k+1), fmt.Sprintf("%s.fields[%d].value", at, k), f.Value})
			}
			for _, t := range texts {
				if err := check(in+t[0], t[1], t[2]); err != nil {
					return err
				}
			}
		}
	}
	return nil
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
