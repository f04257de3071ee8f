package evaluator

import (
	"math"
	"strings"
	"testing"
)

func TestValidateRefusesNonFiniteNumbers(t *testing.T) {
	crit := func(lo, hi float64) Rubric {
		return Rubric{Task: "t", Criteria: []Criterion{{Name: "Q", Lo: lo, Hi: hi}}}
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"hi=Inf", crit(1, math.Inf(1)).Validate(), "finite"},
		{"lo=NaN", crit(math.NaN(), 3).Validate(), "finite"},
		{"hi<=lo", crit(3, 3).Validate(), "empty"},
		{"temperature NaN", func() error { s := DefaultSettings(); s.Temperature = math.NaN(); return s.Validate() }(), "temperature"},
		{"top_p NaN", func() error { s := DefaultSettings(); s.TopP = math.NaN(); return s.Validate() }(), "top_p"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, tc.err, tc.want)
		}
	}
	if err := crit(1, 3).Validate(); err != nil {
		t.Errorf("a good rubric is refused: %v", err)
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Errorf("the default settings are refused: %v", err)
	}
}

// A labelled example is shown to the judge as "scored X" on its criterion's
// scale: a rubric (from the API, a rubric file or the command line) whose
// example is off that scale, has nothing to read, or whose criterion has
// too many is refused with the criterion and the example named.
func TestValidateRefusesBadExamples(t *testing.T) {
	ex := func(score float64) Example {
		return Example{SampleID: "s1", Fields: []Text{{Label: "Reply", Value: "hi"}}, Score: score}
	}
	rubric := func(lo, hi float64, examples ...Example) Rubric {
		return Rubric{Task: "t", Criteria: []Criterion{{Name: "Helpful", Lo: lo, Hi: hi, Examples: examples}}}
	}
	many := make([]Example, MaxExamples+1)
	for i := range many {
		many[i] = ex(3)
	}
	for _, tc := range []struct {
		name string
		r    Rubric
		want string // "" when the rubric is fine
	}{
		{"in range", rubric(1, 5, ex(1), ex(5), ex(2.5)), ""},
		{"negative scale", rubric(-2, 2, ex(-2)), ""},
		{"above the range", rubric(1, 5, ex(3), ex(9)), `criterion "Helpful", example 2: the score 9 is outside the criterion's range [1, 5]`},
		{"below the range", rubric(0, 1, ex(-0.5)), `example 1: the score -0.5 is outside the criterion's range [0, 1]`},
		{"NaN", rubric(1, 5, ex(math.NaN())), "outside the criterion's range"},
		{"no fields", rubric(1, 5, Example{SampleID: "s1", Score: 3}), `criterion "Helpful", example 1 has no fields`},
		{"too many", rubric(1, 5, many...), `has 9 labelled examples; at most 8`},
	} {
		err := tc.r.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}

// TestValidateRefusesAbsurdScales: a scale is refused, for every way a
// rubric arrives (the editor, the API, a rubric file), when an end lies
// beyond ±1,000,000 or the ends are more than 1,000,000 apart (QA: 0 to
// 1e308 was accepted); up to the limits it is taken.
func TestValidateRefusesAbsurdScales(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lo, hi float64
		want   string // "" when accepted
	}{
		{"0 to 1e308", 0, 1e308, "between -1,000,000 and 1,000,000"},
		{"-2e6 to 0", -2e6, 0, "between -1,000,000 and 1,000,000"},
		{"-1e6 to 1e6", -1e6, 1e6, "at most 1,000,000 apart"},
		{"0 to 1e6", 0, 1e6, ""},
		{"-500000 to 500000", -5e5, 5e5, ""},
		{"1 to 5", 1, 5, ""},
	} {
		err := Rubric{Task: "t", Criteria: []Criterion{{Name: "Q", Lo: tc.lo, Hi: tc.hi}}}.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want it to say %q", tc.name, err, tc.want)
		}
	}
}
