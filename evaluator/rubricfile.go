package evaluator

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/goccy/go-yaml"
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
		return Rubric{}, fmt.Errorf("%s", yamlProblem(err))
	}
	if err := r.Validate(); err != nil {
		return Rubric{}, err
	}
	return r, nil
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
