package report

import (
	"math"
	"strings"
	"testing"
)

// TestHumanScaleAgreesAcrossErrors: the position table, the ensemble
// decomposition and the samples' differences put human ratings on the
// judge's scale the same way, and say which. Ratings within the
// criterion's 1 to 3 are taken as given (before, the position table and
// the differences stretched their lowest and highest values onto 1 to 3,
// so one extreme rating moved every error); ratings outside it are mapped
// from their lowest and highest values, for the decomposition too
// (before, it subtracted them raw). Expected figures worked out by hand
// from fixture's scores (a: 1.0, 1.4 at position 1; b: 1.5 at 2; c: 2.5
// at 1, then 2.9 at 2; d: none):
//
//	as given, a..d = 1.5, 2, 2.5, 3: position 1 errors -0.5, -0.1, 0;
//	position 2 -0.5, +0.4; per sample (ensemble, round error, variance)
//	a (0.09, 0.13, 0.04), b (0.25, 0.25, 0), c (0.04, 0.08, 0.04)
//	mapped, 0 1 3 4 -> 1, 1.5, 2.5, 3: position 1 errors 0, +0.4, 0;
//	position 2 0, +0.4; a (0.04, 0.08, 0.04), b (0, 0, 0), c as above
func TestHumanScaleAgreesAcrossErrors(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		humans                [4]float64
		note                  string
		pos1Abs, pos1Signed   float64
		pos2Abs, pos2Signed   float64
		ensemble, round, vari float64
		diffs                 [3]float64 // |final - human| of a, b, c
	}{
		{"within the judge's range: as given", [4]float64{1.5, 2, 2.5, 3}, "compare the human ratings as given",
			0.6 / 3, -0.6 / 3, 0.9 / 2, -0.1 / 2, 0.38 / 3, 0.46 / 3, 0.08 / 3, [3]float64{0.3, 0.5, 0.2}},
		{"outside it: mapped from the lowest and highest", [4]float64{0, 1, 3, 4}, "mapped linearly from their lowest and highest values onto it (0 becomes 1, 4 becomes 3)",
			0.4 / 3, 0.4 / 3, 0.4 / 2, 0.4 / 2, 0.08 / 3, 0.16 / 3, 0.08 / 3, [3]float64{0.2, 0, 0.2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, ds, rows, batches, scores := fixture()
			for i := range rows {
				rows[i].Ratings["h"] = f(tc.humans[i])
			}
			r := Compute(run, ds, rows, batches, scores)
			c := r.Criteria[0]
			near := func(what string, got, want float64) {
				t.Helper()
				if math.Abs(got-want) > 1e-12 {
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			if len(c.Positions) != 2 {
				t.Fatalf("positions %+v, want 2", c.Positions)
			}
			near("position 1 mean |error|", c.Positions[0].MeanAbsErr, tc.pos1Abs)
			near("position 1 mean signed error", c.Positions[0].MeanSignedErr, tc.pos1Signed)
			near("position 2 mean |error|", c.Positions[1].MeanAbsErr, tc.pos2Abs)
			near("position 2 mean signed error", c.Positions[1].MeanSignedErr, tc.pos2Signed)
			near("ensemble error", c.Decomposition.EnsembleErr, tc.ensemble)
			near("mean round error", c.Decomposition.MeanRoundErr, tc.round)
			near("mean variance", c.Decomposition.MeanVariance, tc.vari)
			for i, want := range tc.diffs {
				if d := c.Samples[i].AbsDiff; d == nil {
					t.Errorf("sample %d: no difference", i)
				} else {
					near("difference of "+c.Samples[i].ExternalID, *d, want)
				}
			}
			if !strings.Contains(c.HumanScaleNote, tc.note) {
				t.Errorf("human scale note %q lacks %q", c.HumanScaleNote, tc.note)
			}
			if !strings.Contains(c.DecompositionNote, c.HumanScaleNote) {
				t.Errorf("decomposition note %q does not say how the ratings were put on the scale (%q)", c.DecompositionNote, c.HumanScaleNote)
			}
			_, doc := exportJSON(t, r)
			crit := doc.(map[string]any)["report"].(map[string]any)["criteria"].([]any)[0].(map[string]any)
			if got := crit["human_scale_note"]; got != c.HumanScaleNote {
				t.Errorf("JSON human_scale_note = %v, want %q", got, c.HumanScaleNote)
			}
		})
	}
}
