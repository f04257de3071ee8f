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
