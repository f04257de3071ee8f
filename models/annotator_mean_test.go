package models

import (
	"math"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestHumanOfAnnotatorMean: a criterion with annotator columns and no
// human column has as a sample's human rating the mean of its readable
// annotator ratings, missing (never 0) when none is readable; a human
// column, when named, is read as it is. WithAnnotatorMean stores the same
// under "mean of …", the criterion's human column, without changing the
// rows it was given.
func TestHumanOfAnnotatorMean(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cols := []string{"a1", "a2", "a3"}
	for _, tc := range []struct {
		name    string
		crit    evaluator.Criterion
		ratings map[string]*float64
		want    *float64
	}{
		{"three annotators", evaluator.Criterion{AnnotatorColumns: cols}, map[string]*float64{"a1": f(1), "a2": f(2), "a3": f(4)}, f(7.0 / 3)},
		{"one empty", evaluator.Criterion{AnnotatorColumns: cols}, map[string]*float64{"a1": f(1), "a2": nil, "a3": f(4)}, f(2.5)},
		{"one not a number", evaluator.Criterion{AnnotatorColumns: cols}, map[string]*float64{"a1": f(math.NaN()), "a3": f(3)}, f(3)},
		{"none rated", evaluator.Criterion{AnnotatorColumns: cols}, map[string]*float64{"a1": nil, "other": f(5)}, nil},
		{"a zero rating counts", evaluator.Criterion{AnnotatorColumns: cols}, map[string]*float64{"a1": f(0), "a2": f(2)}, f(1)},
		{"the human column wins", evaluator.Criterion{HumanColumn: "h", AnnotatorColumns: cols}, map[string]*float64{"h": f(5), "a1": f(1)}, f(5)},
		{"no columns", evaluator.Criterion{}, map[string]*float64{"a1": f(1)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			row := DatasetRow{ID: 1, Ratings: tc.ratings}
			got := HumanOf(row, tc.crit)
			if (got == nil) != (tc.want == nil) || (got != nil && math.Abs(*got-*tc.want) > 1e-12) {
				t.Fatalf("HumanOf = %v, want %v", deref(got), deref(tc.want))
			}
			before := len(tc.ratings)
			rows, crit := WithAnnotatorMean([]DatasetRow{row}, tc.crit)
			if len(tc.ratings) != before {
				t.Error("WithAnnotatorMean changed the rows it was given")
			}
			if tc.crit.HumanColumn == "" && len(tc.crit.AnnotatorColumns) > 0 {
				if crit.HumanColumn != "mean of a1, a2, a3" {
					t.Errorf("human column %q", crit.HumanColumn)
				}
				if m := rows[0].Ratings[crit.HumanColumn]; (m == nil) != (tc.want == nil) || (m != nil && math.Abs(*m-*tc.want) > 1e-12) {
					t.Errorf("stored mean %v, want %v", deref(m), deref(tc.want))
				}
			} else if crit.HumanColumn != tc.crit.HumanColumn {
				t.Errorf("human column changed to %q", crit.HumanColumn)
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
