package handlers

import (
	"strconv"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestUnitDifference: a compared row's A − B on 0 to 1 is the exact
// decimal difference of the two unit scores as the API writes them, with
// the float nearest it beside. The old float subtraction gave
// 0.19999999999999996 for 0.6 − 0.4 (2.2 and 1.8 on 1 to 3) and 1.1e-16,
// not 0, for two scores that are the same decimal.
func TestUnitDifference(t *testing.T) {
	oneToThree := evaluator.Criterion{Lo: 1, Hi: 3}
	oneToFive := evaluator.Criterion{Lo: 1, Hi: 5}
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name       string
		a, b       *float64
		ca, cb     evaluator.Criterion
		wantText   string
		wantFloat  float64
		wantAbsent bool
	}{
		{"noise of the division", f(2.2), f(1.8), oneToThree, oneToThree, "0.2", 0.2, false},
		{"a mean's noise", f(2.0000000000000004), f(2.0), oneToThree, oneToThree, "0", 0, false},
		{"negative", f(1.8), f(2.2), oneToThree, oneToThree, "-0.2", -0.2, false},
		{"half of the page's last digit", f(1.5), f(1.5), oneToThree, oneToFive, "0.125", 0.125, false},
		{"a third keeps its digits", f(2.3333333333333335), f(2), oneToThree, oneToThree, "0.1666666666666667", 0.1666666666666667, false},
		{"missing A", nil, f(2), oneToThree, oneToThree, "", 0, true},
		{"missing B", f(2), nil, oneToThree, oneToThree, "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, text := unitDifference(unit(tt.a, tt.ca), unit(tt.b, tt.cb))
			if tt.wantAbsent {
				if d != nil || text != "" {
					t.Fatalf("got %v %q, want no difference", d, text)
				}
				return
			}
			if d == nil || *d != tt.wantFloat || text != tt.wantText {
				got := "nil"
				if d != nil {
					got = strconv.FormatFloat(*d, 'g', -1, 64)
				}
				t.Errorf("got %s %q, want %s %q", got, text, strconv.FormatFloat(tt.wantFloat, 'g', -1, 64), tt.wantText)
			}
		})
	}
}
