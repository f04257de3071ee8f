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

// TestAnnotatorMeanBesideARealColumnOfItsName: a dataset's own rating
// column named "mean of a1, a2, a3" keeps its ratings when a criterion's
// annotators' mean is computed (it was overwritten by the computed mean,
// which a criterion naming the real column then read), and the computed
// mean takes a name of its own, "mean of a1, a2, a3 (computed)", that
// IsAnnotatorMeanKey tells from the real column's. Applying criteria in
// turn with the rows' own keys (WithAnnotatorMeanAmong) keeps every
// criterion's key as it would be alone.
func TestAnnotatorMeanBesideARealColumnOfItsName(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	cols := []string{"a1", "a2", "a3"}
	const base = "mean of a1, a2, a3"
	for _, tc := range []struct {
		name    string
		ratings map[string]*float64
		key     string   // the computed mean's key
		real    *float64 // the real column's rating after, nil when none
	}{
		{"no real column", map[string]*float64{"a1": f(1), "a2": f(2), "a3": f(2)}, base, nil},
		{"a real column", map[string]*float64{"a1": f(1), "a2": f(2), "a3": f(2), base: f(1)}, base + " (computed)", f(1)},
		{"a real column, empty", map[string]*float64{"a1": f(1), "a2": f(2), "a3": f(2), base: nil}, base + " (computed)", nil},
		{"two real columns", map[string]*float64{"a1": f(1), "a2": f(2), "a3": f(2), base: f(1), base + " (computed)": f(0)}, base + " (computed 2)", f(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := []DatasetRow{{ID: 1, Ratings: tc.ratings}}
			var ratingCols []string
			for k := range tc.ratings {
				ratingCols = append(ratingCols, k)
			}
			crit := evaluator.Criterion{Name: "A", AnnotatorColumns: cols}
			real := evaluator.Criterion{Name: "B", HumanColumn: base}
			taken := RatingKeysOf(rows)
			out, a := WithAnnotatorMeanAmong(rows, crit, taken)
			out, b := WithAnnotatorMeanAmong(out, real, taken)
			if a.HumanColumn != tc.key {
				t.Errorf("computed mean's key %q, want %q", a.HumanColumn, tc.key)
			}
			if m := out[0].Ratings[a.HumanColumn]; m == nil || math.Abs(*m-5.0/3) > 1e-12 {
				t.Errorf("computed mean %v, want 5/3", deref(m))
			}
			if _, had := tc.ratings[base]; had {
				if got := HumanOf(out[0], b); deref(got) != deref(tc.real) {
					t.Errorf("the real column's rating %v, want %v", deref(got), deref(tc.real))
				}
			}
			if !IsAnnotatorMeanKey(a.HumanColumn, cols, ratingCols) {
				t.Errorf("IsAnnotatorMeanKey(%q) = false", a.HumanColumn)
			}
			if _, had := tc.ratings[base]; had && IsAnnotatorMeanKey(base, cols, ratingCols) {
				t.Errorf("the real column %q is taken for the computed mean", base)
			}
			// The same criterion again (a second criterion over the
			// same annotators) keeps the key.
			if _, again := WithAnnotatorMeanAmong(out, crit, taken); again.HumanColumn != tc.key {
				t.Errorf("again: key %q, want %q", again.HumanColumn, tc.key)
			}
		})
	}
}
