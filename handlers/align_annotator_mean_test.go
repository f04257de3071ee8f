package handlers

import (
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestAlignSaysWhyAnAnnotatorMeanCannotBeAligned: since a criterion with
// annotator columns and no human column is compared with the annotators'
// mean, its run has human ratings; the alignment page said it had none
// ("no human ratings", "none of its criteria names a human rating
// column"), which the run page beside it contradicted. Alignment still
// learns from one column, so the page says that, and what to do.
func TestAlignSaysWhyAnAnnotatorMeanCannotBeAligned(t *testing.T) {
	rubricID := int64(1)
	mean := evaluator.Criterion{Name: "Coherent", Lo: 0, Hi: 2, AnnotatorColumns: []string{"a", "b"}}
	none := evaluator.Criterion{Name: "Fluent", Lo: 0, Hi: 2}
	human := evaluator.Criterion{Name: "Engaging", Lo: 0, Hi: 2, HumanColumn: "Engaging"}
	run := func(cs ...evaluator.Criterion) models.Run {
		return models.Run{ID: 7, Status: models.RunSucceeded, RubricID: &rubricID, RubricSnapshot: evaluator.Rubric{Criteria: cs}}
	}
	for _, tc := range []struct {
		name        string
		run         models.Run
		want, avoid string
	}{
		{"annotators' mean only", run(mean), "annotators' means", "has no human ratings"},
		{"no ratings at all", run(none), "has no human ratings", "annotators"},
		{"mean beside a human column", run(mean, human), "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := alignProblem(tc.run)
			if tc.want == "" {
				if got != "" {
					t.Fatalf("problem %q, want none (a criterion has a human column)", got)
				}
				return
			}
			if !strings.Contains(got, tc.want) || strings.Contains(got, tc.avoid) {
				t.Errorf("problem %q: want %q, not %q", got, tc.want, tc.avoid)
			}
		})
	}
	for _, tc := range []struct {
		c    evaluator.Criterion
		want string
	}{
		{mean, " (annotators' mean: alignment needs one human rating column)"},
		{none, " (no human ratings)"},
		{human, ""},
	} {
		if got := alignNoHumanNote(tc.c); got != tc.want {
			t.Errorf("%s: note %q, want %q", tc.c.Name, got, tc.want)
		}
	}
}
