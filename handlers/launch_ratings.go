package handlers

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// ratingsNotInDataset says which chosen criteria read their human ratings
// from a column the chosen dataset does not have (the project's first
// upload, the main one by default, may be a file without ratings while
// the rubric names another file's column), and which of the project's
// other datasets have those columns. "" when every rated criterion finds
// its column; criteria without a column are noHumanLead's. elsewhere is
// false when no other dataset has those ratings either (the page then
// points to the rubric).
func ratingsNotInDataset(chosen []evaluator.Criterion, d models.Dataset, datasets []models.Dataset) (text string, elsewhere bool) {
	var pairs, missing, names []string
	for _, c := range chosen {
		cols := c.AnnotatorColumns
		if c.HumanColumn != "" {
			cols = []string{c.HumanColumn}
		}
		if len(cols) == 0 || slices.ContainsFunc(cols, func(col string) bool { return slices.Contains(d.RatingColumns, col) }) {
			continue
		}
		pairs = append(pairs, fmt.Sprintf("%s for %s", joinQuotedOr(cols), strconv.Quote(c.Name)))
		names = append(names, c.Name)
		for _, col := range cols {
			if !slices.Contains(missing, col) {
				missing = append(missing, col)
			}
		}
	}
	if len(pairs) == 0 {
		return "", false
	}
	s := fmt.Sprintf("Dataset %q has no rating column %s, so this run cannot compare the judge with your ratings of %s; it can still be launched.",
		d.Name, strings.Join(pairs, "; "), joinQuoted(names))
	var others []string
	for _, o := range datasets {
		if o.ID != d.ID && slices.ContainsFunc(missing, func(col string) bool { return slices.Contains(o.RatingColumns, col) }) {
			others = append(others, o.Name)
		}
	}
	if len(others) > 0 {
		return s + fmt.Sprintf(" The ratings are in %s %s: %s under Dataset above.", launchPlural(len(others), "dataset", "datasets"), joinQuoted(others), launchPlural(len(others), "choose it", "choose one of them")), true
	}
	return s, false
}

// joinQuotedOr quotes names and joins them with "or": any one of them.
func joinQuotedOr(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
