package models

import (
	"fmt"
	"math"
	"testing"
)

// TestDecodeStoredRounds: the round scores as the report package stores
// them read back exactly, unreadable rounds as nil; a count that is not
// the run's or a value that is not a number is an error.
func TestDecodeStoredRounds(t *testing.T) {
	opt := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		enc  string
		n    int
		want []string // "nil" or the value's %v
		bad  bool
	}{
		{enc: "", n: 0, want: []string{}},
		{enc: "", n: 1, want: []string{"nil"}},
		{enc: "3", n: 1, want: []string{"3"}},
		{enc: "1.5,", n: 2, want: []string{"1.5", "nil"}},
		{enc: ",0.30000000000000004", n: 2, want: []string{"nil", "0.30000000000000004"}},
		{enc: ",,", n: 3, want: []string{"nil", "nil", "nil"}},
		{enc: "-2.25,1e-07,4", n: 3, want: []string{"-2.25", "1e-07", "4"}},
		{enc: "1,2", n: 1, bad: true},
		{enc: "1", n: 2, bad: true},
		{enc: "1,x", n: 2, bad: true},
	} {
		dst := make([]*float64, tc.n)
		err := decodeStoredRounds(tc.enc, dst, opt)
		if tc.bad {
			if err == nil {
				t.Errorf("%q (%d rounds): no error", tc.enc, tc.n)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q (%d rounds): %v", tc.enc, tc.n, err)
			continue
		}
		for i, p := range dst {
			got := "nil"
			if p != nil {
				got = fmt.Sprint(*p)
				if math.IsNaN(*p) {
					got = "NaN"
				}
			}
			if got != tc.want[i] {
				t.Errorf("%q round %d: %s, want %s", tc.enc, i, got, tc.want[i])
			}
		}
	}
}
