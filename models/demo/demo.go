// Package demo holds the seeded demo project: a small made-up data set of
// dialogue responses with human ratings, and the rubric to judge them with.
// Both are embedded, so a fresh installation can show a complete project
// without any upload.
package demo

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/batcheval/batcheval/evaluator"
)

// DatasetFilename is the name under which the demo data set is presented,
// e.g. to dataimport.DetectFormat.
const DatasetFilename = "dialogues.jsonl"

//go:embed dialogues.jsonl
var dataset []byte

//go:embed rubric.yaml
var rubricYAML []byte

// Dataset returns the demo data set: JSON Lines, one dialogue snippet a
// line with columns id, context, response and the human ratings engaging,
// coherent (1-3) and overall (1-5). The caller gets its own copy.
func Dataset() []byte { return bytes.Clone(dataset) }

// RubricYAML returns the demo rubric in the rubric-file format. The caller
// gets its own copy.
func RubricYAML() []byte { return bytes.Clone(rubricYAML) }

// Rubric parses the demo rubric and checks it.
func Rubric() (evaluator.Rubric, error) {
	r, err := evaluator.ParseRubricFile(rubricYAML)
	if err != nil {
		return evaluator.Rubric{}, fmt.Errorf("demo rubric: %w", err)
	}
	return r, nil
}
