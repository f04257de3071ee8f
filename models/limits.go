package models

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Field length limits, in characters. They are far above any real use and
// keep one form post from storing megabytes in a name that every page then
// renders (a 9 MiB project name was accepted before).
const (
	// MaxNameLength bounds the names people type (projects, rubrics,
	// judges, criteria) and field labels.
	MaxNameLength = 200
	// MaxComposedNameLength bounds the names of datasets, runs and
	// experiments, which are often built from other names ("<rubric> on
	// <dataset>", "<dataset> (noisy copy, ...)", "Around run 7: <run>").
	MaxComposedNameLength = 2000
	// MaxDescriptionLength bounds descriptions: a project's, a criterion's
	// and its level descriptions.
	MaxDescriptionLength = 5000
	// MaxRubricTextLength bounds a rubric's task text, which may hold
	// several paragraphs of instructions.
	MaxRubricTextLength = 20000
	// MaxSettingLength bounds a judge's URL, model and key variable, and
	// a stored API key (the longest real keys are a few hundred characters).
	MaxSettingLength = 2000
)

// MaxNameFor is the longest name an object of kind k accepts, at creation
// and on rename: the composed-name limit for datasets, runs and
// experiments, the typed-name limit for the rest.
func MaxNameFor(k Kind) int {
	switch k {
	case KindDataset, KindRun, KindExperiment:
		return MaxComposedNameLength
	}
	return MaxNameLength
}

// CheckNewName trims a new name and refuses an empty, overlong or
// multi-line one.
func CheckNewName(k Kind, name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", Errorf(EInvalid, "the %s needs a name", k)
	}
	if err := checkName(fmt.Sprintf("%s name", k), name, MaxNameFor(k)); err != nil {
		return "", err
	}
	return name, nil
}

// CheckLength refuses a value longer than limit characters, naming the
// field and the limit.
func CheckLength(field, value string, limit int) error { return checkLength(field, value, limit) }

func checkLength(field, value string, limit int) error {
	if n := utf8.RuneCountInString(value); n > limit {
		return Errorf(EInvalid, "the %s is %d characters long; the limit is %d", field, n, limit)
	}
	return nil
}

// lineBreaks are the characters that end a line: line feed, carriage
// return, vertical tab, form feed, NEL and the Unicode line and paragraph
// separators.
const lineBreaks = "\n\r\v\f\u0085\u2028\u2029"

// CheckOneLine refuses a line break in a field of one line, naming the
// field: names, labels and settings are shown on one line (in lists,
// headings, page titles, select options and chat messages), and a line
// break typed into one (only a script or a pasted file can) would either
// vanish or split what shows it.
func CheckOneLine(field, value string) error {
	if strings.ContainsAny(value, lineBreaks) {
		return Errorf(EInvalid, "the %s holds a line break, and it is one line (shown in lists and headings): write it on one line", field)
	}
	return nil
}

// checkName refuses a line break in a one-line field, then a value longer
// than limit characters.
func checkName(field, value string, limit int) error {
	if err := CheckOneLine(field, value); err != nil {
		return err
	}
	return checkLength(field, value, limit)
}

// checkNames applies checkName to (field, value, limit) triples in order.
func checkNames(checks ...lengthCheck) error {
	for _, c := range checks {
		if err := checkName(c.field, c.value, c.limit); err != nil {
			return err
		}
	}
	return nil
}

// OneLine writes each run of line breaks in s, with the spaces around it,
// as one space: for names made from stored names (which may hold line
// breaks from before they were refused) and for showing such a name where
// a line break would split a line (a chat message).
func OneLine(s string) string {
	if !strings.ContainsAny(s, lineBreaks) {
		return s
	}
	var kept []string
	for _, line := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune(lineBreaks, r) }) {
		if line = strings.TrimSpace(line); line != "" {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, " ")
}

// checkLengths applies checkLength to (field, value, limit) triples in order.
func checkLengths(checks ...lengthCheck) error {
	for _, c := range checks {
		if err := checkLength(c.field, c.value, c.limit); err != nil {
			return err
		}
	}
	return nil
}

type lengthCheck struct {
	field, value string
	limit        int
}

// validateRubricLengths checks every text of a rubric.
func validateRubricLengths(r *Rubric) error {
	if err := checkName("rubric name", r.Name, MaxNameLength); err != nil {
		return err
	}
	checks := []lengthCheck{{"rubric task", r.Task, MaxRubricTextLength}}
	for i, f := range r.Fields {
		checks = append(checks, lengthCheck{fmt.Sprintf("label of field %d", i+1), f.Label, MaxNameLength})
	}
	for i, c := range r.Criteria {
		n := fmt.Sprintf("criterion %d", i+1)
		checks = append(checks,
			lengthCheck{n + " name", c.Name, MaxNameLength},
			lengthCheck{n + " description", c.Description, MaxDescriptionLength},
			lengthCheck{n + " low level description", c.Levels.Low, MaxDescriptionLength},
			lengthCheck{n + " middle level description", c.Levels.Middle, MaxDescriptionLength},
			lengthCheck{n + " high level description", c.Levels.High, MaxDescriptionLength},
		)
	}
	return checkLengths(checks...)
}
