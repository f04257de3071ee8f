package models

import (
	"slices"
	"strings"
	"testing"
)

// TestAppendInt64List: a batch's stored row ids are read into the shared
// array as JSON reads them, whatever the spacing; what is not a list of
// integers is refused with a message that quotes it, and leaves the
// array as it was.
func TestAppendInt64List(t *testing.T) {
	for _, tc := range []struct {
		raw     string
		want    []int64
		problem string
	}{
		{raw: "[1,2,3]", want: []int64{1, 2, 3}},
		{raw: "[ 10, 20 ,30 ]", want: []int64{10, 20, 30}},
		{raw: "[\n 7\n]", want: []int64{7}},
		{raw: "[]", want: nil},
		{raw: "[ ]", want: nil},
		{raw: "null", want: nil},
		{raw: "", want: nil},
		{raw: "[-4,9223372036854775807]", want: []int64{-4, 9223372036854775807}},
		{raw: "[1.0]", want: nil, problem: "not a list of integers"},
		{raw: "[1,,2]", problem: "not a list of integers"},
		{raw: `["1"]`, problem: "not a list of integers"},
		{raw: "[1,2", problem: "not a list of integers"},
		{raw: "[99999999999999999999]", problem: "not a list of integers"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			prefix := []int64{42}
			got, err := appendInt64List(slices.Clone(prefix), []byte(tc.raw))
			if tc.problem != "" {
				if err == nil || !strings.Contains(err.Error(), tc.problem) {
					t.Fatalf("%q: error %v, want one saying %q", tc.raw, err, tc.problem)
				}
				if !slices.Equal(got, prefix) {
					t.Fatalf("%q refused, but the array became %v", tc.raw, got)
				}
				return
			}
			if err != nil || !slices.Equal(got, append(prefix, tc.want...)) {
				t.Fatalf("%q: %v, %v; want %v", tc.raw, got, err, append(prefix, tc.want...))
			}
		})
	}
}
